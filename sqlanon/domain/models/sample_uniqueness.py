"""A bound on the share of sample-unique records (ARX's ``SampleUniqueness``).

A record alone in its class is unique in the sample: whoever knows its quasi-identifiers and that it
is in the table finds it (the prosecutor's certain match). ARX checks the share of the released
records in classes of one record against the threshold and suppresses classes, smallest first, until
it holds. Per class here: a class of size x is kept when the table with every class smaller than x
suppressed meets the bound. Classes of two or more records then always stay; the single records stay
when their share of the whole table is within the bound, and go all together otherwise (ARX may keep
some of them).

Monotone under generalization and suppression, as ARX declares: coarser classes hold no more single
records, so a node meeting the bound, or suppressing its single records within the budget, has
coarser nodes that do too.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from sqlglot import exp

from sqlanon.domain.models.base import Monotonicity, PrivacyModel, Statistic, register
from sqlanon.domain.models.released_share import ReleasedShareBelow
from sqlanon.domain.models.t_closeness import require_number
from sqlanon.sql.nodes import lit

if TYPE_CHECKING:
    import numpy as np

UNIQUES = ReleasedShareBelow(2)
"""The share of the released records alone in their class."""


@register
@dataclass(frozen=True)
class SampleUniqueness(PrivacyModel):
    """At most ``threshold`` of the released records are unique in the table.

    Prasser F, Kohlmayer F. Putting statistical disclosure control into practice: the ARX data
    anonymization tool. In: Medical Data Privacy Handbook. Springer; 2015 (sample uniqueness).

    >>> str(SampleUniqueness(0.01))
    '0.01-sample uniqueness'
    """

    threshold: float
    name: ClassVar[str] = "sample_uniqueness"
    monotonicity: ClassVar[Monotonicity] = Monotonicity(generalization=True, suppression=True)

    def __post_init__(self) -> None:
        require_number(self.threshold, "threshold", 0.0, 1.0)

    def __str__(self) -> str:
        return f"{self.threshold:g}-sample uniqueness"

    def statistics(self) -> tuple[Statistic, ...]:
        return (UNIQUES,)

    def satisfied(self, s: dict[Statistic, exp.Expression]) -> exp.Expression:
        return exp.LTE(this=s[UNIQUES], expression=lit(float(self.threshold)))

    def satisfied_in_memory(self, s: Mapping[Statistic, np.ndarray]) -> np.ndarray:
        return s[UNIQUES] <= float(self.threshold)

    def achieved(self, s: dict[Statistic, exp.Expression]) -> exp.Expression:
        """The share of sample-unique records among those released (the largest over the kept
        classes is that of the smallest kept class: the release's own)."""
        return exp.Max(this=s[UNIQUES])
