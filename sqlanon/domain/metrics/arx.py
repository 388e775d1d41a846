"""ARX's quality models with its exact definitions (Loss, precision, height, DM, DM*, AECS).

They count the rows of :attr:`~sqlanon.domain.metrics.base.MetricContext.population`: the table, or with
δ-presence the research subset, as ARX does.
"""

from __future__ import annotations

from typing import ClassVar

from sqlanon.domain.metrics.base import Metric, MetricContext, register, trunc10


def per_attribute_loss(ctx: MetricContext) -> list[float]:
    """loss_i = trunc(max(0, (A_i − n/|D_i|) / (n − n/|D_i|))), A_i = Σ_K |E|·share + S (ARX), over the
    rows of :attr:`MetricContext.population`."""
    n, s = ctx.population.rows, ctx.population.suppressed
    out = []
    for attribute in ctx.qis:
        table = ctx.hierarchy_table(attribute)
        level = ctx.node.levels[attribute]
        d = table.domain_size
        # Σ |E| · (rows of the file with this label): an exact integer, divided by |D| once
        weighted = sum(size * table.label_count(label, level)
                       for label, size in ctx.kept_sizes_by_label(attribute).items())
        a = weighted / d + s
        m = n / d
        out.append(trunc10(max(0.0, (a - m) / (n - m))) if n != m else 0.0)
    return out


@register
class Loss(Metric):
    """ARX's Loss with the geometric mean over attributes: Π(loss_i + 1)^(1/d) − 1."""

    name: ClassVar[str] = "loss"
    counts_population: ClassVar[bool] = True

    def compute(self, ctx: MetricContext) -> float:
        losses = per_attribute_loss(ctx)
        d = len(losses)
        result = 1.0
        for loss, w in zip(losses, ctx.weight_factors()):
            result *= pow(loss * w + 1.0, 1.0 / d)
        return result - 1.0


@register
class LossArithmetic(Metric):
    """ARX's Loss with the arithmetic mean over attributes: Σ loss_i / d."""

    name: ClassVar[str] = "loss_arithmetic"
    counts_population: ClassVar[bool] = True

    def compute(self, ctx: MetricContext) -> float:
        losses = per_attribute_loss(ctx)
        d = len(losses)
        total = 0.0
        for loss, w in zip(losses, ctx.weight_factors()):
            total += loss * w / d
        return total


@register
class Precision(Metric):
    """ARX's precision: mean over attributes of (U·L_i/h_i + S)/n, suppressed rows counted as fully
    generalized (``createPrecisionMetric()``, MetricMDNMPrecision). The monotonic variant
    (``createPrecisionMetric(true)``, MetricMDPrecision) is the mean of L_i/h_i: suppression is free."""

    name: ClassVar[str] = "precision"
    counts_population: ClassVar[bool] = True
    options: ClassVar[tuple[str, ...]] = ("monotonic",)
    variants: ClassVar[tuple[str, str] | None] = ("non-monotonic precision", "monotonic precision")

    def compute(self, ctx: MetricContext) -> float:
        n, s = ctx.population.rows, 0 if self.monotonic else ctx.population.suppressed
        if n == 0:  # an empty research subset: nothing is released, nothing lost
            return 0.0
        u = n - s
        d = len(ctx.qis)
        total = 0.0
        for attribute, w in zip(ctx.qis, ctx.weight_factors()):
            h = ctx.evaluator.p.hierarchies[attribute].height
            level = ctx.node.levels[attribute]
            ratio = level / h if h else 0.0
            total += w * (u * ratio + s) / n / d
        return total


@register
class Height(Metric):
    """Σ L_i: the node's height in the lattice (independent of the data)."""

    name: ClassVar[str] = "height"
    counts_population: ClassVar[bool] = True
    monotonic_with_suppression: ClassVar[bool] = True

    def compute(self, ctx: MetricContext) -> float:
        return float(sum(w * ctx.node.levels[a] for a, w in zip(ctx.qis, ctx.weight_factors())))


@register
class Discernibility(Metric):
    """ARX's DM: Σ_K |E|² + n·S, each suppressed row charged n (``createDiscernabilityMetric()``,
    "non-monotonic discernability"). The monotonic variant is DM*, Σ|E|² over all classes
    (``createDiscernabilityMetric(true)``), also available as ``discernibility_star``."""

    name: ClassVar[str] = "discernibility"
    counts_population: ClassVar[bool] = True
    options: ClassVar[tuple[str, ...]] = ("monotonic",)
    variants: ClassVar[tuple[str, str] | None] = ("DM", "DM*")

    def compute(self, ctx: MetricContext) -> float:
        pop = ctx.population
        if pop.suppressed and not self.monotonic:
            return float(pop.dm_kept + pop.rows * pop.suppressed)
        return float(pop.dm_star)


@register
class DiscernibilityStar(Metric):
    """ARX's DM*: Σ|E|² over all classes, ignoring suppression (monotonic)."""

    name: ClassVar[str] = "discernibility_star"
    counts_population: ClassVar[bool] = True
    monotonic_with_suppression: ClassVar[bool] = True

    def compute(self, ctx: MetricContext) -> float:
        return float(ctx.population.dm_star)


@register
class AECS(Metric):
    """Average equivalence class size n / (|K| + 1 if anything is suppressed)."""

    name: ClassVar[str] = "aecs"
    counts_population: ClassVar[bool] = True

    def compute(self, ctx: MetricContext) -> float:
        pop = ctx.population
        if pop.rows == 0:  # an empty research subset
            return 0.0
        return pop.rows / (pop.classes + (1 if pop.suppressed > 0 else 0))
