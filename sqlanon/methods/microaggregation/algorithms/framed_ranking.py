"""Individual ranking with each attribute's groups and statistics computed in the order of its one
sort: every window of an attribute shares one ``ORDER BY``, as ``ROW_NUMBER() OVER (ORDER BY value,
ties...)`` alone would.

:func:`~sqlanon.methods.microaggregation.algorithms.sql_ranking.individual_ranking` names each row's
group from its row number and gets the group's statistic by grouping (a ``GROUP BY`` joined back, or
a window partitioned by the group): on an engine that runs a window without ``PARTITION BY`` in one
task and inlines common table expressions (Spark), that is one sort per attribute plus a shuffle of
every row per attribute. Here the statistic is read off the sorted rows themselves, for attribute
``a`` with ``n`` non-NULL values (known in advance) and ``L = n - MOD(n, k) - k`` the 0-based position
where the last group starts (it holds the ``m = n - L`` rows left, ``k..2k-1``):

1. with ``p`` the 0-based row number in the order (value NULLS LAST, then the ties), a row that starts a
   group (``p < L`` and ``MOD(p, k) = 0``, or ``p = L``) takes its group's statistic from a fixed-size
   frame of rows that follow it: ``AVG(a) OVER (... ROWS BETWEEN CURRENT ROW AND size - 1 FOLLOWING)``
   for the mean, the frame of the one or two middle rows for the median (the group's rows are sorted
   by the value, so its middle rows are its middle positions);
2. every row then takes the statistic of the last group start at or before it, ``LAST_VALUE(...)
   IGNORE NULLS`` over ``ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW`` in the same order, which
   an engine computes in one pass; a NULL value stays NULL.

Both steps are windows in the order of the sort (Spark: two Window operators after one sort, no
shuffle between them). The groups, the order of their rows and the statistics are those of
:func:`~sqlanon.methods.microaggregation.algorithms.sql_ranking.individual_ranking`; a mean is summed
in the order of the group's rows. ``n`` enters as a number, so the query is for the rows it was
counted on (not for a view read later). The SQL needs ``IGNORE NULLS`` (Spark, DuckDB; not
PostgreSQL).
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlglot import exp

from sqlanon.methods.microaggregation.algorithms.sql_ranking import check_arguments, ranking_orders
from sqlanon.sql.nodes import alias, as_double, as_expression, col, internal, lit, table

_RN, _SIZE_K, _SIZE_M = internal("rn"), internal("stat_k"), internal("stat_m")


def framed_ranking(source: str | exp.Expression, columns: Sequence[str], attributes: Sequence[str], k: int,
                   *, key: Sequence[str] | None, statistic: str, present: Sequence[int]) -> exp.Select:
    """``source`` with each of ``attributes`` replaced by its individual-ranking group's mean or
    median, ``present`` being each attribute's number of non-NULL values in ``source``; the other
    columns pass through, in the order of ``columns``."""
    check_arguments(columns, attributes, k, key, statistic)
    query = exp.select(*[col(c) for c in columns]).from_(_relation(source, internal("src")))
    for i, (a, (_, by)) in enumerate(zip(attributes, ranking_orders(columns, attributes, key))):
        n = present[i]
        if n < k:  # no group of k values: the attribute becomes NULL
            query = exp.select(*[alias(as_double(exp.Null()), c) if c == a else col(c) for c in columns]) \
                .from_(_relation(query, internal(f"none_{i}")))
            continue
        order = exp.Order(expressions=[exp.Ordered(this=col(t), nulls_first=False) for t in by])
        last = n - n % k - k
        sizes = dict.fromkeys([k, n - last])
        numbered = alias(exp.Window(this=exp.RowNumber(), order=order), _RN)
        stats = [alias(_statistic(a, order, size, statistic), _stat(size, k)) for size in sizes]
        starts = exp.select(*[col(c) for c in columns], numbered, *stats) \
            .from_(_relation(query, internal(f"sorted_{i}")))
        p = exp.Paren(this=exp.Sub(this=col(_RN), expression=lit(1)))
        start = exp.Case(ifs=[
            exp.If(this=exp.EQ(this=p.copy(), expression=lit(last)), true=col(_stat(n - last, k))),
            exp.If(this=exp.and_(exp.LT(this=p.copy(), expression=lit(last)),
                                 exp.EQ(this=exp.Mod(this=p.copy(), expression=lit(k)), expression=lit(0))),
                   true=col(_SIZE_K))])
        spread = exp.Window(this=exp.IgnoreNulls(this=exp.LastValue(this=start)), order=order.copy(),
                            spec=exp.WindowSpec(kind="ROWS", start="UNBOUNDED", start_side="PRECEDING",
                                                end="CURRENT ROW"))
        valued = exp.Not(this=exp.Is(this=col(a), expression=exp.Null()))
        query = exp.select(*[alias(exp.Case(ifs=[exp.If(this=valued, true=spread)]), c) if c == a else col(c)
                             for c in columns]) \
            .from_(_relation(starts, internal(f"started_{i}")))
    return query


def _stat(size: int, k: int) -> str:
    return _SIZE_K if size == k else _SIZE_M


def _statistic(a: str, order: exp.Order, size: int, statistic: str) -> exp.Expression:
    """The statistic of the ``size`` rows from the current one on: their mean, or the mean of their
    one or two middle rows (R's median)."""
    low, high = (0, size - 1) if statistic == "mean" else ((size - 1) // 2, size // 2)
    frame = exp.WindowSpec(kind="ROWS", start=_bound(low), start_side=None if low == 0 else "FOLLOWING",
                           end=_bound(high), end_side=None if high == 0 else "FOLLOWING")
    return as_double(exp.Window(this=exp.Avg(this=col(a)), order=order.copy(), spec=frame))


def _bound(offset: int) -> exp.Expression | str:
    return "CURRENT ROW" if offset == 0 else lit(offset)


def _relation(source: str | exp.Expression, name: str) -> exp.Expression:
    if isinstance(source, str):
        source = table(source)
    if isinstance(source, (exp.Table, exp.Subquery)):
        return as_expression(exp.alias_(source.copy(), name, table=True, quoted=True))
    return as_expression(exp.alias_(exp.Subquery(this=source.copy()), name, quoted=True))
