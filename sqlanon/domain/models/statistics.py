"""Per-class statistics over a sensitive attribute's histogram: SQL aggregates and their numpy forms."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from sqlglot import exp

from sqlanon.domain.models.base import ClassTable, HistogramColumns, Statistic
from sqlanon.sql.nodes import as_double, lit

if TYPE_CHECKING:
    import numpy as np


def _share(h: HistogramColumns) -> exp.Expression:
    """p_v: the value's share in its class."""
    return exp.Div(this=as_double(h.c("count")), expression=h.c("size"))


def _global_share(h: HistogramColumns) -> exp.Expression:
    """q_v: the value's share over all rows."""
    return exp.Div(this=as_double(h.c("global_count")), expression=h.c("total"))


@dataclass(frozen=True)
class DistinctCount(Statistic):
    """Number of distinct sensitive values in the class."""

    attribute: str

    def aggregate(self, h: HistogramColumns) -> exp.Expression:
        return exp.Count(this=exp.Star())

    def in_memory(self, classes: ClassTable) -> np.ndarray:
        import numpy as np

        return np.count_nonzero(classes.histogram(self.attribute), axis=1)


@dataclass(frozen=True)
class Entropy(Statistic):
    """Shannon entropy of the class's sensitive values, in nats: −Σ p ln p."""

    attribute: str

    def aggregate(self, h: HistogramColumns) -> exp.Expression:
        p = _share(h)
        return exp.Neg(this=exp.Sum(this=exp.Mul(this=p, expression=exp.Ln(this=p.copy()))))

    def in_memory(self, classes: ClassTable) -> np.ndarray:
        import numpy as np

        h = classes.histogram(self.attribute)
        p = h / classes.sizes[:, None]
        with np.errstate(divide="ignore", invalid="ignore"):
            terms = np.where(h > 0, p * np.log(p), 0.0)
        return -terms.sum(axis=1)


@dataclass(frozen=True)
class TopCount(Statistic):
    """r_1: the count of the most frequent sensitive value in the class."""

    attribute: str

    def aggregate(self, h: HistogramColumns) -> exp.Expression:
        return exp.Max(this=h.c("count"))

    def in_memory(self, classes: ClassTable) -> np.ndarray:
        return classes.histogram(self.attribute).max(axis=1)


@dataclass(frozen=True)
class TailCount(Statistic):
    """r_l + r_(l+1) + … + r_m: counts of the class's values from the l-th most frequent on."""

    attribute: str
    l: int

    def aggregate(self, h: HistogramColumns) -> exp.Expression:
        return exp.Coalesce(this=exp.Sum(this=exp.Case().when(
            exp.GTE(this=h.c("rank_in_class"), expression=lit(self.l)), h.c("count")).else_(lit(0))),
            expressions=[lit(0)])

    def in_memory(self, classes: ClassTable) -> np.ndarray:
        import numpy as np

        desc = -np.sort(-classes.histogram(self.attribute), axis=1)
        return desc[:, self.l - 1:].sum(axis=1)


@dataclass(frozen=True)
class MaxShare(Statistic):
    """The largest share of one sensitive value in the class (α of (α,k)-anonymity)."""

    attribute: str

    def aggregate(self, h: HistogramColumns) -> exp.Expression:
        return exp.Max(this=_share(h))

    def in_memory(self, classes: ClassTable) -> np.ndarray:
        return classes.histogram(self.attribute).max(axis=1) / classes.sizes


@dataclass(frozen=True)
class EqualDistance(Statistic):
    """EMD with equal ground distance = total variation ½Σ|p_v − q_v|, over values present in the class.

    Absent values contribute q_v each, so the sum is (1 + Σ_present(|q_v − p_v| − q_v)) / 2 (ARX).
    """

    attribute: str

    def aggregate(self, h: HistogramColumns) -> exp.Expression:
        q = _global_share(h)
        term = exp.Sub(this=exp.Abs(this=exp.Sub(this=q, expression=_share(h))), expression=q.copy())
        return exp.Div(this=exp.Paren(this=exp.Add(this=lit(1.0), expression=exp.Sum(this=term))),
                       expression=lit(2.0))

    def in_memory(self, classes: ClassTable) -> np.ndarray:
        import numpy as np

        h = classes.histogram(self.attribute)
        q = classes.global_counts(self.attribute) / classes.n
        p = h / classes.sizes[:, None]
        terms = np.where(h > 0, np.abs(q - p) - q, 0.0)
        return (1.0 + terms.sum(axis=1)) / 2.0
