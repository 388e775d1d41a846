"""A bound on the average re-identification risk (ARX's ``AverageReidentificationRisk``).

A record's prosecutor risk is 1/|E|, E its equivalence class; averaged over the n rows of the table
it is (number of classes) / n. Suppressed rows stay in the count and form one class of their own, as
in ARX, which tests ``1 / (n / classes) ≤ threshold`` in doubles.

Which classes are suppressed: ARX suppresses the smallest classes one at a time until the bound
holds, breaking ties between equal sizes by the classes' first rows. A privacy model here decides
each class on its own, so it suppresses whole groups of equal size: a class of size x is kept when
the table with every class smaller than x suppressed meets the bound. The released table then meets
it, with at most the classes of one size more suppressed than in ARX. That choice makes the model
monotone under generalization (with nothing suppressed, coarser classes are fewer) but not under
suppression (ARX's one-at-a-time rule is), so a search does not prune on it when rows may be
suppressed.

ARX's relaxed form adds a highest risk h and a share p of records allowed above it: at most p of the
released records lie in classes smaller than ARX's size threshold for h (the smallest size whose risk
is within 1 % of h, ``ParameterTranslation.getSizeThreshold``; 1 / that size is the effective highest
risk). As in ARX that share is taken over the released records, the suppressed ones left out, and a
class of size x is judged on the table with every smaller class suppressed
(:class:`~sqlanon.domain.models.released_share.ReleasedShareBelow`). Both parts fall as x grows, so the
kept classes are still those from some size up; coarser classes with nothing suppressed lower both,
so the relaxed form keeps the monotonicity of the plain one.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

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
from sqlanon.domain.models.released_share import ReleasedShareBelow
from sqlanon.domain.models.t_closeness import require_number
from sqlanon.errors import SpecError
from sqlanon.sql.nodes import alias, as_double, as_expression, col, internal, lit

if TYPE_CHECKING:
    import numpy as np

_SIZE = internal("ar_size")
RELATIVE_THRESHOLD_PRECISION = 0.01


def size_threshold(risk: float) -> int:
    """The smallest class size meeting a highest risk, ARX's ``ParameterTranslation.getSizeThreshold``:
    floor(1 / risk), plus one when that size's risk exceeds ``risk`` by 1 % of it or more."""
    size = 1.0 / risk
    floor = math.floor(size)
    if (1.0 / floor) - (1.0 / size) >= RELATIVE_THRESHOLD_PRECISION * risk:
        floor += 1
    return int(floor)


@dataclass(frozen=True)
class RiskAboveSize(Statistic):
    """The average risk of the table once every class smaller than this one is suppressed:
    1 / (n / (classes at least as large + 1 if a smaller class exists))."""

    def class_query(self, ctx: CheckContext) -> exp.Select:
        qis = [col(q) for q in ctx.qis]
        classes = exp.select(*qis, alias(exp.Sum(this=col(N)), _SIZE)).from_(ctx.gen.copy()).group_by(
            *[q.copy() for q in qis])
        size = col(_SIZE)
        at_least = exp.Window(this=exp.Count(this=exp.Star()),
                              order=exp.Order(expressions=[exp.Ordered(this=size.copy(), desc=True)]))
        smallest = exp.Window(this=exp.Min(this=size.copy()))
        smaller = exp.Case().when(exp.LT(this=smallest, expression=size.copy()), lit(1)).else_(lit(0))
        rows = exp.Window(this=exp.Sum(this=size.copy()))
        count = as_double(exp.Paren(this=exp.Add(this=at_least, expression=smaller)))
        average_size = exp.Paren(this=exp.Div(this=as_double(rows), expression=count))
        risk = exp.Div(this=lit(1.0), expression=average_size)
        return exp.select(*[q.copy() for q in qis], alias(risk, self.column)).from_(
            exp.alias_(exp.Subquery(this=classes), internal("ar0"), quoted=True))

    def in_memory(self, classes: ClassTable) -> np.ndarray:
        import numpy as np

        sizes = classes.sizes
        if len(sizes) == 0:
            return np.zeros(0)
        ordered = np.sort(sizes)
        at_least = len(sizes) - np.searchsorted(ordered, sizes, side="left")
        count = (at_least + (sizes > ordered[0])).astype(np.float64)
        return 1.0 / (classes.n / count)


@register
@dataclass(frozen=True)
class AverageRisk(PrivacyModel):
    """The average re-identification risk, (number of classes) / n, is at most ``threshold``; with
    ``highest_risk`` h, moreover at most ``records_at_risk`` (default 0) of the released records lie in
    classes whose risk exceeds the effective h.

    Prasser F, Kohlmayer F. Putting statistical disclosure control into practice: the ARX data
    anonymization tool. In: Medical Data Privacy Handbook. Springer; 2015 (the average risk
    criterion); El Emam K. Guide to the de-identification of personal health information. 2013.

    >>> str(AverageRisk(0.05))
    '0.05-average re-identification risk'
    >>> str(AverageRisk(0.05, 0.3, 0.1))
    '0.05-average re-identification risk, highest 0.25 (0.3) but for 0.1 of the records'
    """

    threshold: float
    highest_risk: float | None = None
    records_at_risk: float | None = None
    name: ClassVar[str] = "average_risk"
    monotonicity: ClassVar[Monotonicity] = Monotonicity(generalization=True, suppression=False)
    table_reference: ClassVar[bool] = True

    def __post_init__(self) -> None:
        require_number(self.threshold, "threshold", 0.0, 1.0)
        if self.highest_risk is None:
            if self.records_at_risk is not None:
                raise SpecError("records_at_risk bounds the records above highest_risk: give highest_risk "
                                "too", path="records_at_risk")
            return
        require_number(self.highest_risk, "highest_risk", 0.0, 1.0, low_open=True)
        if self.records_at_risk is not None:
            require_number(self.records_at_risk, "records_at_risk", 0.0, 1.0)

    def __str__(self) -> str:
        text = f"{self.threshold:g}-average re-identification risk"
        if self.highest_risk is None:
            return text
        return (f"{text}, highest {1.0 / self.smallest_size:g} ({self.highest_risk:g}) "
                f"but for {self.records_share:g} of the records")

    @property
    def smallest_size(self) -> int:
        """The size threshold of the highest risk (classes below it are at risk)."""
        return size_threshold(float(self.highest_risk)) if self.highest_risk is not None else 1

    @property
    def records_share(self) -> float:
        return float(self.records_at_risk or 0.0)

    def local_recoding(self) -> bool:
        return True

    def statistics(self) -> tuple[Statistic, ...]:
        if self.highest_risk is None:
            return (RiskAboveSize(),)
        return (RiskAboveSize(), ReleasedShareBelow(self.smallest_size))

    def satisfied(self, s: dict[Statistic, exp.Expression]) -> exp.Expression:
        average = exp.LTE(this=s[RiskAboveSize()], expression=lit(float(self.threshold)))
        if self.highest_risk is None:
            return average
        at_risk = exp.LTE(this=s[ReleasedShareBelow(self.smallest_size)], expression=lit(self.records_share))
        return as_expression(exp.and_(average, at_risk))

    def satisfied_in_memory(self, s: Mapping[Statistic, np.ndarray]) -> np.ndarray:
        average = s[RiskAboveSize()] <= float(self.threshold)
        if self.highest_risk is None:
            return average
        return average & (s[ReleasedShareBelow(self.smallest_size)] <= self.records_share)

    def achieved(self, s: dict[Statistic, exp.Expression]) -> exp.Expression:
        """The average risk of the table with every class smaller than the smallest kept one
        suppressed (with nothing suppressed: the table's own, classes / n)."""
        return exp.Max(this=s[RiskAboveSize()])
