"""A bound on the share of population uniques (ARX's ``PopulationUniqueness``).

The estimate (Dankar's rule by default, or Pitman, Zayatz or SNB: :mod:`sqlanon.domain.risk`) is
taken over the class-size histogram of the node under a population model (``population_size``, or
``sampling_fraction`` with N = round(n/f), n the table's rows). ARX accepts a release whose estimated
population-unique fraction is in (0, u], or 0 without any sample unique; an estimator that finds no
solution while sample uniques remain fails the bound.

Which classes are suppressed: ARX suppresses the smallest classes one at a time until the bound
holds. A privacy model here decides each class on its own, as for the average risk: a class of size
x is kept when the table with every class smaller than x suppressed meets the bound. Without its
classes of size 1 a table has no sample uniques and meets the bound, so only the size-1 classes can
fail: all of them when the node's estimate (over all of its classes, before any suppression)
exceeds u, none otherwise. ARX may keep some of them; it also leaves out the records that are
generalized to the top of every hierarchy, which are counted here.

The estimate is computed from the node's histogram in Python: the SQL form reads that histogram with
one query on the engine while the statement is built and writes the outcome into it as a literal
(so it needs a connection), the in-memory form takes it from the class sizes. Monotone as ARX
declares: under generalization only with Zayatz's estimator, never under suppression.

Dankar FK, El Emam K, Neisa A, Roffey T. Estimating the re-identification risk of clinical data
sets. BMC Med Inform Decis Mak 12:66, 2012.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from sqlglot import exp

from sqlanon.domain.models.base import (
    CheckContext,
    ClassTable,
    Monotonicity,
    N,
    PrivacyModel,
    Statistic,
    register,
)
from sqlanon.domain.models.t_closeness import require_number
from sqlanon.errors import SpecError, UnsupportedError
from sqlanon.sql.nodes import alias, as_double, col, count_star, internal, lit

if TYPE_CHECKING:
    import numpy as np

    from sqlanon.domain.risk.histogram import SizeHistogram

# the estimators (sqlanon.domain.risk) are imported where a spec uses this model: the models registry
# imports this module on every run

NO_ESTIMATE = 2.0
"""The statistic of a size-1 class when the estimator found no solution (fails every bound ≤ 1)."""

_SIZE, _CLASSES = internal("pu_size"), internal("pu_classes")


def uniques_share(sizes: SizeHistogram, rows: int, population: Any, sampling_fraction: Any,
                  estimator: str) -> float:
    """The estimated population-unique fraction of a node, :data:`NO_ESTIMATE` when none is found."""
    if sizes.classes_of_size(1) == 0:
        return 0.0
    from sqlanon.domain.risk.population import PopulationModel, estimate

    model = PopulationModel.of(rows, population=population, sampling_fraction=sampling_fraction)
    u = estimate(sizes, model.size, zayatz_fallback=False, only=estimator).of(estimator)
    return u.fraction if u.available else NO_ESTIMATE


@dataclass(frozen=True)
class UniquesShare(Statistic):
    """For a class of size 1 the node's estimated population-unique fraction, for larger classes 0
    (the table without its smaller classes has no sample uniques)."""

    population: Any
    sampling_fraction: Any
    estimator: str

    def class_query(self, ctx: CheckContext) -> exp.Select:
        if ctx.inputs is None:
            raise UnsupportedError("population_uniqueness estimates from the node's class sizes, which "
                                   "needs a connection: compile with a database instead of offline")
        qis = [col(q) for q in ctx.qis]
        classes = exp.select(*qis, alias(exp.Sum(this=col(N)), _SIZE)).from_(ctx.gen.copy()).group_by(
            *[q.copy() for q in qis])
        share = self._share(ctx, classes)
        size = col(_SIZE)
        value = exp.Case().when(exp.EQ(this=size, expression=lit(1)), as_double(lit(float(share)))) \
            .else_(as_double(lit(0.0)))
        return exp.select(*[q.copy() for q in qis], alias(value, self.column)).from_(
            exp.alias_(exp.Subquery(this=classes), internal("pu0"), quoted=True))

    def _share(self, ctx: CheckContext, classes: exp.Select) -> float:
        assert ctx.inputs is not None
        engine = ctx.inputs.engine
        query = exp.select(col(_SIZE), alias(count_star(), _CLASSES)).from_(
            exp.alias_(exp.Subquery(this=classes), internal("pu1"), quoted=True)).group_by(col(_SIZE))
        gen = ctx.gen.name
        if not engine.relation_exists(gen):  # a step of the statement being built, not a table yet
            query = ctx.plan.as_query(query)
        _, rows = engine.fetch(query)
        from sqlanon.domain.risk.histogram import SizeHistogram

        sizes = SizeHistogram.of({int(s): int(c) for s, c in rows})
        return uniques_share(sizes, sizes.records, self.population, self.sampling_fraction,
                             self.estimator)

    def in_memory(self, classes: ClassTable) -> np.ndarray:
        import numpy as np

        from sqlanon.domain.risk.histogram import SizeHistogram

        sizes = classes.sizes
        share = uniques_share(SizeHistogram.of_class_sizes(sizes), int(classes.n), self.population,
                              self.sampling_fraction, self.estimator)
        return np.where(sizes == 1, share, 0.0)


@register
@dataclass(frozen=True)
class PopulationUniqueness(PrivacyModel):
    """The estimated share of population uniques is at most ``threshold``.

    >>> str(PopulationUniqueness(0.01, sampling_fraction=0.1))
    '0.01-population uniqueness (dankar)'
    """

    threshold: float
    population_size: Any = None
    sampling_fraction: Any = None
    estimator: str = "dankar"
    name: ClassVar[str] = "population_uniqueness"
    monotonicity: ClassVar[Monotonicity] = Monotonicity(generalization=False, suppression=False)
    table_reference: ClassVar[bool] = True

    def __post_init__(self) -> None:
        from sqlanon.domain.risk.population import ESTIMATORS, PopulationModel

        require_number(self.threshold, "threshold", 0.0, 1.0)
        if self.estimator not in ESTIMATORS:
            raise SpecError(f"estimator must be one of {', '.join(ESTIMATORS)}, got {self.estimator!r}",
                            path="estimator")
        if self.population_size is None and self.sampling_fraction is None:
            raise SpecError("give population_size (a number or usa) or sampling_fraction",
                            path="population_size")
        try:  # the values' rules, with a table of one row: N ≥ n is checked on the data
            PopulationModel.of(1, population=self.population_size, sampling_fraction=self.sampling_fraction)
        except SpecError as e:
            key = "sampling_fraction" if e.path.endswith("sampling_fraction") else "population_size"
            raise SpecError(e.rule, path=key) from None

    @property
    def monotonic_generalization(self) -> bool:
        return self.estimator == "zayatz"

    def is_monotonic(self, suppression_limit: float) -> bool:
        # ARX: monotone under generalization with Zayatz's estimator only, never under suppression
        return suppression_limit <= 0 and self.monotonic_generalization

    def __str__(self) -> str:
        return f"{self.threshold:g}-population uniqueness ({self.estimator})"

    def _statistic(self) -> UniquesShare:
        return UniquesShare(self.population_size, self.sampling_fraction, self.estimator)

    def statistics(self) -> tuple[Statistic, ...]:
        return (self._statistic(),)

    def satisfied(self, s: dict[Statistic, exp.Expression]) -> exp.Expression:
        return exp.LTE(this=s[self._statistic()], expression=lit(float(self.threshold)))

    def satisfied_in_memory(self, s: Mapping[Statistic, np.ndarray]) -> np.ndarray:
        return s[self._statistic()] <= float(self.threshold)

    def achieved(self, s: dict[Statistic, exp.Expression]) -> exp.Expression:
        """The estimate over the kept classes' size-1 entries: the node's share when its uniques are
        kept, 0 when they are suppressed (or there are none)."""
        return exp.Max(this=s[self._statistic()])
