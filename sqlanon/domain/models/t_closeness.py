"""t-closeness with the equal, ordered and hierarchical ground distances."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from sqlglot import exp

from sqlanon.domain.models.base import Monotonicity, PrivacyModel, Statistic, register
from sqlanon.domain.models.distance_statistics import HierarchicalDistance, OrderedDistance
from sqlanon.domain.models.statistics import EqualDistance
from sqlanon.errors import SpecError, did_you_mean
from sqlanon.sql.nodes import lit

if TYPE_CHECKING:
    import numpy as np

DISTANCES = ("equal", "ordered", "hierarchical")

TOLERANCE = 1e-12
"""Slack of the inclusive comparison D ≤ t, for distances computed in doubles."""


def require_number(value: object, name: str, low: float, high: float | None = None, *,
                   low_open: bool = False) -> float:
    """A real number in [low, high] (or (low, high] with ``low_open``), else a SpecError on ``name``."""
    number = value if isinstance(value, (int, float)) and not isinstance(value, bool) else None
    ok = number is not None and number == number  # not NaN
    if number is not None and ok:
        ok = (number > low if low_open else number >= low) and (high is None or number <= high)
    if number is None or not ok:
        lo = "(" if low_open else "["
        hi = f"{high}]" if high is not None else "inf)"
        raise SpecError(f"{name} must be a number in {lo}{low}, {hi}, got {value!r}", path=name)
    return float(number)


@register
@dataclass(frozen=True)
class TCloseness(PrivacyModel):
    """The sensitive distribution of every class is within ``t`` of the table's (EMD ≤ t, inclusive).

    Li N, Li T, Venkatasubramanian S. t-closeness: privacy beyond k-anonymity and l-diversity.
    ICDE 2007.

    * ``equal``: every two values are at distance 1; the EMD is the total variation ½Σ|p − q|;
    * ``ordered``: values at distance |rank(i) − rank(j)|/(r−1) in the attribute's order (numeric or
      temporal order, or the ``order:`` list of the attribute);
    * ``hierarchical``: the distance of two values is the level of their lowest common ancestor in the
      attribute's ``hierarchy:`` divided by its height (ARX's scaled EMD, computed exactly).

    The reference distribution is the attribute over all rows, suppressed ones included (ARX).
    Monotone under generalization (merging classes never increases the worst EMD, by its convexity)
    but not under suppression: an outlier class merged into a kept one can push it over t (ARX).

    >>> str(TCloseness("disease", 0.2, "hierarchical"))
    '0.2-closeness of disease (hierarchical distance)'
    """

    attribute: str
    t: float
    distance: str = "equal"
    name: ClassVar[str] = "t_closeness"
    monotonicity: ClassVar[Monotonicity] = Monotonicity(generalization=True, suppression=False)
    table_reference: ClassVar[bool] = True

    def __post_init__(self) -> None:
        if self.distance not in DISTANCES:
            raise SpecError(f"unknown ground distance {self.distance!r}; use one of "
                            f"{', '.join(DISTANCES)}." + did_you_mean(self.distance, DISTANCES),
                            path="distance")
        require_number(self.t, "t", 0.0, 1.0)

    def __str__(self) -> str:
        return f"{self.t:g}-closeness of {self.attribute} ({self.distance} distance)"

    @property
    def label(self) -> str:
        return f"{self.name}[{self.attribute}]"

    def _statistic(self) -> Statistic:
        if self.distance == "equal":
            return EqualDistance(self.attribute)
        if self.distance == "ordered":
            return OrderedDistance(self.attribute)
        return HierarchicalDistance(self.attribute)

    def statistics(self) -> tuple[Statistic, ...]:
        return (self._statistic(),)

    def local_recoding(self) -> bool:
        """Equal and hierarchical distances: the subset's distribution is the reference, as ARX; the
        ordered distance's ranks are not re-derived for a subset yet."""
        return self.distance != "ordered"

    def satisfied(self, s: dict[Statistic, exp.Expression]) -> exp.Expression:
        return exp.LTE(this=s[self._statistic()], expression=lit(float(self.t) + TOLERANCE))

    def satisfied_in_memory(self, s: Mapping[Statistic, np.ndarray]) -> np.ndarray:
        return s[self._statistic()] <= float(self.t) + TOLERANCE

    def achieved(self, s: dict[Statistic, exp.Expression]) -> exp.Expression:
        """The largest EMD of a class: the smallest t the table satisfies."""
        return exp.Max(this=s[self._statistic()])

    def validate_against(self, attributes: dict[str, Any], path: str) -> None:
        a = attributes[self.attribute]
        if self.distance == "hierarchical" and a.hierarchy is None:
            raise SpecError(f"the hierarchical distance needs a `hierarchy:` on attribute "
                            f"{self.attribute!r}", path=f"{path}.distance")
        if self.distance == "ordered" and not a.order and a.type in ("string", "ordinal"):
            raise SpecError(f"the ordered distance needs an order for {a.type} attribute "
                            f"{self.attribute!r}: list its values lowest first in `order:`",
                            path=f"{path}.distance")
