"""Models for a numeric sensitive attribute: (k,e)-anonymity and (k,p,q,r)-anonymity.

The sensitive values are read as numbers (a numeric column, or a text column declared
``type: integer`` or ``decimal``). NULL is a value of its own where values are counted (distinct
values, frequencies) and is left out where they are added (range, variance), as SQL aggregates do.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from sqlglot import exp

from sqlanon.domain.models.arithmetic import div, mul, sub
from sqlanon.domain.models.base import (
    CheckContext,
    ClassSize,
    ClassTable,
    H,
    HistogramColumns,
    Monotonicity,
    PrivacyModel,
    Statistic,
    StatisticInputs,
    register,
)
from sqlanon.domain.models.k_anonymity import require_int
from sqlanon.domain.models.ordering import check_numbers
from sqlanon.domain.models.statistics import DistinctCount
from sqlanon.domain.models.t_closeness import require_number
from sqlanon.errors import SpecError
from sqlanon.sql.nodes import alias, as_double, as_expression, col, internal, lit

if TYPE_CHECKING:
    import numpy as np

RATIO_TOLERANCE = 1e-9
"""Slack of Var_within/Var_total ≥ r: both variances are sums of squares in doubles."""

X = internal("x")
W = internal("w")
CM = internal("cm")
GM = internal("gm")
SSW = internal("ssw")
NW = internal("nw")
SST = internal("sst")
NTOT = internal("ntot")


def _not_numeric(attributes: dict[str, Any], attribute: str, path: str, what: str) -> None:
    a = attributes[attribute]
    if a.type in ("string", "date", "ordinal"):
        raise SpecError(f"{what} needs a numeric sensitive attribute, but {attribute!r} has type "
                        f"{a.type}", path=f"{path}.attribute")


@dataclass(frozen=True)
class ValueRange(Statistic):
    """max − min of the class's (non-NULL) sensitive values; 0 when the class has none."""

    attribute: str

    def prepare(self, inputs: StatisticInputs) -> None:
        check_numbers(inputs, self.attribute, "the value range")

    def aggregate(self, h: HistogramColumns) -> exp.Expression:
        x = as_double(h.c("value"))
        return exp.Coalesce(this=sub(exp.Max(this=x), exp.Min(this=x.copy())), expressions=[lit(0.0)])

    memory_inputs: ClassVar[frozenset[str]] = frozenset({"numbers"})

    def in_memory(self, classes: ClassTable) -> np.ndarray:
        import numpy as np

        x = classes.numbers(self.attribute)
        present = (classes.histogram(self.attribute) > 0) & ~np.isnan(x)[None, :]
        top = np.where(present, x[None, :], -np.inf).max(axis=1, initial=-np.inf)
        low = np.where(present, x[None, :], np.inf).min(axis=1, initial=np.inf)
        return np.where(present.any(axis=1), top - low, 0.0)


@dataclass(frozen=True)
class RareValues(Statistic):
    """How many of the class's values have a relative frequency below ``q`` in the whole table."""

    attribute: str
    q: float

    def aggregate(self, h: HistogramColumns) -> exp.Expression:
        share = div(as_double(h.c("global_count")), h.c("total"))
        return exp.Sum(this=exp.Case().when(exp.LT(this=share, expression=lit(float(self.q))), lit(1))
                       .else_(lit(0)))

    def in_memory(self, classes: ClassTable) -> np.ndarray:
        rare = classes.global_counts(self.attribute) / classes.n < float(self.q)
        return (classes.histogram(self.attribute) > 0) @ rare.astype(classes.sizes.dtype)


@dataclass(frozen=True)
class VarianceRatio(Statistic):
    """Var(class) / Var(table) of the non-NULL values, both population variances (divide by the count).

    1 when the table's variance is 0 (every class then equals the table, a class without a non-NULL
    value too); else NULL when the class or the table has no non-NULL value. Each variance is a sum of
    squared deviations from its own mean.
    """

    attribute: str

    def prepare(self, inputs: StatisticInputs) -> None:
        check_numbers(inputs, self.attribute, "the variance ratio")

    memory_inputs: ClassVar[frozenset[str]] = frozenset({"numbers"})

    def in_memory(self, classes: ClassTable) -> np.ndarray:
        """The SQL form's sums of squared deviations from each mean; NaN where it gives NULL."""
        import numpy as np

        x = classes.numbers(self.attribute)
        known = ~np.isnan(x)
        xs = np.where(known, x, 0.0)
        h = np.where(known[None, :], classes.histogram(self.attribute), 0.0)
        g = np.where(known, classes.global_counts(self.attribute), 0).astype(np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            weight = h.sum(axis=1)
            mean = (h @ xs) / weight
            within = (h * (xs[None, :] - mean[:, None]) ** 2).sum(axis=1) / weight
            n_total = g.sum()
            overall = (g @ xs) / n_total
            sst = float(g @ (xs - overall) ** 2) if n_total else np.nan
            ratio = np.full(len(weight), 1.0) if sst == 0 else within / (sst / n_total)
        return ratio if sst == 0 else np.where(weight > 0, ratio, np.nan)

    def class_query(self, ctx: CheckContext) -> exp.Select:
        qis = [col(q) for q in ctx.qis]
        x = as_double(col(H.value))
        w = exp.Case().when(exp.Is(this=col(H.value), expression=exp.Null()), lit(0)).else_(col(H.count))
        rows = exp.select(*[q.copy() for q in qis], alias(x, X), alias(w, W)).from_(
            ctx.histograms[self.attribute].copy())

        def mean(partition: list[exp.Expression] | None) -> exp.Expression:
            total = exp.Window(this=exp.Sum(this=mul(col(W), col(X))), partition_by=partition)
            weight = exp.Window(this=exp.Sum(this=col(W)), partition_by=[p.copy() for p in partition or []]
                                or None)
            return div(total, exp.Nullif(this=weight, expression=lit(0)))

        means = exp.select(exp.Star(), alias(mean([q.copy() for q in qis]), CM), alias(mean(None), GM)) \
            .from_(exp.alias_(exp.Subquery(this=rows), internal("v0"), quoted=True))

        def squares(m: str) -> exp.Expression:
            d = sub(col(X), col(m))
            return exp.Sum(this=mul(col(W), mul(d, d.copy())))

        sums = exp.select(
            *[q.copy() for q in qis], alias(squares(CM), SSW), alias(exp.Sum(this=col(W)), NW),
            alias(exp.Window(this=exp.Sum(this=squares(GM))), SST),
            alias(exp.Window(this=exp.Sum(this=exp.Sum(this=col(W)))), NTOT),
        ).from_(exp.alias_(exp.Subquery(this=means), internal("v1"), quoted=True)).group_by(
            *[q.copy() for q in qis])
        within = div(col(SSW), exp.Nullif(this=col(NW), expression=lit(0)))
        total = div(col(SST), col(NTOT))
        ratio = exp.Case().when(exp.EQ(this=col(SST), expression=lit(0)), lit(1.0)).else_(
            div(within, total))
        return exp.select(*[q.copy() for q in qis], alias(ratio, self.column)).from_(
            exp.alias_(exp.Subquery(this=sums), internal("v2"), quoted=True))


@register
@dataclass(frozen=True)
class KEAnonymity(PrivacyModel):
    """Every class has at least ``k`` rows and its sensitive values span a range (max − min) ≥ ``e``.

    Zhang Q, Koudas N, Srivastava D, Yu T. Aggregate query answering on anonymized tables. ICDE 2007
    (as stated in Domingo-Ferrer, Sebé, Solanas, "An anonymity model achievable via microaggregation",
    Def. 5). ``achieved`` is the smallest range of a class: the largest e that holds.

    Monotone under generalization and under suppression: a class merged with any other keeps at least
    its size and its range, so a kept class never starts to fail.

    >>> str(KEAnonymity("income", 5, 1000))
    '(5,1000)-anonymity of income'
    """

    attribute: str
    k: int
    e: float
    name: ClassVar[str] = "k_e_anonymity"
    monotonicity: ClassVar[Monotonicity] = Monotonicity(generalization=True, suppression=True)

    def __post_init__(self) -> None:
        require_int(self.k, "k", 1)
        require_number(self.e, "e", 0.0)

    def __str__(self) -> str:
        return f"({self.k},{self.e:g})-anonymity of {self.attribute}"

    @property
    def label(self) -> str:
        return f"{self.name}[{self.attribute}]"

    def statistics(self) -> tuple[Statistic, ...]:
        return (ClassSize(), ValueRange(self.attribute))

    def satisfied(self, s: dict[Statistic, exp.Expression]) -> exp.Expression:
        return as_expression(exp.and_(exp.GTE(this=s[ClassSize()], expression=lit(self.k)),
                        exp.GTE(this=s[ValueRange(self.attribute)], expression=lit(float(self.e)))))

    def satisfied_in_memory(self, s: Mapping[Statistic, np.ndarray]) -> np.ndarray:
        return (s[ClassSize()] >= self.k) & (s[ValueRange(self.attribute)] >= float(self.e))

    def achieved(self, s: dict[Statistic, exp.Expression]) -> exp.Expression:
        return exp.Min(this=s[ValueRange(self.attribute)])

    def min_class_size(self) -> int:
        return self.k

    def validate_against(self, attributes: dict[str, Any], path: str) -> None:
        _not_numeric(attributes, self.attribute, path, "(k,e)-anonymity")


@register
@dataclass(frozen=True)
class KPQRAnonymity(PrivacyModel):
    """(k,p,q,r)-anonymity: k-anonymity, with p-sensitivity and a variance bound for rare values.

    Domingo-Ferrer J, Sebé F, Solanas A. An anonymity model achievable via microaggregation. SDM 2008,
    Def. 7. A class satisfies the model iff

    * it has at least ``k`` rows, and
    * if it holds a value whose relative frequency in the whole table is below ``q`` (a rare value):
      it holds at least ``p`` distinct values **and** Var(class)/Var(table) ≥ ``r``.

    Interpretation (the definition is ambiguous about where the variance bound applies): both the
    p-sensitivity and the variance bound apply exactly to the classes holding a rare value, the
    classes the paper's heuristic builds around sensitive records; other classes need only k.
    Variances are population variances over all rows of the table (Def. 7, not the heuristic's
    variance over the rare records).

    Not monotone: merging a class without rare values (exempt, possibly constant) into one with a rare
    value can bring the merged variance below r. No single achieved value (four parameters).

    >>> str(KPQRAnonymity("income", 5, 2, 0.1, 0.5))
    '(5,2,0.1,0.5)-anonymity of income'
    """

    attribute: str
    k: int
    p: int
    q: float
    r: float
    name: ClassVar[str] = "kpqr_anonymity"
    monotonicity: ClassVar[Monotonicity] = Monotonicity(generalization=False, suppression=False)
    table_reference: ClassVar[bool] = True

    def __post_init__(self) -> None:
        require_int(self.k, "k", 1)
        require_int(self.p, "p", 1)
        if self.p > self.k:
            raise SpecError(f"p ({self.p}) must not exceed k ({self.k})", path="p")
        require_number(self.q, "q", 0.0, 1.0, low_open=True)
        require_number(self.r, "r", 0.0)

    def __str__(self) -> str:
        return f"({self.k},{self.p},{self.q:g},{self.r:g})-anonymity of {self.attribute}"

    @property
    def label(self) -> str:
        return f"{self.name}[{self.attribute}]"

    def statistics(self) -> tuple[Statistic, ...]:
        a = self.attribute
        return (ClassSize(), RareValues(a, float(self.q)), DistinctCount(a), VarianceRatio(a))

    def satisfied(self, s: dict[Statistic, exp.Expression]) -> exp.Expression:
        a = self.attribute
        protected = exp.and_(
            exp.GTE(this=s[DistinctCount(a)], expression=lit(self.p)),
            exp.GTE(this=s[VarianceRatio(a)], expression=lit(float(self.r) - RATIO_TOLERANCE)))
        exempt = exp.EQ(this=s[RareValues(a, float(self.q))], expression=lit(0))
        return as_expression(exp.and_(exp.GTE(this=s[ClassSize()], expression=lit(self.k)),
                        exp.Paren(this=exp.or_(exempt, protected))))

    def satisfied_in_memory(self, s: Mapping[Statistic, np.ndarray]) -> np.ndarray:
        a = self.attribute
        protected = (s[DistinctCount(a)] >= self.p) & \
            (s[VarianceRatio(a)] >= float(self.r) - RATIO_TOLERANCE)
        exempt = s[RareValues(a, float(self.q))] == 0
        return (s[ClassSize()] >= self.k) & (exempt | protected)

    def min_class_size(self) -> int:
        return self.k

    def validate_against(self, attributes: dict[str, Any], path: str) -> None:
        _not_numeric(attributes, self.attribute, path, "(k,p,q,r)-anonymity")
