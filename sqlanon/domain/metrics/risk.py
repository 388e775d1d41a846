"""Re-identification risk of the released classes (El Emam's attacker models, ARX's definitions).

Suppressed records are not released, so they carry no risk: as in ARX's RiskModelHistogram, the
prosecutor, journalist and marketer figures and ``sample_uniques`` describe the released table: they
run over the U = n − S released records, and a node without any released record has risk 0. Only
``record_linkage`` is named for another population, the intruder's n original records (a suppressed
one is never linked). When the node is not anonymous nothing is suppressed and every class counts.

El Emam & Dankar, Protecting privacy using k-anonymity, JAMIA 15(5), 2008;
El Emam, Guide to the de-identification of personal health information, CRC 2013 (prosecutor,
journalist and marketer risk).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from sqlglot import exp

from sqlanon.domain.metrics.base import Metric, MetricContext, register
from sqlanon.domain.models.base import KEEP, SIZE
from sqlanon.domain.models.population import population_class_sizes
from sqlanon.errors import SpecError
from sqlanon.sql.nodes import alias, col, count_star, div, internal, lit, nullsafe_join, table

_F = internal("f")


@dataclass(frozen=True)
class ClassHistogram:
    """Released classes by size, ``{size: number of classes}``."""

    kept: dict[int, int]

    @property
    def records(self) -> int:
        return sum(size * count for size, count in self.kept.items())

    @property
    def classes(self) -> int:
        return sum(self.kept.values())


def histogram(ctx: MetricContext) -> ClassHistogram:
    def query(where: exp.Expression) -> dict[int, int]:
        q = exp.select(col(SIZE), alias(count_star(), "c")).from_(ctx.node.verdict.copy()) \
            .where(where).group_by(col(SIZE))
        return {int(s): int(c) for s, c in ctx.engine.fetch(q)[1]}

    return ctx.memo("risk.histogram", lambda: ClassHistogram(query(ctx.kept())))


class RiskMetric(Metric):
    kind: ClassVar[str] = "risk"
    monotonic_with_generalization: ClassVar[bool] = False
    counts_released: ClassVar[bool] = True


@register
class ProsecutorRiskAverage(RiskMetric):
    """Average prosecutor risk: mean of 1/|E| over released records = #classes / U (1 / mean class size)."""

    name: ClassVar[str] = "prosecutor_risk_avg"

    def compute(self, ctx: MetricContext) -> float:
        h = histogram(ctx)
        return 1.0 / (h.records / h.classes) if h.records else 0.0


@register
class ProsecutorRiskMax(RiskMetric):
    """Highest prosecutor risk: 1 / the smallest released class."""

    name: ClassVar[str] = "prosecutor_risk_max"

    def compute(self, ctx: MetricContext) -> float:
        h = histogram(ctx)
        return 1.0 / min(h.kept) if h.kept else 0.0


@register
class ProsecutorRecordsAtMax(RiskMetric):
    """Share of released records at the highest prosecutor risk (in the smallest classes)."""

    name: ClassVar[str] = "prosecutor_records_at_max"

    def compute(self, ctx: MetricContext) -> float:
        h = histogram(ctx)
        if not h.kept:
            return 0.0
        smallest = min(h.kept)
        return float(smallest) * float(h.kept[smallest]) / h.records


@register
class MarketerRisk(RiskMetric):
    """Marketer risk in the prosecutor scenario: expected share of records re-identified, #classes / U."""

    name: ClassVar[str] = "marketer_risk"

    def compute(self, ctx: MetricContext) -> float:
        h = histogram(ctx)
        return 1.0 / (h.records / h.classes) if h.records else 0.0


@register
class SampleUniques(RiskMetric):
    """Share of the released records that are alone in their class (after suppression)."""

    name: ClassVar[str] = "sample_uniques"

    def compute(self, ctx: MetricContext) -> float:
        h = histogram(ctx)
        return h.kept.get(1, 0) / h.records if h.records else 0.0


@register
class RecordLinkage(RiskMetric):
    """Expected exact-match record-linkage rate: Σ over released records of 1/|E|, divided by n.

    An intruder holding the n original records links each one to a released record with the same
    generalized QI values, chosen uniformly among the |E| candidates; the link is correct with
    probability 1/|E| (exactly one candidate: a certain link). Suppressed records cannot be linked.
    The rate is #released classes / n. Domingo-Ferrer & Torra, Disclosure risk assessment in
    statistical microdata protection via advanced record linkage, Statistics and Computing 13, 2003.
    """

    name: ClassVar[str] = "record_linkage"
    counts_released: ClassVar[bool] = False  # a share of the intruder's n original records

    def compute(self, ctx: MetricContext) -> float:
        return histogram(ctx).classes / ctx.n


def population_relation(ctx: MetricContext) -> exp.Expression | None:
    """The ``population`` option: a relation name or a sqlglot relation; None when absent."""
    pop = ctx.options.get("population")
    if pop is None or isinstance(pop, exp.Expression):
        return pop
    if not isinstance(pop, str) or not pop:
        raise SpecError(f"population must be a table name, got {pop!r}", path="metrics.options.population")
    if not ctx.engine.relation_exists(pop):
        raise SpecError(f"no table or view named {pop!r} in the database",
                        path="metrics.options.population")
    return table(pop)


def journalist(ctx: MetricContext) -> tuple[float, float]:
    """(average, highest) journalist risk: 1/F_E per released record, F_E the population class size.

    The sample is the checked table and the population a superset given as option ``population``
    (ARX's research-subset setting). Without a population the sample is its own population and the
    journalist risks equal the prosecutor risks.
    """
    pop = population_relation(ctx)
    if pop is None:
        return ProsecutorRiskAverage().compute(ctx), ProsecutorRiskMax().compute(ctx)
    ev, qis = ctx.evaluator, ctx.qis
    sizes = population_class_sizes(ev.generalizer, pop, ctx.node.levels, qis, _F)
    joined = exp.select(alias(col(SIZE, "v"), SIZE), alias(col(_F, "p"), _F)) \
        .from_(exp.alias_(ctx.node.verdict.copy(), "v", table=True, quoted=True)) \
        .join(exp.alias_(exp.Subquery(this=sizes), "p", quoted=True), on=nullsafe_join("v", "p", qis),
              join_type="left")
    if ctx.node.anonymous:
        joined = joined.where(col(KEEP, "v"))
    size, f = col(SIZE), col(_F)
    bad = exp.or_(exp.Is(this=f.copy(), expression=exp.Null()), exp.LT(this=f.copy(), expression=size.copy()))
    row = ctx.engine.fetch(exp.select(
        alias(exp.Sum(this=div(size.copy(), f.copy())), "s"), alias(exp.Min(this=f.copy()), "m"),
        alias(exp.Sum(this=exp.Case().when(bad, lit(1)).else_(lit(0))), "bad"),
        alias(exp.Sum(this=size.copy()), "u"),
    ).from_(exp.alias_(exp.Subquery(this=joined), internal("j"))))[1][0]
    total, smallest, bad_classes, released = row
    if bad_classes:
        raise SpecError(f"the population does not contain the sample: {bad_classes} released class(es) "
                        "have fewer records in the population than in the table",
                        path="metrics.options.population")
    if not released:
        return 0.0, 0.0
    return float(total) / int(released), 1.0 / int(smallest)


@register
class JournalistRiskAverage(RiskMetric):
    """Average journalist risk: mean of 1/F_E over released records (the marketer risk of that scenario)."""

    name: ClassVar[str] = "journalist_risk_avg"
    options: ClassVar[tuple[str, ...]] = ("population",)

    def compute(self, ctx: MetricContext) -> float:
        return ctx.memo("risk.journalist", lambda: journalist(ctx))[0]


@register
class JournalistRiskMax(RiskMetric):
    """Highest journalist risk: 1 / the smallest population class matching a released class."""

    name: ClassVar[str] = "journalist_risk_max"
    options: ClassVar[tuple[str, ...]] = ("population",)

    def compute(self, ctx: MetricContext) -> float:
        return ctx.memo("risk.journalist", lambda: journalist(ctx))[1]
