"""Individual-ranking microaggregation as one SQL query (window functions, built with sqlglot).

Each attribute is microaggregated on its own (Defays D, Nanopoulos P. Panels of enterprises and
confidentiality: the small aggregates method. Proc. 1992 Symposium on Design and Analysis of Longitudinal
Surveys, Statistics Canada, 195-204; Domingo-Ferrer J, Mateo-Sanz JM. Practical data-oriented
microaggregation for statistical disclosure control. IEEE TKDE 2002;14(1):189-201):

1. the rows are numbered by the attribute's value, ties broken by a key:
   ``ROW_NUMBER() OVER (ORDER BY value, key...)``;
2. consecutive numbers form groups of ``k``; the ``n mod k`` rows left over join the **last** group,
   which therefore holds ``k..2k-1`` rows. This is sdcMicro's rule for ``microaggregation(method =
   "onedims")`` (its ``indexMicro`` gives the rows from the last full group's start to ``n`` one group)
   and the worked example of Domingo-Ferrer J, Sánchez D, Soria-Comas J. Database Anonymization.
   Morgan & Claypool 2016, Lemma 10.1 (1..10 with k = 3 gives {1,2,3}, {4,5,6}, {7,8,9,10});
3. every value becomes its group's mean (or median: the middle value, or the mean of the two middle
   values, as R's ``median``). Results are DOUBLE.

The group of the row numbered ``r`` (from 1) among ``n`` ranked values starts at index
``LEAST(r - 1 - MOD(r - 1, k), n - MOD(n, k) - k)``: integer arithmetic only, so every target
computes the same groups.

NULLs: a NULL value stays NULL and is ranked apart; the groups are formed over the ``n`` non-NULL values
only. When fewer than ``k`` values are non-NULL no group of ``k`` exists and the whole attribute becomes
NULL. All other columns pass through unchanged, in their order.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlglot import exp

from sqlanon.errors import SpecError, did_you_mean
from sqlanon.sql.nodes import (
    INTERNAL_PREFIX,
    alias,
    as_double,
    as_expression,
    col,
    internal,
    lit,
    table,
)

STATISTICS = ("mean", "median")
_SOURCE = internal("src")
_RANKED = internal("ranked")
_GROUPED = internal("grouped")


def check_arguments(columns: Sequence[str], attributes: Sequence[str], k: object,
                    key: Sequence[str] | None, statistic: str) -> None:
    where = "individual_ranking"
    if isinstance(k, bool) or not isinstance(k, int) or k < 2:
        raise SpecError(f"k must be an integer >= 2, got {k!r}", path=f"{where}.k")
    if statistic not in STATISTICS:
        raise SpecError(f"unknown statistic {statistic!r}; choose one of {', '.join(STATISTICS)}."
                        + did_you_mean(statistic, STATISTICS), path=f"{where}.statistic")
    for i, c in enumerate(columns):
        if c.startswith(INTERNAL_PREFIX):
            raise SpecError(f"column {c!r} uses the prefix {INTERNAL_PREFIX!r} reserved for sqlanon",
                            path=f"{where}.columns[{i}]")
    if len(set(columns)) != len(columns):
        twice = sorted({c for c in columns if list(columns).count(c) > 1})
        raise SpecError(f"columns named more than once: {twice}", path=f"{where}.columns")
    if not attributes:
        raise SpecError("no attribute to microaggregate", path=f"{where}.attributes")
    for label, names in (("attributes", attributes), ("key", key or ())):
        seen: set[str] = set()
        for i, a in enumerate(names):
            if a not in columns:
                raise SpecError(f"{a!r} is not a column of the source" + did_you_mean(a, columns),
                                path=f"{where}.{label}[{i}]")
            if a in seen:
                raise SpecError(f"{a!r} is named twice", path=f"{where}.{label}[{i}]")
            seen.add(a)


def _relation(source: str | exp.Expression) -> exp.Expression:
    if isinstance(source, str):
        source = table(source)
    if isinstance(source, (exp.Table, exp.Subquery)):
        return as_expression(exp.alias_(source.copy(), _SOURCE, table=True, quoted=True))
    return as_expression(exp.alias_(exp.Subquery(this=source.copy()), _SOURCE, quoted=True))


def _minus(a: exp.Expression, b: exp.Expression) -> exp.Expression:
    return exp.Sub(this=a, expression=b)


def _mod(a: exp.Expression, b: exp.Expression) -> exp.Expression:
    return exp.Mod(this=exp.Paren(this=a), expression=b)


def _last_start(n: exp.Expression, k: int) -> exp.Expression:
    """Where the last group starts among ``n`` ranked values: ``n - MOD(n, k) - k``."""
    return exp.Paren(this=_minus(_minus(n.copy(), _mod(n.copy(), lit(k))), lit(k)))


def rank_column(i: int) -> str:
    """The name of the ``i``-th attribute's row number."""
    return internal(f"rn_{i}")


def ranking_orders(columns: Sequence[str], attributes: Sequence[str],
                   key: Sequence[str] | None = None) -> list[tuple[str, list[str]]]:
    """Each attribute's row number and the columns it orders the rows by: the attribute, then the
    columns breaking its ties (``key``, by default every other column)."""
    return [(rank_column(i), [a, *(list(key) if key is not None else [c for c in columns if c != a])])
            for i, a in enumerate(attributes)]


def individual_ranking(source: str | exp.Expression, columns: Sequence[str], attributes: Sequence[str],
                       k: int, *, key: Sequence[str] | None = None,
                       statistic: str = "mean", present: Sequence[int] | None = None) -> exp.Select:
    """A SELECT returning ``source`` with each of ``attributes`` microaggregated by individual ranking.

    The query ranks every attribute in one window pass (``ROW_NUMBER`` and ``COUNT`` per attribute), names
    each row's group (``__sa_g_<i>``, the group's first 0-based rank), aggregates each attribute by its
    groups and joins the group statistics back. The ranked rows are a common table expression read once
    per attribute: DuckDB, PostgreSQL and Snowflake compute it once; engines that inline CTEs (Spark,
    BigQuery, Trino) rank again per attribute, with the same result because the order is total.

    Args:
        source: a table name (one identifier), a sqlglot table, or a sqlglot query.
        columns: every column of ``source``, in the order the result should have them.
        attributes: the numeric columns to microaggregate, each independently.
        k: the minimum group size (>= 2); groups hold ``k..2k-1`` values.
        key: columns that break ties between equal values, in order. Give a unique key (such as a primary
            key) for a result that is the same row for row on every engine. By default all other
            columns, in order: rows that tie on all of them are identical, so the result is the same
            multiset of rows whichever way the tie falls.
        statistic: ``"mean"`` or ``"median"``.
        present: each attribute's number of non-NULL values, when ``source`` holds the rows already
            numbered in each attribute's order (:func:`ranking_orders`) as :func:`rank_column`
            (an engine's :meth:`~sqlanon.engines.base.Engine.number_rows`): the query then reads
            those numbers instead of ranking the rows with windows.

    Returns:
        The query; it renders for every supported dialect.

    Raises:
        SpecError: ``k``, ``statistic`` or a column name is invalid (the message names it).

    Example:
        Database Anonymization (2016), Lemma 10.1: 1..10 with k = 3.

        >>> import duckdb
        >>> from sqlanon.sql.render import render
        >>> con = duckdb.connect()
        >>> _ = con.execute("CREATE TABLE t AS SELECT range AS id, range + 1 AS x FROM range(10)")
        >>> q = individual_ranking("t", ["id", "x"], ["x"], 3, key=["id"])
        >>> [x for _, x in sorted(con.execute(render(q, "duckdb")).fetchall())]
        [2.0, 2.0, 2.0, 5.0, 5.0, 5.0, 8.5, 8.5, 8.5, 8.5]
    """
    check_arguments(columns, attributes, k, key, statistic)
    passthrough = [alias(col(c), c) for c in columns]

    ranked = []
    for i, (number, by) in enumerate(ranking_orders(columns, attributes, key)):
        if present is not None:
            ranked += [alias(col(number), number), alias(lit(present[i]), internal(f"n_{i}"))]
            continue
        order = exp.Order(expressions=[exp.Ordered(this=col(t), nulls_first=False) for t in by])
        ranked.append(alias(exp.Window(this=exp.RowNumber(), order=order), number))
        ranked.append(alias(exp.Window(this=exp.Count(this=col(by[0]))), internal(f"n_{i}")))
    q1 = exp.select(*passthrough, *ranked).from_(_relation(source))

    grouped = []
    for i, a in enumerate(attributes):
        rn, n = col(internal(f"rn_{i}")), col(internal(f"n_{i}"))
        r0 = _minus(rn.copy(), lit(1))
        start = _minus(r0, _mod(r0.copy(), lit(k)))
        valued = exp.and_(exp.Not(this=exp.Is(this=col(a), expression=exp.Null())),
                          exp.GTE(this=n.copy(), expression=lit(k)))
        last = exp.Least(this=start, expressions=[_last_start(n, k)])
        g: exp.Expression = exp.Case(ifs=[exp.If(this=valued, true=last)])
        grouped.append(alias(g, internal(f"g_{i}")))
        if statistic == "median":
            grouped += [alias(rn.copy(), internal(f"rn_{i}")), alias(n.copy(), internal(f"n_{i}"))]
    q2 = exp.select(*passthrough, *grouped).from_(exp.alias_(exp.Subquery(this=q1), _RANKED, quoted=True))
    if present is not None:
        return _statistics_by_windows(q2, columns, attributes, k, statistic)

    out = exp.select(*[alias(col(c, _GROUPED), c) if c not in attributes
                       else alias(col(internal("v"), internal(f"m_{list(attributes).index(c)}")), c)
                       for c in columns]).from_(table(_GROUPED))
    out = out.with_(exp.to_identifier(_GROUPED, quoted=True), as_=q2)
    for i, a in enumerate(attributes):
        g = col(internal(f"g_{i}"))
        value: exp.Expression = col(a)
        if statistic == "median":
            value = _middle(value, col(internal(f"rn_{i}")), col(internal(f"n_{i}")), g, k)
        stats = exp.select(alias(g.copy(), internal("g")),
                           alias(as_double(exp.Avg(this=value)), internal("v"))) \
            .from_(table(_GROUPED)).where(exp.Not(this=exp.Is(this=g.copy(), expression=exp.Null()))) \
            .group_by(g.copy())
        name = internal(f"m_{i}")
        out = out.with_(exp.to_identifier(name, quoted=True), as_=stats)
        on = exp.EQ(this=col(internal(f"g_{i}"), _GROUPED), expression=col(internal("g"), name))
        out = out.join(table(name), on=on, join_type="left")
    return out


def _statistics_by_windows(grouped: exp.Select, columns: Sequence[str], attributes: Sequence[str], k: int,
                           statistic: str) -> exp.Select:
    """Each attribute's group statistic as a window partitioned by its group, over rows an engine
    numbered itself: such an engine spreads the rows over its workers, where a window partitioned by
    the group moves the rows once, and the join of grouped statistics aggregates them and moves both
    sides of the join. The values are the join form's (a row without a group stays NULL)."""
    out = []
    for c in columns:
        if c not in attributes:
            out.append(alias(col(c), c))
            continue
        i = list(attributes).index(c)
        g = col(internal(f"g_{i}"))
        value: exp.Expression = col(c)
        if statistic == "median":
            value = _middle(value, col(internal(f"rn_{i}")), col(internal(f"n_{i}")), g, k)
        mean = as_double(exp.Window(this=exp.Avg(this=value), partition_by=[g.copy()]))
        grouped_row = exp.Not(this=exp.Is(this=g.copy(), expression=exp.Null()))
        out.append(alias(exp.Case(ifs=[exp.If(this=grouped_row, true=mean)]), c))
    return exp.select(*out).from_(exp.alias_(exp.Subquery(this=grouped), _GROUPED, quoted=True))


def _middle(value: exp.Expression, rn: exp.Expression, n: exp.Expression, g: exp.Expression,
            k: int) -> exp.Expression:
    """``value`` on the one or two middle rows of its group, else NULL (their mean is the median).

    With ``pos`` the 0-based position in the group and ``size`` its size, the middle rows are those with
    ``size - 2 <= 2 * pos <= size``: ``pos = (size - 1) / 2`` for odd sizes, ``size/2 - 1`` and
    ``size/2`` for even ones.
    """
    last = _last_start(n, k)
    size = exp.Paren(this=exp.Case(ifs=[exp.If(this=exp.EQ(this=g.copy(), expression=last),
                                               true=_minus(n.copy(), last.copy()))], default=lit(k)))
    pos2 = exp.Mul(this=lit(2), expression=exp.Paren(this=_minus(_minus(rn.copy(), lit(1)), g.copy())))
    middle = exp.Between(this=pos2, low=_minus(size, lit(2)), high=size.copy())
    return exp.Case(ifs=[exp.If(this=middle, true=value)])
