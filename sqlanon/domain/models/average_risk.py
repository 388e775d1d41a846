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
"""

from __future__ import annotations

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
from sqlanon.domain.models.t_closeness import require_number
from sqlanon.sql.nodes import alias, as_double, col, internal, lit

if TYPE_CHECKING:
    import numpy as np

_SIZE = internal("ar_size")


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
    """The average re-identification risk, (number of classes) / n, is at most ``threshold``.

    Prasser F, Kohlmayer F. Putting statistical disclosure control into practice: the ARX data
    anonymization tool. In: Medical Data Privacy Handbook. Springer; 2015 (the average risk
    criterion); El Emam K. Guide to the de-identification of personal health information. 2013.

    >>> str(AverageRisk(0.05))
    '0.05-average re-identification risk'
    """

    threshold: float
    name: ClassVar[str] = "average_risk"
    monotonicity: ClassVar[Monotonicity] = Monotonicity(generalization=True, suppression=False)
    table_reference: ClassVar[bool] = True

    def __post_init__(self) -> None:
        require_number(self.threshold, "threshold", 0.0, 1.0)

    def __str__(self) -> str:
        return f"{self.threshold:g}-average re-identification risk"

    def local_recoding(self) -> bool:
        return True

    def statistics(self) -> tuple[Statistic, ...]:
        return (RiskAboveSize(),)

    def satisfied(self, s: dict[Statistic, exp.Expression]) -> exp.Expression:
        return exp.LTE(this=s[RiskAboveSize()], expression=lit(float(self.threshold)))

    def satisfied_in_memory(self, s: Mapping[Statistic, np.ndarray]) -> np.ndarray:
        return s[RiskAboveSize()] <= float(self.threshold)

    def achieved(self, s: dict[Statistic, exp.Expression]) -> exp.Expression:
        """The average risk of the table with every class smaller than the smallest kept one
        suppressed (with nothing suppressed: the table's own, classes / n)."""
        return exp.Max(this=s[RiskAboveSize()])
