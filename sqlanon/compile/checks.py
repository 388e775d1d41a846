"""SQL for checking privacy models on a generalized table.

Relations, in order (names are plan steps):

* ``freq``: ``GROUP BY`` the raw QIs and sensitive attributes with a row count: the one scan of the source;
* ``gen``: the frequency table with QIs generalized to the node's levels;
* ``hist_<i>``: per sensitive attribute, one row per (class, value) with the columns of
  :class:`~sqlanon.domain.models.base.HistogramColumns`;
* ``stats``: one row per class: the QIs, ``__sa_size`` and every statistic the models read;
* ``verdict``: ``stats`` plus one boolean per model and ``__sa_keep`` (the class satisfies every model).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from sqlglot import exp

from sqlanon.compile.generalize import Generalizer
from sqlanon.compile.plan import nullsafe_join
from sqlanon.domain.models.base import (
    KEEP,
    SIZE,
    CheckContext,
    ClassSize,
    H,
    N,
    PrivacyModel,
    Statistic,
    stat_attribute,
)
from sqlanon.errors import InternalError
from sqlanon.sql.nodes import alias, as_expression, col, count_star, internal, lit

__all__ = ["CheckContext", "KEEP", "N", "SIZE", "frequency_query", "generalized_query", "histogram_query",
           "ok_column", "stats_query", "summary_query", "verdict_query"]


WEIGHT = internal("w")
"""A person-level relation's weight column: 1 on one row of each person (its class size counts persons)."""
PAIRS = internal("pairs")
"""With :data:`WEIGHT`, the frequency table's row count (each sensitive value a person has, once),
which the histograms count while :data:`N` sums the weight."""


def ok_column(index: int) -> str:
    return internal(f"ok{index}")


def frequency_query(source: exp.Expression, qis: Sequence[str], sensitive: Sequence[str], *,
                    weighted: bool = False, extra: Sequence[str] = ()) -> exp.Select:
    """``weighted``: the source has :data:`WEIGHT`; N sums it and :data:`PAIRS` counts the rows.
    ``extra``: more columns grouped on and kept (persons' fit levels)."""
    cols = [*qis, *sensitive, *extra]
    counts = [alias(exp.Sum(this=col(WEIGHT)), N), alias(count_star(), PAIRS)] if weighted else \
        [alias(count_star(), N)]
    return exp.select(*[col(c) for c in cols], *counts).from_(source.copy()).group_by(
        *[col(c) for c in cols])


def generalized_query(freq: exp.Table, generalizer: Generalizer, levels: Mapping[str, int],
                      sensitive: Sequence[str], *, weighted: bool = False,
                      where: exp.Expression | None = None) -> exp.Select:
    """``where``: the frequency rows that form classes (persons who fit the node); the others are
    suppressed and counted by :func:`unfit_query`."""
    q = generalizer.select(freq, levels, keep=[*sensitive, N, *([PAIRS] if weighted else [])])
    return q if where is None else q.where(where.copy())


UNFIT = internal("unfit")


def unfit_query(freq: exp.Table, where: exp.Expression) -> exp.Select:
    """The records of ``freq`` outside ``where`` (persons who do not fit the node), as :data:`UNFIT`."""
    return exp.select(alias(exp.Coalesce(this=exp.Sum(this=col(N)), expressions=[lit(0)]), UNFIT)).from_(
        freq.copy()).where(exp.Not(this=exp.Paren(this=where.copy())))


def value_rank_expression(value: exp.Expression, order: Sequence[object] | None) -> exp.Expression:
    """The value itself (natural order) or its position in a declared order."""
    if not order:
        return value
    case = exp.Case(this=value)
    for i, v in enumerate(order, start=1):
        case = case.when(lit(v), lit(i))
    return case


def histogram_query(gen: exp.Table, qis: Sequence[str], attribute: str, order: Sequence[object] | None = None,
                    *, weighted: bool = False) -> exp.Select:
    """``weighted``: count :data:`PAIRS` (each value a person has, once), not the weight."""
    part = [col(q) for q in qis]
    count = exp.Sum(this=col(PAIRS if weighted else N))
    inner = exp.select(*part, alias(col(attribute), H.value), alias(count, H.count)).from_(
        gen.copy()).group_by(*[col(q) for q in qis], col(attribute))
    v = col(H.value)
    windows = [
        alias(exp.Window(this=exp.Sum(this=col(H.count)), partition_by=[col(q) for q in qis] or None),
              H.size),
        alias(exp.Window(this=exp.Sum(this=col(H.count)), partition_by=[v.copy()]), H.global_count),
        alias(exp.Window(this=exp.Sum(this=col(H.count))), H.total),
        alias(exp.Window(this=exp.RowNumber(), partition_by=[col(q) for q in qis] or None,
                         order=exp.Order(expressions=[exp.Ordered(this=col(H.count), desc=True),
                                                      exp.Ordered(this=v.copy())])), H.rank_in_class),
        alias(exp.Window(this=exp.DenseRank(), order=exp.Order(expressions=[
            exp.Ordered(this=value_rank_expression(v.copy(), order), nulls_first=False)])), H.value_rank),
    ]
    mid = exp.select(exp.Star(), *windows).from_(exp.alias_(exp.Subquery(this=inner), internal("h0")))
    return exp.select(exp.Star(), alias(exp.Window(this=exp.Max(this=col(H.value_rank))), H.domain)).from_(
        exp.alias_(exp.Subquery(this=mid), internal("h1")))


def statistics_of(models: Sequence[PrivacyModel]) -> list[Statistic]:
    seen: dict[Statistic, None] = {}
    for m in models:
        for s in m.statistics():
            seen.setdefault(s, None)
    return list(seen)


def stats_query(ctx: CheckContext, statistics: Sequence[Statistic], *, grouped: bool = False,
                carry: Sequence[str] = (), class_keys: bool = True) -> exp.Select:
    """One row per class with its size and every statistic; ``grouped``: ``ctx.gen`` already has
    one row per class (a scan grouped on the generalized QIs alone), so it is not grouped again,
    and its columns ``carry`` are kept; ``class_keys`` False: a grouped ``ctx.gen`` holds no QI,
    only the classes' counts, and no statistic but the size is read."""
    if not class_keys and not (grouped and all(isinstance(s, ClassSize) for s in statistics)):
        raise InternalError("only a grouped scan of class sizes may leave out the class keys")
    qis = ctx.qis if class_keys else []
    by_attr: dict[str, list[Statistic]] = {}
    own_queries: list[tuple[Statistic, exp.Select]] = []
    for s in statistics:
        if isinstance(s, ClassSize):
            continue
        own = s.class_query(ctx)
        if own is not None:
            own_queries.append((s, own))
        else:
            by_attr.setdefault(stat_attribute(s) or "", []).append(s)

    if grouped:
        classes = exp.select(*[col(q) for q in qis], alias(col(N), SIZE), *map(col, carry)).from_(
            ctx.gen.copy())
    else:
        classes = exp.select(*[col(q) for q in qis], alias(exp.Sum(this=col(N)), SIZE)).from_(
            ctx.gen.copy()).group_by(*[col(q) for q in qis])
    base = ctx.plan.add("classes", classes)
    query = exp.select(*[col(q, "c") for q in qis], col(SIZE, "c"),
                       *[col(c, "c") for c in (carry if grouped else ())]).from_(
        exp.alias_(base, "c", table=True, quoted=True))
    for i, (attribute, stats) in enumerate(by_attr.items()):
        hist = ctx.histograms[attribute]
        sub = exp.select(*[col(q) for q in qis], *[alias(s.aggregate(H), s.column) for s in stats]).from_(
            hist.copy()).group_by(*[col(q) for q in qis])
        name = f"a{i}"
        query = query.join(exp.alias_(exp.Subquery(this=sub), name, quoted=True, copy=False),
                           on=nullsafe_join("c", name, qis), join_type="left", copy=False)
        query = query.select(*[col(s.column, name) for s in stats], copy=False)
    for j, (s, sub) in enumerate(own_queries):
        name = f"q{j}"
        query = query.join(exp.alias_(exp.Subquery(this=sub), name, quoted=True, copy=False),
                           on=nullsafe_join("c", name, qis), join_type="left", copy=False)
        query = query.select(col(s.column, name), copy=False)
    return query


def statistic_columns(statistics: Sequence[Statistic]) -> dict[Statistic, exp.Expression]:
    return {s: col(s.column) for s in statistics}


def verdict_query(stats: exp.Table, models: Sequence[PrivacyModel],
                  statistics: Sequence[Statistic]) -> exp.Select:
    cols = statistic_columns([ClassSize(), *statistics])
    oks = [alias(exp.Coalesce(this=exp.Paren(this=m.satisfied(cols)), expressions=[exp.false()]),
                 ok_column(i)) for i, m in enumerate(models)]
    keep = as_expression(exp.and_(*[col(ok_column(i)) for i in range(len(models))])) if models else exp.true()
    inner = exp.select(exp.Star(), *oks).from_(stats.copy())
    return exp.select(exp.Star(), alias(keep, KEEP)).from_(
        exp.alias_(exp.Subquery(this=inner), internal("v0")))


def summary_query(verdict: exp.Table, models: Sequence[PrivacyModel],
                  statistics: Sequence[Statistic]) -> exp.Select:
    """Totals: rows, classes, outlier rows, kept classes, smallest kept class, per model counts."""
    size = col(SIZE)
    keep = col(KEEP)
    not_keep = exp.Not(this=keep.copy())

    def sum_if(cond: exp.Expression, value: exp.Expression) -> exp.Expression:
        case = exp.Case().when(cond, value, copy=False).else_(lit(0), copy=False)
        return exp.Coalesce(this=exp.Sum(this=case), expressions=[lit(0)])

    proj = [
        alias(exp.Sum(this=size.copy()), internal("rows")),
        alias(count_star(), internal("classes_all")),
        alias(sum_if(not_keep.copy(), size.copy()), internal("outlier_rows")),
        alias(sum_if(keep.copy(), lit(1)), internal("kept_classes")),
        alias(exp.Min(this=exp.Case().when(keep.copy(), size.copy())), internal("min_kept")),
        alias(exp.Min(this=size.copy()), internal("min_all")),
        alias(exp.Sum(this=exp.Mul(this=size.copy(), expression=size.copy())), internal("dm_star")),
        alias(sum_if(keep.copy(), exp.Mul(this=size.copy(), expression=size.copy())), internal("dm_kept")),
    ]
    cols = statistic_columns([ClassSize(), *statistics])
    for i, m in enumerate(models):
        bad = exp.Not(this=col(ok_column(i)))
        proj.append(alias(sum_if(bad.copy(), lit(1)), internal(f"bad_classes{i}")))
        proj.append(alias(sum_if(bad.copy(), size.copy()), internal(f"bad_rows{i}")))
        ach = m.achieved(cols)
        if ach is not None:
            proj.append(alias(_over(ach, keep.copy()), internal(f"ach_kept{i}")))
            proj.append(alias(ach.copy(), internal(f"ach_all{i}")))
    return exp.select(*proj).from_(verdict.copy(), copy=False)


def _over(aggregate: exp.Expression, condition: exp.Expression) -> exp.Expression:
    """Restrict an aggregate's argument to rows where ``condition`` holds (portable FILTER)."""
    agg = aggregate.copy()
    target = agg
    while not isinstance(target, exp.AggFunc):
        target = target.this
    target.set("this", exp.Case().when(condition, target.this))
    return agg
