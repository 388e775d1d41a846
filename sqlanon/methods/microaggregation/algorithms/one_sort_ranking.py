"""Individual ranking with each attribute's groups and statistics computed in the order of its one
sort: every window of an attribute shares one ``ORDER BY``, as ``ROW_NUMBER() OVER (ORDER BY value,
ties...)`` alone would, so an engine evaluates them together after that one sort.

:func:`~sqlanon.methods.microaggregation.algorithms.sql_ranking.individual_ranking` names each row's
group from its row number and gets the group's statistic by grouping (a ``GROUP BY`` joined back, or
a window partitioned by the group): on an engine that runs a window without ``PARTITION BY`` in one
task and inlines common table expressions (Spark), that is one sort per attribute plus a shuffle of
every row per attribute. Here the statistic is read off the sorted rows themselves, for attribute
``a`` with ``n`` non-NULL values (known in advance) and ``L = n - MOD(n, k) - k`` the 0-based position
where the last group starts (it holds the ``m = n - L`` rows left, ``k..2k-1``): the row numbered
``p`` (from 0, value NULLS LAST, then the ties) is at offset ``o = MOD(p, k)`` in a group of ``k``
rows (``p < L``), or at ``o = p - L`` in the last group (``L <= p < n``); its group's rows are the
rows ``-o .. size - 1 - o`` from it, read with ``LAG`` and ``LEAD`` (``CASE`` on ``o`` picks the
ones of its group). The mean is their sum, in the group's order, divided by the size; the median
the middle row's value or the mean of the two middle rows' (the group's rows are sorted by the
value). A NULL value stays NULL; with ``n < k`` every value becomes NULL.

All of an attribute's windows share its order and have no frame to aggregate over (Spark: one Window
operator after one sort, holding one copy of the rows, as the bare ``ROW_NUMBER`` window). The groups
and statistics are those of
:func:`~sqlanon.methods.microaggregation.algorithms.sql_ranking.individual_ranking`. ``n`` enters as
a number, so the query is for the rows it was counted on (not for a view read later).
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlglot import exp

from sqlanon.methods.microaggregation.algorithms.sql_ranking import check_arguments, ranking_orders
from sqlanon.methods.microaggregation.rows import as_relation
from sqlanon.sql.nodes import alias, as_double, col, internal, lit, table

_RN = internal("rn")


def one_sort_ranking(source: str | exp.Expression, columns: Sequence[str], attributes: Sequence[str],
                     k: int, *, key: Sequence[str] | None, statistic: str, present: Sequence[int]
                     ) -> exp.Select:
    """``source`` with each of ``attributes`` replaced by its individual-ranking group's mean or
    median, ``present`` being each attribute's number of non-NULL values in ``source``; the other
    columns pass through, in the order of ``columns``."""
    check_arguments(columns, attributes, k, key, statistic)
    relation = table(source) if isinstance(source, str) else source
    query = exp.select(*[col(c) for c in columns]).from_(as_relation(relation, internal("src")))
    for i, (a, (_, by)) in enumerate(zip(attributes, ranking_orders(columns, attributes, key))):
        n = present[i]
        if n < k:  # no group of k values: the attribute becomes NULL
            query = exp.select(*[alias(as_double(exp.Null()), c) if c == a else col(c) for c in columns]) \
                .from_(as_relation(query, internal(f"none_{i}")))
            continue
        order = exp.Order(expressions=[exp.Ordered(this=col(t), nulls_first=False) for t in by])
        last = n - n % k - k
        groups = [(o, k) for o in range(k)], [(o, n - last) for o in range(n - last)]
        shifts = sorted({d - o for runs in groups for o, size in runs for d in _members(size, statistic)})
        windows = [alias(exp.Window(this=exp.RowNumber(), order=order), _RN),
                   *[alias(_shifted(a, order, d), _shift_name(d)) for d in shifts if d != 0]]
        sorted_rows = exp.select(*[col(c) for c in columns], *windows) \
            .from_(as_relation(query, internal(f"sorted_{i}")))
        p = exp.Paren(this=exp.Sub(this=col(_RN), expression=lit(1)))
        offsets = (exp.Mod(this=p.copy(), expression=lit(k)), exp.Sub(this=p.copy(), expression=lit(last)))
        in_run, in_last = [
            exp.Case(this=offset, ifs=[exp.If(this=lit(o), true=_statistic(a, o, size, statistic))
                                       for o, size in runs])
            for offset, runs in zip(offsets, groups)]
        value = exp.Case(ifs=[exp.If(this=exp.GTE(this=p, expression=lit(last)), true=in_last)],
                         default=in_run)
        query = exp.select(*[alias(value, c) if c == a else col(c) for c in columns]) \
            .from_(as_relation(sorted_rows, internal(f"grouped_{i}")))
    return query


def _members(size: int, statistic: str) -> range:
    """The positions in a group of ``size`` rows whose values make its statistic."""
    return range(size) if statistic == "mean" else range((size - 1) // 2, size // 2 + 1)


def _shift_name(rows: int) -> str:
    return internal(f"next_{rows}" if rows > 0 else f"prev_{-rows}")


def _statistic(a: str, offset: int, size: int, statistic: str) -> exp.Expression:
    """The mean (or R's median) of a group of ``size`` rows, seen from its row at ``offset``: the
    values summed in the group's order."""
    terms = [as_double(col(a)) if d == offset else col(_shift_name(d - offset))
             for d in _members(size, statistic)]
    total = terms[0]
    for term in terms[1:]:
        total = exp.Add(this=total, expression=term)
    return exp.Div(this=exp.Paren(this=total), expression=as_double(lit(len(terms))))


def _shifted(a: str, order: exp.Order, rows: int) -> exp.Expression:
    """``a`` as DOUBLE on the row ``rows`` rows after the current one (before it, if negative)."""
    shift = exp.Lead if rows > 0 else exp.Lag
    return exp.Window(this=shift(this=as_double(col(a)), offset=lit(abs(rows))), order=order.copy())

