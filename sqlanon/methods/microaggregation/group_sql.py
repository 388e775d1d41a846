"""SQL pieces shared by the microaggregation queries: group numbers of ranked rows, group statistics."""

from __future__ import annotations

from collections.abc import Sequence

from sqlglot import exp

from sqlanon.sql.nodes import alias, as_double, col, count_star, internal, lit, table

GROUP = internal("g")


def _minus(a: exp.Expression, b: exp.Expression) -> exp.Expression:
    return exp.Sub(this=a, expression=b)


def _mod(a: exp.Expression, k: int) -> exp.Expression:
    return exp.Mod(this=exp.Paren(this=a), expression=lit(k))


def group_start(rn: exp.Expression, n: exp.Expression, k: int) -> exp.Expression:
    """The group of the row ranked ``rn`` (from 1) among ``n``: runs of ``k``, the ``n mod k`` rows
    left over joining the last run: ``LEAST(rn - 1 - MOD(rn - 1, k), n - MOD(n, k) - k)``."""
    r0 = _minus(rn.copy(), lit(1))
    start = _minus(r0, _mod(r0.copy(), k))
    last = exp.Paren(this=_minus(_minus(n.copy(), _mod(n.copy(), k)), lit(k)))
    return exp.Least(this=start, expressions=[last])


def value_name(i: int) -> str:
    return internal(f"m{i}")


def statistics_query(relation: str, group: str, attributes: Sequence[str], statistic: str,
                     ties: Sequence[str] = ()) -> exp.Select:
    """Per group of ``relation`` (a CTE name): ``group`` and each attribute's mean (or median) as
    ``__sa_m<i>``, DOUBLE (values are cast to DOUBLE first, so numbers stored as text average too).

    The median is R's: the middle value, or the mean of the two middle values, of the group sorted by
    the attribute (``ties`` only make the sort total; they do not change the value).
    """
    g = col(group)
    if statistic == "mean":
        return exp.select(alias(g.copy(), GROUP),
                          *[alias(as_double(exp.Avg(this=as_double(col(a)))), value_name(i))
                            for i, a in enumerate(attributes)]) \
            .from_(table(relation)).group_by(g.copy())
    size = internal("size")
    numbered = [alias(exp.Window(this=exp.RowNumber(), partition_by=[g.copy()], order=exp.Order(
        expressions=[exp.Ordered(this=as_double(col(a)), nulls_first=False),
                     *[exp.Ordered(this=col(t), nulls_first=False) for t in ties if t != a]])),
        internal(f"rn{i}")) for i, a in enumerate(attributes)]
    inner = exp.select(g.copy(), *[col(a) for a in dict.fromkeys(attributes)], *numbered,
                       alias(exp.Window(this=count_star(), partition_by=[g.copy()]), size)) \
        .from_(table(relation))
    middles = []
    for i, a in enumerate(attributes):
        pos2 = exp.Mul(this=lit(2), expression=exp.Paren(this=_minus(col(internal(f"rn{i}")), lit(1))))
        middle = exp.Between(this=pos2, low=_minus(col(size), lit(2)), high=col(size))
        middles.append(alias(as_double(exp.Avg(this=exp.Case(ifs=[exp.If(this=middle,
                                                                          true=as_double(col(a)))]))),
                             value_name(i)))
    return exp.select(alias(g.copy(), GROUP), *middles) \
        .from_(exp.alias_(exp.Subquery(this=inner), internal("ranked"), quoted=True)).group_by(g.copy())
