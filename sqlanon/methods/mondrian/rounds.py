"""The SQL of Mondrian's rounds, as sqlglot trees: the work table, one statistics query per round
over every open partition, and one statement that cuts them all.

The work table holds a partition id per row (``__sa_pid``), the quasi-identifiers as numbers
(``__sa_q0``, ...) and, for relaxed cuts, the row's position in its partition (``__sa_pos``). Ids
grow round by round: the partitions open in a round are those with an id from the round's first
new id on, so the other rows are never read again by the statistics query.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlglot import exp

from sqlanon.sql.nodes import alias, as_double, as_expression, col, count_star, internal, lit, table

PID = internal("pid")
POS = internal("pos")
KEY = internal("key")
"""The engine's row key, in a relaxed run's kept work table."""
A = internal("a")
V = internal("v")
C = internal("c")
CUM = internal("cum")
N = internal("n")
NEXT = internal("next")
ATTRIBUTE, S, MOVED, LEFT, RIGHT = (internal(x) for x in ("attribute", "s", "moved", "left", "right"))
CHILD_LOW, CHILD_HIGH, CHILD = internal("child_low"), internal("child_high"), internal("child")


def q(i: int) -> str:
    """The work table's column of the i-th quasi-identifier."""
    return internal(f"q{i}")


def table_of(name: str) -> exp.Table:
    return table(name)


def _window(func: exp.Expression, partition: Sequence[str], order: str | None = None, *,
            running: bool = False, descending: bool = False) -> exp.Expression:
    spec = exp.WindowSpec(kind="ROWS", start="UNBOUNDED", start_side="PRECEDING", end="CURRENT ROW") \
        if running else None
    order_node = exp.Order(expressions=[exp.Ordered(this=col(order), desc=descending)]) if order else None
    return exp.Window(this=func, partition_by=[col(p) for p in partition], order=order_node, spec=spec)


def _sub(query: exp.Expression, name: str) -> exp.Expression:
    return as_expression(exp.alias_(exp.Subquery(this=query), name, quoted=True))


def statistics_query(work: str, attributes: int, first_open: int,
                     frequencies: Sequence[int] = ()) -> exp.Expression:
    """Per open partition and attribute: rows, min, max, distinct values and the median cut.

    The cut ``s`` is the first value whose cumulative count reaches ``rows // 2`` (``2·cum >= rows - 1``
    for integers), ``t`` the next value; ``le`` the rows up to ``s``, ``eq`` those at ``s``.
    Attributes listed in ``frequencies`` (hierarchical ones) come as their frequency sets instead
    (see :func:`frequency_query`), so they are left out here.
    """
    kept = [i for i in range(attributes) if i not in frequencies]
    union = _frequency_sets(work, kept, first_open, double=True)
    ranked = exp.select(col(PID), col(A), col(V), col(C),
                        alias(exp.cast(_window(exp.Sum(this=col(C)), [PID, A], V, running=True),
                                       exp.DataType.build("bigint")), CUM),
                        alias(exp.cast(_window(exp.Sum(this=col(C)), [PID, A]),
                                       exp.DataType.build("bigint")), N),
                        alias(_window(exp.Lead(this=col(V)), [PID, A], V), NEXT)) \
        .from_(_sub(union, internal("freq")))
    two = lit(2)
    at_s = exp.and_(exp.GTE(this=exp.Mul(this=two, expression=col(CUM)),
                            expression=exp.Sub(this=col(N), expression=lit(1))),
                    exp.LT(this=exp.Mul(this=two.copy(), expression=exp.Paren(
                        this=exp.Sub(this=col(CUM), expression=col(C)))),
                        expression=exp.Sub(this=col(N), expression=lit(1))))

    def when(value: str) -> exp.Expression:
        return exp.Max(this=exp.Case(ifs=[exp.If(this=at_s.copy(), true=col(value))]))

    return exp.select(col(PID), col(A), alias(exp.Max(this=col(N)), "n"), alias(exp.Min(this=col(V)), "low"),
                      alias(exp.Max(this=col(V)), "high"), alias(count_star(), "distinct"),
                      alias(when(V), "s"), alias(when(NEXT), "t"), alias(when(CUM), "le"),
                      alias(when(C), "eq")) \
        .from_(_sub(ranked, internal("ranked"))).group_by(col(PID), col(A))


def retarget(query: exp.Expression, work: str, first_open: int) -> None:
    """Point a statistics or frequency query built for an earlier round at this round's work table
    and first open id (in place: rebuilding the tree each round costs more than running it)."""
    for t in query.find_all(exp.Table):
        t.set("this", table(work).this)
    for node in query.find_all(exp.GTE):
        if isinstance(node.this, exp.Column) and node.this.name == PID:
            node.set("expression", lit(first_open))


def _frequency_sets(work: str, attributes: Sequence[int], first_open: int, *,
                    double: bool) -> exp.Expression:
    """``(pid, a, v, c)``: the frequency set of each attribute in each open partition, one ``GROUP BY
    pid, attribute`` per attribute. (On DuckDB these read two columns each and cost half of one
    aggregation by grouping sets, or of the rows paired with the attribute numbers.)"""
    def number(i: int) -> exp.Expression:
        return as_double(col(q(i))) if double else col(q(i))

    parts = [exp.select(col(PID), alias(lit(i), A), alias(number(i), V), alias(count_star(), C))
             .from_(table(work)).where(exp.GTE(this=col(PID), expression=lit(first_open)))
             .group_by(col(PID), col(q(i))) for i in attributes]
    union: exp.Expression = parts[0]
    for p in parts[1:]:
        union = exp.union(union, p, distinct=False)
    return union


def frequency_query(work: str, attributes: Sequence[int], first_open: int) -> exp.Expression:
    """The frequency sets of some attributes (hierarchical ones) in every open partition, in one
    aggregation: ``(pid, a, v, c)``."""
    return _frequency_sets(work, attributes, first_open, double=False)


def value_of_cut(attributes: int) -> exp.Expression:
    """The row's value of the attribute its partition is cut on."""
    return exp.Case(this=col(ATTRIBUTE, "c"),
                    ifs=[exp.If(this=lit(i), true=as_double(col(q(i), "w"))) for i in range(attributes)])


def cut_query(work: str, cuts: exp.Expression, attributes: int, *, relaxed: bool, bound: int,
              hierarchical: exp.Expression | None = None, extra: Sequence[exp.Expression] = (),
              keep_final: bool = True) -> exp.Select:
    """The work table after one round: each row of a cut partition in its new partition.

    ``cuts`` (a relation aliased ``c``) holds one row per cut partition:
    ``(pid, attribute, s, moved, left, right)``; a strict cut
    sends values <= ``s`` left; a relaxed one values < ``s`` and the last ``moved`` rows at ``s`` (in
    the partition's order). Relaxed positions keep each new partition's order without renumbering:
    rows moved left from ``s`` take ``2·bound - 1 - pos`` (after every row below, in reverse), rows
    at ``s`` that go right ``pos + bound`` (after every row above); ``bound`` exceeds every position.
    ``hierarchical`` (a relation aliased ``h``: ``(pid, child_low, child_high, child)``) places rows
    of partitions cut by a hierarchy's children: the child whose leaf codes hold the row's value.
    Without ``keep_final`` only the rows of cut partitions are kept (the others are final).
    """
    value = value_of_cut(attributes)
    s = col(S, "c")
    cut = exp.Not(this=exp.Is(this=col(PID, "c"), expression=exp.Null()))
    keep = col(PID, "w")
    if relaxed:
        at_s = exp.EQ(this=value.copy(), expression=s.copy())
        rank = exp.Window(this=exp.RowNumber(), partition_by=[col(PID, "w"), at_s.copy()],
                          order=exp.Order(expressions=[exp.Ordered(this=col(POS, "w"), desc=True)]))
        moved = exp.and_(at_s.copy(), exp.LTE(this=rank, expression=col(MOVED, "c")))
        goes_left = exp.or_(exp.LT(this=value.copy(), expression=s.copy()), moved.copy())
        twice = lit(2 * bound - 1)
        pos = exp.Case(ifs=[exp.If(this=moved.copy(), true=exp.Sub(this=twice, expression=col(POS, "w"))),
                            exp.If(this=exp.and_(cut.copy(), at_s.copy()),
                                   true=exp.Add(this=col(POS, "w"), expression=lit(bound)))],
                       default=col(POS, "w"))
    else:
        goes_left = exp.LTE(this=value.copy(), expression=s.copy())
    new_pid = exp.Case(ifs=[exp.If(this=exp.Is(this=col(PID, "c"), expression=exp.Null()), true=keep)],
                       default=exp.Case(ifs=[exp.If(this=goes_left, true=col(LEFT, "c"))],
                                        default=col(RIGHT, "c")))
    if hierarchical is not None:
        new_pid = exp.Case(ifs=[exp.If(this=exp.Not(this=exp.Is(this=col(CHILD, "h"), expression=exp.Null())),
                                       true=col(CHILD, "h"))], default=new_pid)
    columns = [alias(new_pid, PID), *[col(q(i), "w") for i in range(attributes)],
               *[col(e.alias_or_name, "w") for e in extra]]
    if relaxed:
        columns.append(alias(pos, POS))
    query = exp.select(*columns).from_(exp.alias_(table(work), "w", quoted=True)) \
        .join(cuts, join_type="left" if keep_final else "inner",
              on=exp.EQ(this=col(PID, "w"), expression=col(PID, "c")))
    if hierarchical is not None:
        h_value = value_of_cut(attributes)
        query = query.join(hierarchical, join_type="left", on=exp.and_(
            exp.EQ(this=col(PID, "w"), expression=col(PID, "h")),
            exp.Between(this=h_value, low=col(CHILD_LOW, "h"), high=col(CHILD_HIGH, "h"))))
    return query
