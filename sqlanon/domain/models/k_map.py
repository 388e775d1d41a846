"""k-map (ARX's ``KMap``): every class matches at least k records of the population.

The journalist's attacker knows someone is in the population, not that they are in the table: what
protects a record is the number of people in the population sharing its quasi-identifiers. Two forms,
as in ARX:

- ``population``: a table of the database holding the population (the table's rows among them) with
  the same quasi-identifier columns. At each node the population is generalized with the table's
  hierarchies and its class sizes joined to the table's classes, in SQL; in memory, the population's
  frequency table is read once and grouped with the table's rows at each node
  (:mod:`sqlanon.methods.generalization.search.fast_population`).
- ``estimator`` (``poisson`` or ``zero_truncated_poisson``) with ``significance`` α and either
  ``population_size`` N or ``sampling_fraction`` f = n / N: the population's class sizes are modelled
  as Poisson (or zero-truncated Poisson) variables with mean f·k, and k-map holds with type-I error
  at most α when every class holds at least k' records, k' the smallest count whose cumulative
  probability reaches 1 − α (ARX's ``calculateKPoisson`` / ``calculateKZeroPoisson``), bounded by
  k and by the table's rows. Both forms of the check (SQL, numpy) read k' for the table's n.

Monotone under generalization and suppression (ARX declares both): a class's population count, or
its own size, only grows as classes merge, and each class is judged on its own.
"""

from __future__ import annotations

import functools
import hashlib
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, Protocol, cast

from sqlglot import exp

from sqlanon.domain.models.base import (
    CheckContext,
    ClassSize,
    ClassTable,
    Monotonicity,
    N,
    PrivacyModel,
    Statistic,
    StatisticInputs,
    register,
)
from sqlanon.domain.models.k_anonymity import require_int
from sqlanon.domain.models.population import population_class_sizes, raw_population_counts
from sqlanon.domain.models.t_closeness import require_number
from sqlanon.errors import EngineError, SpecError
from sqlanon.sql.nodes import alias, col, count_star, internal, lit, nullsafe_join, table

if TYPE_CHECKING:
    import numpy as np

ESTIMATORS = ("poisson", "zero_truncated_poisson")


class PopulationClassTable(ClassTable, Protocol):
    """A node's classes that also know a population's records per class (the in-memory search's,
    for the statistics that ask for ``population``)."""

    def population(self, relation: str) -> np.ndarray:
        """Per class, the records of the population table ``relation`` generalized into it (int64)."""
_PC = internal("pc")
_SIZE = internal("km_size")
_ROWS = internal("km_rows")


def poisson_k(k: int, significance: float, mean: float) -> int:
    """ARX's ``calculateKPoisson``: 2 + the smallest c < k − 1 with P(X ≤ c) ≥ 1 − α for X ~ Poisson
    (mean), else k + 1 (no smaller bound is worth having)."""
    import numpy as np
    from scipy import special

    threshold = 1.0 - significance
    if threshold <= 0:
        return 1
    cdf = special.pdtr(np.arange(max(k - 1, 0)), mean)
    hit = np.flatnonzero(cdf >= threshold)
    return int(hit[0]) + 2 if len(hit) else k + 1


def zero_truncated_poisson_k(k: int, significance: float, mean: float) -> int:
    """ARX's ``calculateKZeroPoisson``: 1 + the smallest c in [1, k − 2] whose zero-truncated Poisson
    cumulative probability (summed term by term, as ARX does) reaches 1 − α, else max(k, 2)."""
    import numpy as np
    from scipy import special

    threshold = 1.0 - significance
    if threshold <= 0:
        return 1
    counts = np.arange(1, max(k - 1, 1), dtype=np.float64)
    pmf = np.exp(counts * math.log(mean) - mean - special.gammaln(counts + 1.0))
    cumulative = np.cumsum(pmf / (1.0 - math.exp(-mean)))
    hit = np.flatnonzero(cumulative >= threshold)
    return int(hit[0]) + 2 if len(hit) else max(k, 2)


@dataclass(frozen=True)
class DerivedK(Statistic):
    """k', the class size the estimated population asks of every class (the same for all classes of
    a table: it depends on the table's rows n only)."""

    k: int
    significance: float
    estimator: str
    population_size: float | None
    sampling_fraction: float | None

    @functools.lru_cache(maxsize=64)  # noqa: B019 - a frozen value: the cache keys on it
    def of_rows(self, n: int) -> int:
        """k' for a table of n rows (ARX: the estimate, then at most n, then at most k)."""
        if self.sampling_fraction is not None:
            f = self.sampling_fraction
        else:
            f = n / float(self.population_size or 1)
        return min(self._estimate(f), n)

    def _estimate(self, f: float) -> int:
        estimate = poisson_k if self.estimator == "poisson" else zero_truncated_poisson_k
        return min(self.k, estimate(self.k, self.significance, f * self.k))

    def ceiling(self) -> int:
        """The largest k' of any n: with a sampling fraction the estimate itself, else k (the mean
        grows with n until no smaller bound holds)."""
        return self._estimate(self.sampling_fraction) if self.sampling_fraction is not None else self.k

    def steps(self) -> list[tuple[int, int]]:
        """(n, k') at each n where k' rises, from n = 1: k' never falls as n grows (the mean f·k grows
        with n, or stays), so the list gives k' for every n."""
        out = [(1, self.of_rows(1))]
        top = self.ceiling()
        while out[-1][1] < top:
            low, value = out[-1]
            high = low * 2
            while self.of_rows(high) <= value:
                low, high = high, high * 2
            while high - low > 1:  # of_rows(low) <= value < of_rows(high)
                mid = (low + high) // 2
                low, high = (mid, high) if self.of_rows(mid) <= value else (low, mid)
            out.append((high, self.of_rows(high)))
        return out

    def class_query(self, ctx: CheckContext) -> exp.Select:
        qis = [col(q) for q in ctx.qis]
        classes = exp.select(*qis, alias(exp.Sum(this=col(N)), _SIZE)).from_(ctx.gen.copy()).group_by(
            *[q.copy() for q in qis])
        rows = exp.select(*[q.copy() for q in qis], alias(exp.Window(this=exp.Sum(this=col(_SIZE))), _ROWS)) \
            .from_(exp.alias_(exp.Subquery(this=classes), internal("km0"), quoted=True))
        steps = self.steps()
        derived: exp.Expression = lit(steps[0][1])
        if len(steps) > 1:
            case = exp.Case()
            for n, value in reversed(steps[1:]):
                case = case.when(exp.GTE(this=col(_ROWS), expression=lit(n)), lit(value))
            derived = case.else_(lit(steps[0][1]))
        return exp.select(*[q.copy() for q in qis], alias(derived, self.column)).from_(
            exp.alias_(exp.Subquery(this=rows), internal("km1"), quoted=True))

    def in_memory(self, classes: ClassTable) -> np.ndarray:
        import numpy as np

        return np.full(len(classes.sizes), self.of_rows(int(classes.n)), dtype=np.int64)


@dataclass(frozen=True)
class PopulationCount(Statistic):
    """The population's records in the class: the population table generalized to the node."""

    population: str
    memory_inputs: ClassVar[frozenset[str]] = frozenset({"population"})

    @property
    def step(self) -> str:
        """The plan step holding the population's records per raw quasi-identifier tuple."""
        return "kmap_" + hashlib.sha1(self.population.encode("utf-8")).hexdigest()[:10]

    def prepare(self, inputs: StatisticInputs) -> None:
        """Check the population table, count it per raw tuple once, and check that it holds the table."""
        engine = inputs.engine
        where = "k_map.population"
        if not engine.relation_exists(self.population):
            raise SpecError(f"no table or view named {self.population!r} in the database", path=where)
        have = {c for c, _ in engine.columns(self.population)}
        missing = [q for q in inputs.qis if q not in have]
        if missing:
            raise SpecError(f"the population {self.population!r} lacks the quasi-identifier column(s) "
                            f"{', '.join(map(repr, missing))}", path=where)
        ref = inputs.add_relation(self.step, raw_population_counts(table(self.population), inputs.qis, _PC))
        sample = raw_population_counts(inputs.source, inputs.qis, _SIZE)
        joined = exp.select(count_star().as_("bad")).from_(
            exp.alias_(exp.Subquery(this=sample), "s", quoted=True)).join(
            exp.alias_(ref, "p", table=True, quoted=True), on=nullsafe_join("s", "p", inputs.qis),
            join_type="left").where(exp.or_(exp.Is(this=col(_PC, "p"), expression=exp.Null()),
                                            exp.LT(this=col(_PC, "p"), expression=col(_SIZE, "s"))))
        bad = int(engine.fetch_one(joined)["bad"])
        if bad:
            raise SpecError(f"the population {self.population!r} does not contain the table: {bad} "
                            "quasi-identifier tuple(s) have fewer records in the population than in the "
                            "table", path=where)

    def class_query(self, ctx: CheckContext) -> exp.Select:
        inputs = ctx.inputs
        generalizer = ctx.generalizer or (inputs.generalizer if inputs is not None else None)
        if generalizer is None:
            raise EngineError("k-map generalizes the population in the database: a statement checking "
                              "it needs a connection")
        if not ctx.plan.has(self.step):  # an output statement counts the population itself
            ctx.plan.add(self.step, raw_population_counts(table(self.population), ctx.qis, _PC))
        return population_class_sizes(generalizer, ctx.plan.ref(self.step), ctx.levels, ctx.qis,
                                      self.column, weight=_PC)

    def in_memory(self, classes: ClassTable) -> np.ndarray:
        return cast("PopulationClassTable", classes).population(self.population)


@register
@dataclass(frozen=True)
class KMap(PrivacyModel):
    """Every class matches at least ``k`` records of the population: a ``population`` table, or a
    population estimated by ``estimator`` from ``population_size`` or ``sampling_fraction``.

    Sweeney L. Computational disclosure control (thesis, MIT 2001); El Emam K, Dankar FK. Protecting
    privacy using k-anonymity. JAMIA 2008;15(5) (the estimated form).

    >>> str(KMap(5, population="census"))
    '5-map of census'
    >>> str(KMap(5, estimator="poisson", sampling_fraction=0.1))
    '5-map estimated (poisson, significance 0.05)'
    """

    k: int
    population: str | None = None
    estimator: str | None = None
    significance: float = 0.05
    population_size: float | None = None
    sampling_fraction: float | None = None
    name: ClassVar[str] = "k_map"
    monotonicity: ClassVar[Monotonicity] = Monotonicity(generalization=True, suppression=True)

    def __post_init__(self) -> None:
        require_int(self.k, "k", 1)
        require_number(self.significance, "significance", 0.0, 1.0)
        if self.population is not None:
            if not isinstance(self.population, str) or not self.population:
                raise SpecError(f"population must be a table name, got {self.population!r}",
                                path="population")
            given = [key for key in ("estimator", "population_size", "sampling_fraction")
                     if getattr(self, key) is not None]
            if given:
                raise SpecError("a population table gives the population's classes itself: drop "
                                f"{', '.join(given)}, or drop population to estimate them", path=given[0])
            return
        if self.estimator is None:
            raise SpecError("k_map needs a population table (population) or an estimator (estimator: "
                            f"{' or '.join(ESTIMATORS)})", path="population")
        if self.estimator not in ESTIMATORS:
            raise SpecError(f"estimator must be one of {', '.join(ESTIMATORS)}, got {self.estimator!r}",
                            path="estimator")
        if (self.population_size is None) == (self.sampling_fraction is None):
            raise SpecError("the estimated population needs exactly one of population_size (N) and "
                            "sampling_fraction (n / N)", path="population_size")
        if self.population_size is not None:
            require_number(self.population_size, "population_size", 0.0, low_open=True)
        else:
            require_number(self.sampling_fraction, "sampling_fraction", 0.0, 1.0, low_open=True)

    def __str__(self) -> str:
        if self.population is not None:
            return f"{self.k}-map of {self.population}"
        return f"{self.k}-map estimated ({self.estimator}, significance {self.significance:g})"

    @property
    def _statistic(self) -> Statistic:
        if self.population is not None:
            return PopulationCount(self.population)
        return DerivedK(self.k, float(self.significance), str(self.estimator),
                        None if self.population_size is None else float(self.population_size),
                        None if self.sampling_fraction is None else float(self.sampling_fraction))

    def statistics(self) -> tuple[Statistic, ...]:
        return (ClassSize(), self._statistic)

    def local_recoding(self) -> bool:
        """ARX re-anonymizes suppressed records under k'-anonymity, k' derived from the whole table.
        With a sampling fraction k' does not depend on the table's rows (beyond at most n, which
        :meth:`min_class_size` covers), so a subset gets ARX's k'; with a population size it would be
        derived again from the subset's rows, so that form is refused (give sampling_fraction = n / N)."""
        return self.sampling_fraction is not None

    def min_class_size(self) -> int:
        statistic = self._statistic
        return statistic.ceiling() if isinstance(statistic, DerivedK) and self.sampling_fraction else 1

    def satisfied(self, s: dict[Statistic, exp.Expression]) -> exp.Expression:
        if self.population is not None:
            count = exp.Coalesce(this=s[self._statistic], expressions=[lit(0)])
            return exp.GTE(this=count, expression=lit(self.k))
        return exp.GTE(this=s[ClassSize()], expression=s[self._statistic])

    def satisfied_in_memory(self, s: Mapping[Statistic, np.ndarray]) -> np.ndarray:
        if self.population is not None:
            return s[self._statistic] >= self.k
        return s[ClassSize()] >= s[self._statistic]

    def achieved(self, s: dict[Statistic, exp.Expression]) -> exp.Expression:
        """The smallest population count of a kept class (with an estimator: its smallest size)."""
        if self.population is not None:
            return exp.Min(this=s[self._statistic])
        return exp.Min(this=s[ClassSize()])
