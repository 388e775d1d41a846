"""Bounds on how much a class's sensitive distribution may differ from the table's, value by value.

With p_v the share of value v in a class and q_v its share in the whole table (suppressed rows
included):

* δ-disclosure privacy bounds |ln(p_v / q_v)| for every value of the table;
* β-likeness bounds the relative gain (p_v − q_v)/q_v of the values a class makes more likely.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from sqlglot import exp

from sqlanon.domain.models.arithmetic import add, div, mul, sub
from sqlanon.domain.models.base import (
    ClassTable,
    HistogramColumns,
    Monotonicity,
    PrivacyModel,
    Statistic,
    register,
)
from sqlanon.domain.models.t_closeness import TOLERANCE, require_number
from sqlanon.errors import SpecError, did_you_mean
from sqlanon.sql.nodes import as_double, as_expression, lit

if TYPE_CHECKING:
    import numpy as np

VARIANTS = ("basic", "enhanced")


def infinity() -> exp.Expression:
    """+∞ as a double (the achieved value when no parameter satisfies a model)."""
    return as_double(lit("Infinity"))


def _gain_numerator(h: HistogramColumns) -> exp.Expression:
    """(p − q)·n·|E| = c·n − C·|E|: exact in integers."""
    return sub(mul(h.c("count"), h.c("total")), mul(h.c("global_count"), h.c("size")))


def _relative_gain(h: HistogramColumns) -> exp.Expression:
    """(p − q)/q = (c·n − C·|E|)/(C·|E|)."""
    return div(as_double(_gain_numerator(h)), mul(h.c("global_count"), h.c("size")))


def _global_share(h: HistogramColumns) -> exp.Expression:
    return div(as_double(h.c("global_count")), h.c("total"))


def _present_gains(classes: ClassTable, attribute: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per class and value: whether the value is present, (p − q)·n·|E| and C·|E| (the numerator and
    denominator of the relative gain, in the SQL form's integers)."""
    h = classes.histogram(attribute)
    scale = classes.global_counts(attribute)[None, :] * classes.sizes[:, None]
    return h > 0, h * classes.n - scale, scale


def _max_present(values: np.ndarray, present: np.ndarray) -> np.ndarray:
    """The largest of ``values`` over the present values of each class (−∞ when none is)."""
    import numpy as np

    return np.where(present, values, -np.inf).max(axis=1, initial=-np.inf)


@dataclass(frozen=True)
class AbsentRows(Statistic):
    """The number of table rows whose sensitive value does not occur in the class (n − Σ_present C)."""

    attribute: str

    def aggregate(self, h: HistogramColumns) -> exp.Expression:
        return sub(exp.Max(this=h.c("total")), exp.Sum(this=h.c("global_count")))

    def in_memory(self, classes: ClassTable) -> np.ndarray:
        present = classes.histogram(self.attribute) > 0
        return classes.n - present @ classes.global_counts(self.attribute)


@dataclass(frozen=True)
class MaxLogRatio(Statistic):
    """max |ln(p_v / q_v)| over the values present in the class (natural logarithm)."""

    attribute: str

    def aggregate(self, h: HistogramColumns) -> exp.Expression:
        ratio = div(as_double(mul(h.c("count"), h.c("total"))), mul(h.c("size"), h.c("global_count")))
        return exp.Max(this=exp.Abs(this=exp.Ln(this=ratio)))

    def in_memory(self, classes: ClassTable) -> np.ndarray:
        import numpy as np

        present, _, scale = _present_gains(classes, self.attribute)
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = (classes.histogram(self.attribute) * classes.n) / scale
            return _max_present(np.abs(np.log(ratio)), present)


@dataclass(frozen=True)
class MaxRelativeGain(Statistic):
    """max (p_v − q_v)/q_v over the values with p_v > q_v; 0 when there are none."""

    attribute: str

    def aggregate(self, h: HistogramColumns) -> exp.Expression:
        return exp.Max(this=exp.Greatest(this=_relative_gain(h), expressions=[lit(0.0)]))

    def in_memory(self, classes: ClassTable) -> np.ndarray:
        import numpy as np

        present, gain, scale = _present_gains(classes, self.attribute)
        with np.errstate(divide="ignore", invalid="ignore"):
            return _max_present(np.maximum(gain / scale, 0.0), present)


@dataclass(frozen=True)
class MaxEnhancedExcess(Statistic):
    """max ((p_v − q_v)/q_v + ln q_v) over the values with p_v > q_v (≤ 0 iff the gain ≤ −ln q_v);
    NULL when no value is more frequent in the class than in the table."""

    attribute: str

    def aggregate(self, h: HistogramColumns) -> exp.Expression:
        gains = exp.GT(this=_gain_numerator(h), expression=lit(0))
        excess = add(_relative_gain(h), exp.Ln(this=_global_share(h)))
        return exp.Max(this=exp.Case().when(gains, excess))

    def in_memory(self, classes: ClassTable) -> np.ndarray:
        """NaN where SQL gives NULL (no value gains)."""
        import numpy as np

        present, gain, scale = _present_gains(classes, self.attribute)
        gains = present & (gain > 0)
        share = classes.global_counts(self.attribute) / classes.n
        with np.errstate(divide="ignore", invalid="ignore"):
            excess = gain / scale + np.log(share)[None, :]
        return np.where(gains.any(axis=1), _max_present(excess, gains), np.nan)


@register
@dataclass(frozen=True)
class DeltaDisclosure(PrivacyModel):
    """|ln(p(E,v) / q(v))| < δ for every class E and every value v of the table.

    Brickell J, Shmatikov V. The cost of privacy: destruction of data-mining utility in anonymized
    data publishing. KDD 2008.

    A value absent from a class has ln 0 = −∞ and violates the bound, so every class must hold every
    value of the table. (ARX's DDisclosurePrivacy differs: it uses log₂ and checks only the values
    present in the class.) ``achieved`` is the largest |ln(p/q)|: the table satisfies every δ above
    it, and +∞ when a class misses a value.

    Monotone under generalization: each bound q·e^−δ < p < q·e^δ is an interval, which a merged
    class's share (a weighted mean) stays in, and a union of classes holding every value holds every
    value. Not under suppression: merging an outlier class into a kept one can break the bound.

    >>> str(DeltaDisclosure("disease", 1.5))
    '1.5-disclosure privacy of disease'
    """

    attribute: str
    delta: float
    name: ClassVar[str] = "delta_disclosure"
    monotonicity: ClassVar[Monotonicity] = Monotonicity(generalization=True, suppression=False)
    table_reference: ClassVar[bool] = True

    def __post_init__(self) -> None:
        require_number(self.delta, "delta", 0.0, low_open=True)

    def __str__(self) -> str:
        return f"{self.delta:g}-disclosure privacy of {self.attribute}"

    @property
    def label(self) -> str:
        return f"{self.name}[{self.attribute}]"

    def statistics(self) -> tuple[Statistic, ...]:
        return (AbsentRows(self.attribute), MaxLogRatio(self.attribute))

    def satisfied(self, s: dict[Statistic, exp.Expression]) -> exp.Expression:
        return as_expression(exp.and_(
            exp.EQ(this=s[AbsentRows(self.attribute)], expression=lit(0)),
            exp.LT(this=s[MaxLogRatio(self.attribute)], expression=lit(float(self.delta) - TOLERANCE))))

    def satisfied_in_memory(self, s: Mapping[Statistic, np.ndarray]) -> np.ndarray:
        return (s[AbsentRows(self.attribute)] == 0) & \
            (s[MaxLogRatio(self.attribute)] < float(self.delta) - TOLERANCE)

    def achieved(self, s: dict[Statistic, exp.Expression]) -> exp.Expression:
        return exp.Max(this=exp.Case().when(
            exp.GT(this=s[AbsentRows(self.attribute)], expression=lit(0)), infinity()).else_(
            s[MaxLogRatio(self.attribute)]))


@register
@dataclass(frozen=True)
class BetaLikeness(PrivacyModel):
    """No class makes a sensitive value much more likely than the table does.

    Cao J, Karras P. Publishing microdata with a robust privacy guarantee. PVLDB 2012;5(11).

    For every class and every value with p_v > q_v: ``(p_v − q_v)/q_v ≤ β`` (``basic``), or
    ``≤ min(β, −ln q_v)`` (``enhanced``, as ARX's EnhancedBLikeness). Values a class makes less likely
    are not bounded. ``achieved`` is the largest relative gain (the smallest β that holds); for the
    enhanced variant +∞ when some gain exceeds −ln q_v, which no β repairs.

    Monotone under generalization: each bound is an upper bound on p_v, kept by a merged class's
    weighted mean. Not under suppression (ARX: monotone with generalization only).

    >>> str(BetaLikeness("disease", 1.0, variant="enhanced"))
    'enhanced 1-likeness of disease'
    """

    attribute: str
    beta: float
    variant: str = "basic"
    name: ClassVar[str] = "beta_likeness"
    monotonicity: ClassVar[Monotonicity] = Monotonicity(generalization=True, suppression=False)
    table_reference: ClassVar[bool] = True

    def __post_init__(self) -> None:
        if self.variant not in VARIANTS:
            raise SpecError(f"unknown β-likeness variant {self.variant!r}; use one of "
                            f"{', '.join(VARIANTS)}." + did_you_mean(self.variant, VARIANTS),
                            path="variant")
        require_number(self.beta, "beta", 0.0, low_open=True)

    def __str__(self) -> str:
        return f"{self.variant} {self.beta:g}-likeness of {self.attribute}"

    @property
    def label(self) -> str:
        return f"{self.name}[{self.attribute}]"

    def statistics(self) -> tuple[Statistic, ...]:
        if self.variant == "basic":
            return (MaxRelativeGain(self.attribute),)
        return (MaxRelativeGain(self.attribute), MaxEnhancedExcess(self.attribute))

    def satisfied(self, s: dict[Statistic, exp.Expression]) -> exp.Expression:
        gain = exp.LTE(this=s[MaxRelativeGain(self.attribute)],
                       expression=lit(float(self.beta) + TOLERANCE))
        if self.variant == "basic":
            return gain
        excess = exp.Coalesce(this=s[MaxEnhancedExcess(self.attribute)], expressions=[lit(0.0)])
        return as_expression(exp.and_(gain, exp.LTE(this=excess, expression=lit(TOLERANCE))))

    def satisfied_in_memory(self, s: Mapping[Statistic, np.ndarray]) -> np.ndarray:
        import numpy as np

        gain = s[MaxRelativeGain(self.attribute)] <= float(self.beta) + TOLERANCE
        if self.variant == "basic":
            return gain
        return gain & (np.nan_to_num(s[MaxEnhancedExcess(self.attribute)], nan=0.0) <= TOLERANCE)

    def achieved(self, s: dict[Statistic, exp.Expression]) -> exp.Expression:
        gain = s[MaxRelativeGain(self.attribute)]
        if self.variant == "basic":
            return exp.Max(this=gain)
        excess = exp.Coalesce(this=s[MaxEnhancedExcess(self.attribute)], expressions=[lit(0.0)])
        return exp.Max(this=exp.Case().when(exp.GT(this=excess, expression=lit(TOLERANCE)),
                                            infinity()).else_(gain))
