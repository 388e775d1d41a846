"""Any hierarchy as rows ``(leaf, level1, ..., levelH)`` over given values or a column of a table.

Builders have no table of their own; evaluating their SQL over the values that occur gives one (for
export to ARX's format, for metrics, and to check that the levels nest).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from sqlglot import exp

from sqlanon.domain.hierarchy.base import Hierarchy, HierarchyTable
from sqlanon.sql.nodes import alias, as_text, col

if TYPE_CHECKING:
    from sqlanon.engines.base import Engine


def _distinct_values(relation: exp.Expression, column: str) -> exp.Select:
    return exp.select(alias(col(column), "v")).distinct().from_(relation.copy())


def materialize_column(h: Hierarchy, engine: Engine, relation: exp.Expression,
                       column: str) -> HierarchyTable:
    """One row per distinct value of ``column`` (ordered by value, NULL last), every level as text.

    The leaf is the value as the hierarchy's :meth:`~Hierarchy.key` reads it (for a table hierarchy
    with a ``null_leaf``, NULL is listed under that label).
    """
    d = "__sa_d"
    v = col("v", d)
    levels = [alias(h.key(v.copy()), "l0")]
    levels += [alias(as_text(h.expression(v.copy(), level)), f"l{level}")
               for level in range(1, h.height + 1)]
    query = (exp.select(*levels)
             .from_(exp.alias_(exp.Subquery(this=_distinct_values(relation, column)), d, quoted=True))
             .order_by(exp.Ordered(this=v.copy(), nulls_first=False)))
    _, rows = engine.fetch(query)
    return HierarchyTable(tuple(tuple(r) for r in rows))


def materialize(h: Hierarchy, values: Iterable[Any], engine: Engine) -> HierarchyTable:
    """The hierarchy over ``values`` (numbers, text, dates, timestamps or None), evaluated by
    ``engine``, which reads the values in place (capability ``arrow_in``: the embedded DuckDB of
    :func:`sqlanon.engines.connect`).

    Example:
        >>> from sqlanon.domain.hierarchy.masks import MaskHierarchy
        >>> from sqlanon.engines import connect
        >>> with connect() as scratch:
        ...     materialize(MaskHierarchy(2), [47677, None], scratch).rows
        (('47677', '4767*', '476**'), (None, None, '**'))
    """
    import pyarrow as pa

    with engine.arrow_relation(pa.table({"v": list(values)})) as relation:
        return materialize_column(h, engine, relation, "v")


def uncovered_values(h: Hierarchy, engine: Engine, relation: exp.Expression, column: str
                     ) -> list[str | None]:
    """Distinct values of ``column`` that a table hierarchy has no leaf for (None for NULL), sorted.

    Builders cover every value of their type, so the list is empty for them.
    """
    t = h.table()
    if t is None:
        return []
    d = "__sa_d"
    query = exp.select(alias(h.key(col("v", d)), "k")).distinct().from_(
        exp.alias_(exp.Subquery(this=_distinct_values(relation, column)), d, quoted=True))
    _, rows = engine.fetch(query)
    missing = [r[0] for r in rows if r[0] not in t.mapping]
    return sorted(missing, key=lambda m: (m is None, str(m)))
