"""l-diversity: distinct, entropy and recursive (c,l); plus p-sensitive k-anonymity and (α,k)-anonymity."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from sqlglot import exp

from sqlanon.domain.models.base import ClassSize, Monotonicity, PrivacyModel, Statistic, register
from sqlanon.domain.models.k_anonymity import require_int
from sqlanon.domain.models.statistics import DistinctCount, Entropy, MaxShare, TailCount, TopCount
from sqlanon.errors import InternalError, SpecError, did_you_mean
from sqlanon.sql.nodes import as_double, as_expression, lit

if TYPE_CHECKING:
    import numpy as np

VARIANTS = ("distinct", "entropy", "recursive")


@register
@dataclass(frozen=True)
class LDiversity(PrivacyModel):
    """Each class holds at least ``l`` "well-represented" values of a sensitive attribute.

    Machanavajjhala A, Kifer D, Gehrke J, Venkitasubramaniam M. l-diversity: privacy beyond
    k-anonymity. ACM TKDD 2007;1(1).

    * ``distinct``: at least ⌈l⌉ distinct values;
    * ``entropy``: H(E) = −Σ p ln p ≥ ln l;
    * ``recursive``: r_1 < c·(r_l + … + r_m) with counts sorted descending.

    >>> str(LDiversity("disease", 3, variant="recursive", c=4))
    'recursive-(4,3)-diversity of disease'
    """

    attribute: str
    l: float
    variant: str = "distinct"
    c: float | None = None
    name: ClassVar[str] = "l_diversity"
    monotonicity: ClassVar[Monotonicity] = Monotonicity(generalization=True, suppression=True)

    def __post_init__(self) -> None:
        if self.variant not in VARIANTS:
            raise SpecError(f"unknown l-diversity variant {self.variant!r}; use one of "
                            f"{', '.join(VARIANTS)}." + did_you_mean(self.variant, VARIANTS),
                            path="variant")
        if isinstance(self.l, bool) or not isinstance(self.l, (int, float)) or not self.l >= 1:
            raise SpecError(f"l must be a number >= 1, got {self.l!r}", path="l")
        if self.variant == "recursive":
            require_int(self.l, "l", 1)
            if self.c is None or isinstance(self.c, bool) or not isinstance(self.c, (int, float)) \
                    or not self.c > 0:
                raise SpecError(f"recursive (c,l)-diversity needs c > 0, got {self.c!r}", path="c")
        elif self.c is not None:
            raise SpecError(f"c only applies to the recursive variant, not {self.variant!r}",
                            path="c")
        if self.variant == "distinct" and not float(self.l).is_integer():
            object.__setattr__(self, "l", float(self.l))

    def __str__(self) -> str:
        if self.variant == "recursive":
            return f"recursive-({_num(self.c)},{_num(self.l)})-diversity of {self.attribute}"
        return f"{self.variant}-{_num(self.l)}-diversity of {self.attribute}"

    @property
    def label(self) -> str:
        return f"{self.name}[{self.attribute}]"

    def local_recoding(self) -> bool:
        return True

    def statistics(self) -> tuple[Statistic, ...]:
        a = self.attribute
        if self.variant == "distinct":
            return (DistinctCount(a),)
        if self.variant == "entropy":
            return (Entropy(a),)
        return (TopCount(a), TailCount(a, int(self.l)))

    def satisfied(self, s: dict[Statistic, exp.Expression]) -> exp.Expression:
        a = self.attribute
        if self.variant == "distinct":
            return exp.GTE(this=s[DistinctCount(a)], expression=lit(math.ceil(self.l)))
        if self.variant == "entropy":
            # a tolerance so that a class of exactly l equally frequent values passes
            return exp.GTE(this=s[Entropy(a)], expression=lit(math.log(self.l) - 1e-12))
        assert self.c is not None  # the recursive variant has its c (__post_init__)
        return exp.LT(this=s[TopCount(a)],
                      expression=exp.Mul(this=lit(float(self.c)), expression=s[TailCount(a, int(self.l))]))

    def satisfied_in_memory(self, s: Mapping[Statistic, np.ndarray]) -> np.ndarray:
        a = self.attribute
        if self.variant == "distinct":
            return s[DistinctCount(a)] >= math.ceil(self.l)
        if self.variant == "entropy":
            return s[Entropy(a)] >= math.log(self.l) - 1e-12
        if self.c is None:
            raise InternalError("recursive (c,l)-diversity without its c")
        return s[TopCount(a)] < float(self.c) * s[TailCount(a, int(self.l))]

    def achieved(self, s: dict[Statistic, exp.Expression]) -> exp.Expression | None:
        a = self.attribute
        if self.variant == "distinct":
            return exp.Min(this=s[DistinctCount(a)])
        if self.variant == "entropy":
            return exp.Exp(this=exp.Min(this=s[Entropy(a)]))  # the largest l with H >= ln l
        return None  # c and l trade off; report holds only

    def min_class_size(self) -> int:
        return math.ceil(self.l) if self.variant in ("distinct", "recursive") else 1


@register
@dataclass(frozen=True)
class PSensitiveKAnonymity(PrivacyModel):
    """k-anonymous, and every class holds at least ``p`` distinct values of the sensitive attribute.

    Truta TM, Vinay B. Privacy protection: p-sensitive k-anonymity property. ICDE Workshops 2006.
    """

    attribute: str
    k: int
    p: int
    name: ClassVar[str] = "p_sensitive_k_anonymity"
    monotonicity: ClassVar[Monotonicity] = Monotonicity(generalization=True, suppression=True)

    def __post_init__(self) -> None:
        require_int(self.k, "k", 1)
        require_int(self.p, "p", 1)
        if self.p > self.k:
            raise SpecError(f"p ({self.p}) must not exceed k ({self.k})", path="p")

    def __str__(self) -> str:
        return f"{self.p}-sensitive {self.k}-anonymity of {self.attribute}"

    @property
    def label(self) -> str:
        return f"{self.name}[{self.attribute}]"

    def statistics(self) -> tuple[Statistic, ...]:
        return (ClassSize(), DistinctCount(self.attribute))

    def satisfied(self, s: dict[Statistic, exp.Expression]) -> exp.Expression:
        return as_expression(exp.and_(exp.GTE(this=s[ClassSize()], expression=lit(self.k)),
                        exp.GTE(this=s[DistinctCount(self.attribute)], expression=lit(self.p))))

    def satisfied_in_memory(self, s: Mapping[Statistic, np.ndarray]) -> np.ndarray:
        return (s[ClassSize()] >= self.k) & (s[DistinctCount(self.attribute)] >= self.p)

    def achieved(self, s: dict[Statistic, exp.Expression]) -> exp.Expression:
        return exp.Min(this=s[DistinctCount(self.attribute)])

    def min_class_size(self) -> int:
        return self.k


@register
@dataclass(frozen=True)
class AlphaKAnonymity(PrivacyModel):
    """k-anonymous, and no sensitive value has a share above ``alpha`` in any class.

    Wong RC-W, Li J, Fu AW-C, Wang K. (α,k)-anonymity: an enhanced k-anonymity model for
    privacy-preserving data publishing. KDD 2006.
    """

    attribute: str
    alpha: float
    k: int
    name: ClassVar[str] = "alpha_k_anonymity"
    monotonicity: ClassVar[Monotonicity] = Monotonicity(generalization=True, suppression=True)

    def __post_init__(self) -> None:
        require_int(self.k, "k", 1)
        if isinstance(self.alpha, bool) or not isinstance(self.alpha, (int, float)) \
                or not 0 < self.alpha <= 1:
            raise SpecError(f"alpha must be in (0, 1], got {self.alpha!r}", path="alpha")

    def __str__(self) -> str:
        return f"({_num(self.alpha)},{self.k})-anonymity of {self.attribute}"

    @property
    def label(self) -> str:
        return f"{self.name}[{self.attribute}]"

    def statistics(self) -> tuple[Statistic, ...]:
        return (ClassSize(), MaxShare(self.attribute))

    def satisfied(self, s: dict[Statistic, exp.Expression]) -> exp.Expression:
        return as_expression(exp.and_(exp.GTE(this=s[ClassSize()], expression=lit(self.k)),
                        exp.LTE(this=s[MaxShare(self.attribute)],
                                expression=lit(float(self.alpha) + 1e-12))))

    def satisfied_in_memory(self, s: Mapping[Statistic, np.ndarray]) -> np.ndarray:
        return (s[ClassSize()] >= self.k) & (s[MaxShare(self.attribute)] <= float(self.alpha) + 1e-12)

    def achieved(self, s: dict[Statistic, exp.Expression]) -> exp.Expression:
        return exp.Max(this=as_double(s[MaxShare(self.attribute)]))

    def min_class_size(self) -> int:
        return self.k


def _num(v: float | None) -> str:
    if v is None:
        return "?"
    return str(int(v)) if float(v).is_integer() else str(v)
