"""The share of released records in small classes, as the risk-based models judge it per class.

ARX's risk-based criteria (sample uniqueness, the records at risk of the average risk) measure the
released records only: the classes left once the smallest ones are suppressed. A privacy model here
decides each class on its own, so a class of size x is judged on the table with every class smaller
than x suppressed: the statistic below is, for each class, the share of the records in classes of
at least its size that sit in classes smaller than ``bound``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from sqlglot import exp

from sqlanon.domain.models.base import CheckContext, ClassTable, N, Statistic
from sqlanon.sql.nodes import alias, as_double, col, internal, lit

if TYPE_CHECKING:
    import numpy as np

_SIZE = internal("rs_size")


def _from_largest(value: exp.Expression, size: exp.Expression) -> exp.Window:
    """Σ value over the classes at least as large as this one (the default frame, RANGE up to the
    current row, takes the classes of equal size with it)."""
    return exp.Window(this=exp.Sum(this=value),
                      order=exp.Order(expressions=[exp.Ordered(this=size.copy(), desc=True)]))


@dataclass(frozen=True)
class ReleasedShareBelow(Statistic):
    """Among the records of the classes at least as large as this one, the share in classes of
    fewer than ``bound`` records (0 when this class has ``bound`` records or more)."""

    bound: int

    def class_query(self, ctx: CheckContext) -> exp.Select:
        qis = [col(q) for q in ctx.qis]
        classes = exp.select(*qis, alias(exp.Sum(this=col(N)), _SIZE)).from_(ctx.gen.copy()).group_by(
            *[q.copy() for q in qis])
        size = col(_SIZE)
        small = exp.Case().when(exp.LT(this=size.copy(), expression=lit(int(self.bound))), size.copy()) \
            .else_(lit(0))
        share = exp.Div(this=as_double(_from_largest(small, size)),
                        expression=as_double(_from_largest(size.copy(), size)))
        return exp.select(*[q.copy() for q in qis], alias(share, self.column)).from_(
            exp.alias_(exp.Subquery(this=classes), internal("rs0"), quoted=True))

    def in_memory(self, classes: ClassTable) -> np.ndarray:
        import numpy as np

        sizes = classes.sizes.astype(np.int64)
        if len(sizes) == 0:
            return np.zeros(0)
        ordered = np.sort(sizes)
        # suffix sums over the sorted sizes: Σ over the classes from position i to the largest
        rows = np.concatenate([np.cumsum(ordered[::-1])[::-1], [0]])
        small = np.where(ordered < self.bound, ordered, 0)
        small_rows = np.concatenate([np.cumsum(small[::-1])[::-1], [0]])
        first = np.searchsorted(ordered, sizes, side="left")
        return small_rows[first].astype(np.float64) / rows[first].astype(np.float64)
