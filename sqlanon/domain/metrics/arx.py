"""ARX's quality models with its exact definitions (Loss, precision, height, DM, DM*, AECS).

They count the rows of :attr:`~sqlanon.domain.metrics.base.MetricContext.population`: the table, or with
δ-presence the research subset, as ARX does. Each has its in-memory form beside its SQL form, summing
the same terms in the same order, so that both give the same doubles.
"""

from __future__ import annotations

import abc
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from sqlanon.domain.metrics.base import Metric, MetricContext, register, trunc10
from sqlanon.domain.metrics.memory import MemoryNode, MemoryTable, add_terms

if TYPE_CHECKING:
    import numpy as np


def per_attribute_loss(ctx: MetricContext, factors: GsFactors | None = None) -> list[float]:
    """loss_i = trunc(max(0, (A_i − g·n/|D_i|) / (n − g·n/|D_i|))), A_i = g·Σ_K |E|·share + S (ARX), over
    the rows of :attr:`MetricContext.population`; ``factors`` weigh generalization (g) against
    suppression (ARX's gs-factor, :class:`GsFactors`; by default both count 1)."""
    f = factors or GsFactors.of(DEFAULT_GS_FACTOR)
    n, s = ctx.population.rows, ctx.population.suppressed
    out = []
    for attribute in ctx.qis:
        table = ctx.hierarchy_table(attribute)
        level = ctx.node.levels[attribute]
        d = table.domain_size
        # Σ |E| · (rows of the file with this label): an exact integer, divided by |D| once
        weighted = sum(size * table.label_count(label, level)
                       for label, size in ctx.kept_sizes_by_label(attribute).items())
        suppressed_weighted = 0
        if s and f.suppression != 1.0:
            suppressed_weighted = sum(size * table.label_count(label, level)
                                      for label, size in ctx.suppressed_sizes_by_label(attribute).items())
        out.append(f.loss(n, d, weighted, s, suppressed_weighted))
    return out


DEFAULT_GS_FACTOR = 0.5
"""ARX's default gs-factor: generalization and suppression weigh the same (both factors 1)."""


@dataclass(frozen=True)
class GsFactors:
    """ARX's generalization/suppression factor (MetricMDNMLoss): gs in [0, 1] gives a generalization
    factor g = 1 for gs ≤ 0.5, else 1 − 2(gs − 0.5), and a suppression factor s = 2·gs for gs < 0.5,
    else 1. A kept class charges g times its share; a suppressed one its rows (s = 1), else its share
    plus s times the rest; the bottom of the scale is g·n/|D|."""

    gs: float
    generalization: float
    suppression: float

    @classmethod
    def of(cls, gs: float) -> GsFactors:
        return cls(gs, 1.0 if gs <= 0.5 else 1.0 - 2.0 * (gs - 0.5), 2.0 * gs if gs < 0.5 else 1.0)

    def loss(self, n: int, d: int, weighted: int, suppressed: int, suppressed_weighted: int = 0) -> float:
        """One attribute's loss from Σ rows' label leaves of the kept (``weighted``) and suppressed
        (``suppressed_weighted``) classes and the suppressed rows."""
        g = self.generalization
        a = weighted / d * g if g != 1.0 else weighted / d
        if self.suppression == 1.0:
            a += suppressed
        else:
            share = suppressed_weighted / d
            a += share + self.suppression * (suppressed - share)
        m = g * n / d if g != 1.0 else n / d
        return trunc10(max(0.0, (a - m) / (n - m))) if n != m else 0.0


def attribute_loss(table: MemoryTable, i: int, weighted: int, suppressed: int,
                   factors: GsFactors | None = None, suppressed_weighted: int = 0) -> float:
    """In memory, ARX's loss of attribute ``i``: Σ rows' label leaves (``weighted``) plus
    ``suppressed`` rows counted whole, normalized between the bottom and the top."""
    return (factors or GsFactors.of(DEFAULT_GS_FACTOR)).loss(table.n, table.domain[i], weighted, suppressed,
                                                             suppressed_weighted)


def losses_in_memory(node: MemoryNode, suppressed: int, factors: GsFactors | None = None) -> list[float]:
    """:func:`per_attribute_loss` in memory, with ``suppressed`` rows charged (0: none)."""
    import numpy as np

    t = node.table
    sizes, rows = node.suppressed_members() if suppressed else (None, None)
    losses = []
    for i, level in enumerate(node.levels):
        weighted = t.weighted_all[i][level]
        gone = 0
        if sizes is not None and rows is not None:
            # Σ over suppressed classes of |E| · (file rows with E's label)
            gone = int(np.dot(sizes, leaves_of_rows(t, i, level, rows)))
            weighted -= gone
        losses.append(attribute_loss(t, i, weighted, suppressed, factors, gone))
    return losses


LEAVES_KEPT_BYTES = 64 * 2**20
"""Up to this size, a loaded table keeps the leaves under every frequency row's label, per attribute
and level, across node checks (Adult's 19,502 rows: 4 MB), which halves the time of a Loss with many
rows suppressed; on larger tables they took more memory than the rest of the loaded table (8 bytes a
row for each level), and each check gathers them for its suppressed rows."""


def leaves_of_rows(t: MemoryTable, i: int, level: int, rows: np.ndarray) -> np.ndarray:
    """For the frequency rows ``rows``, the hierarchy rows under their label of attribute ``i`` at
    ``level`` (int64)."""
    kept = t.memo(("leaves of rows", i, level), lambda: _kept_leaves(t, i, level))
    return kept[rows] if kept is not None else t.label_counts[i][level][t.codes[i][level][rows]]


def _kept_leaves(t: MemoryTable, i: int, level: int) -> np.ndarray | None:
    codes = t.codes[i][level]
    if 8 * len(codes) * sum(map(len, t.codes)) > LEAVES_KEPT_BYTES:
        return None
    return t.label_counts[i][level][codes]


class _AttributeLosses(Metric):
    """ARX's Loss family: each attribute's loss (:func:`per_attribute_loss`), combined over the
    attributes by :meth:`combine`; the SQL check and the in-memory search share the combination.

    ``gs_factor`` (metric option, ARX's gs-factor, 0.5 by default) weighs generalization against
    suppression (:class:`GsFactors`)."""

    counts_population: ClassVar[bool] = True
    bounded_by_unsuppressed: ClassVar[bool] = True
    options: ClassVar[tuple[str, ...]] = ("gs_factor",)

    def __init__(self, *, monotonic: bool = False, gs_factor: float = DEFAULT_GS_FACTOR) -> None:
        super().__init__(monotonic=monotonic)
        self.factors = GsFactors.of(float(gs_factor))

    @staticmethod
    @abc.abstractmethod
    def combine(losses: list[float], weights: list[float]) -> float:
        """The metric from each attribute's loss and weight factor."""

    def compute(self, ctx: MetricContext) -> float:
        return self.combine(per_attribute_loss(ctx, self.factors), ctx.weight_factors())

    def in_memory(self, node: MemoryNode) -> float:
        return self.combine(losses_in_memory(node, node.suppressed, self.factors), node.table.weights)

    def lower_bound_in_memory(self, node: MemoryNode) -> float:
        return self.combine(losses_in_memory(node, 0, self.factors), node.table.weights)

    def level_losses(self, table: MemoryTable, i: int, height: int) -> list[float]:
        """Attribute ``i``'s loss at each level with nothing suppressed (the prior bounds' terms)."""
        return [attribute_loss(table, i, table.weighted_all[i][lv], 0, self.factors)
                for lv in range(height + 1)]


@register
class Loss(_AttributeLosses):
    """ARX's Loss with the geometric mean over attributes: Π(loss_i + 1)^(1/d) − 1."""

    name: ClassVar[str] = "loss"

    @staticmethod
    def combine(losses: list[float], weights: list[float]) -> float:
        d = len(losses)
        result = 1.0
        for loss, w in zip(losses, weights):
            result *= pow(loss * w + 1.0, 1.0 / d)
        return result - 1.0

    def prior_bounds_in_memory(self, table: MemoryTable, levels: list[np.ndarray]) -> np.ndarray:
        import numpy as np

        d = len(table.qis)
        total = np.full(len(levels[0]) if levels else 1, 1.0)
        for i, (level, h) in enumerate(zip(levels, table.heights)):
            terms = [pow(loss * table.weights[i] + 1.0, 1.0 / d) for loss in self.level_losses(table, i, h)]
            total *= np.asarray(terms)[level]
        return total - 1.0


@register
class LossArithmetic(_AttributeLosses):
    """ARX's Loss with the arithmetic mean over attributes: Σ loss_i / d."""

    name: ClassVar[str] = "loss_arithmetic"

    @staticmethod
    def combine(losses: list[float], weights: list[float]) -> float:
        d = len(losses)
        total = 0.0
        for loss, w in zip(losses, weights):
            total += loss * w / d
        return total

    def prior_bounds_in_memory(self, table: MemoryTable, levels: list[np.ndarray]) -> np.ndarray:
        d = len(table.qis)
        return add_terms([[loss * table.weights[i] / d for loss in self.level_losses(table, i, h)]
                          for i, h in enumerate(table.heights)], levels)


@register
class Precision(Metric):
    """ARX's precision: mean over attributes of (U·L_i/h_i + S)/n, suppressed rows counted as fully
    generalized (``createPrecisionMetric()``, MetricMDNMPrecision). The monotonic variant
    (``createPrecisionMetric(true)``, MetricMDPrecision) is the mean of L_i/h_i: suppression is free."""

    name: ClassVar[str] = "precision"
    counts_population: ClassVar[bool] = True
    bounded_by_unsuppressed: ClassVar[bool] = True
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

    @staticmethod
    def _in_memory(node: MemoryNode, suppressed: int) -> float:
        t = node.table
        n = t.n
        u = n - suppressed
        d = len(node.levels)
        total = 0.0
        for level, h, w in zip(node.levels, t.heights, t.weights):
            ratio = level / h if h else 0.0
            total += w * (u * ratio + suppressed) / n / d
        return total

    def in_memory(self, node: MemoryNode) -> float:
        return self._in_memory(node, 0 if self.monotonic else node.suppressed)

    def lower_bound_in_memory(self, node: MemoryNode) -> float:
        return self._in_memory(node, 0)

    def prior_bounds_in_memory(self, table: MemoryTable, levels: list[np.ndarray]) -> np.ndarray:
        n, d = table.n, len(table.qis)
        return add_terms([[w * (n * (lv / h if h else 0.0)) / n / d for lv in range(h + 1)]
                          for h, w in zip(table.heights, table.weights)], levels)


@register
class Height(Metric):
    """Σ L_i: the node's height in the lattice (independent of the data)."""

    name: ClassVar[str] = "height"
    counts_population: ClassVar[bool] = True
    monotonic_with_suppression: ClassVar[bool] = True
    bounded_by_unsuppressed: ClassVar[bool] = True

    def compute(self, ctx: MetricContext) -> float:
        return float(sum(w * ctx.node.levels[a] for a, w in zip(ctx.qis, ctx.weight_factors())))

    def in_memory(self, node: MemoryNode) -> float:
        return float(sum(w * level for level, w in zip(node.levels, node.table.weights)))

    def prior_bounds_in_memory(self, table: MemoryTable, levels: list[np.ndarray]) -> np.ndarray:
        return add_terms([[float(w * lv) for lv in range(h + 1)]
                          for h, w in zip(table.heights, table.weights)], levels)


@register
class Discernibility(Metric):
    """ARX's DM: Σ_K |E|² + n·S, each suppressed row charged n (``createDiscernabilityMetric()``,
    "non-monotonic discernability"). The monotonic variant is DM*, Σ|E|² over all classes
    (``createDiscernabilityMetric(true)``), also available as ``discernibility_star``."""

    name: ClassVar[str] = "discernibility"
    counts_population: ClassVar[bool] = True
    options: ClassVar[tuple[str, ...]] = ("monotonic",)
    variants: ClassVar[tuple[str, str] | None] = ("DM", "DM*")
    bounded_by_unsuppressed: ClassVar[bool] = True

    def compute(self, ctx: MetricContext) -> float:
        pop = ctx.population
        if pop.suppressed and not self.monotonic:
            return float(pop.dm_kept + pop.rows * pop.suppressed)
        return float(pop.dm_star)

    def in_memory(self, node: MemoryNode) -> float:
        import numpy as np

        if node.suppressed and not self.monotonic:  # kept classes plus n per suppressed row
            kept = node.sizes[node.keep]
            return float(int(np.dot(kept, kept)) + node.table.n * node.suppressed)
        return dm_star_in_memory(node)

    def lower_bound_in_memory(self, node: MemoryNode) -> float:
        return dm_star_in_memory(node)


def dm_star_in_memory(node: MemoryNode) -> float:
    """Σ|E|² over all classes of the node."""
    import numpy as np

    return float(int(np.dot(node.sizes, node.sizes)))


@register
class DiscernibilityStar(Metric):
    """ARX's DM*: Σ|E|² over all classes, ignoring suppression (monotonic)."""

    name: ClassVar[str] = "discernibility_star"
    counts_population: ClassVar[bool] = True
    monotonic_with_suppression: ClassVar[bool] = True
    bounded_by_unsuppressed: ClassVar[bool] = True

    def compute(self, ctx: MetricContext) -> float:
        return float(ctx.population.dm_star)

    def in_memory(self, node: MemoryNode) -> float:
        return dm_star_in_memory(node)


@register
class AECS(Metric):
    """Average equivalence class size n / (|K| + 1 if anything is suppressed)."""

    name: ClassVar[str] = "aecs"
    counts_population: ClassVar[bool] = True
    bounded_by_unsuppressed: ClassVar[bool] = True

    def compute(self, ctx: MetricContext) -> float:
        pop = ctx.population
        if pop.rows == 0:  # an empty research subset
            return 0.0
        return pop.rows / (pop.classes + (1 if pop.suppressed > 0 else 0))

    def in_memory(self, node: MemoryNode) -> float:
        return node.table.n / (node.classes + (1 if node.suppressed > 0 else 0))

    def lower_bound_in_memory(self, node: MemoryNode) -> float:
        return node.table.n / len(node.sizes)
