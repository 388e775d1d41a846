"""k-anonymity and the models that only bound class sizes and value counts."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from sqlglot import exp

from sqlanon.domain.models.base import ClassSize, Monotonicity, PrivacyModel, Statistic, register
from sqlanon.errors import SpecError
from sqlanon.sql.nodes import lit

if TYPE_CHECKING:
    import numpy as np


def require_int(value: object, name: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise SpecError(f"{name} must be an integer >= {minimum}, got {value!r}", path=name)
    return value


@register
@dataclass(frozen=True)
class KAnonymity(PrivacyModel):
    """Every equivalence class holds at least ``k`` records.

    Sweeney L. k-anonymity: a model for protecting privacy. IJUFKS 2002;10(5):557-570.

    >>> str(KAnonymity(5))
    '5-anonymity'
    """

    k: int
    name: ClassVar[str] = "k_anonymity"
    monotonicity: ClassVar[Monotonicity] = Monotonicity(generalization=True, suppression=True)

    def __post_init__(self) -> None:
        require_int(self.k, "k", 1)

    def __str__(self) -> str:
        return f"{self.k}-anonymity"

    def local_recoding(self) -> bool:
        return True

    def statistics(self) -> tuple[Statistic, ...]:
        return (ClassSize(),)

    def satisfied(self, s: dict[Statistic, exp.Expression]) -> exp.Expression:
        return exp.GTE(this=s[ClassSize()], expression=lit(self.k))

    def satisfied_in_memory(self, s: Mapping[Statistic, np.ndarray]) -> np.ndarray:
        return s[ClassSize()] >= self.k

    def achieved(self, s: dict[Statistic, exp.Expression]) -> exp.Expression:
        return exp.Min(this=s[ClassSize()])

    def min_class_size(self) -> int:
        return self.k
