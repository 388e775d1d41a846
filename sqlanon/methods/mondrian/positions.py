"""A relaxed partitioning as ranges of row positions, so that a view or printed SQL can release it.

A relaxed cut splits the rows of one value by their stored order, so a row's partition is not a
function of its values alone. Rows with equal quasi-identifiers mostly share a partition, though:
per distinct tuple, the partitions of its rows taken in stored order form a few runs. The kept table
(``<output name>__groups``) holds one row per run, ``(tuple, first position, last position,
partition)``, where a row's position is its number in the engine's stored row order
(:meth:`~sqlanon.engines.base.Engine.row_order`); the released rows join the source, numbered the
same way, on the tuple and the range.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlglot import exp

from sqlanon.methods.mondrian import rounds
from sqlanon.sql.nodes import alias, as_expression, col, internal, lit, table

if TYPE_CHECKING:
    from sqlanon.methods.dataset import Dataset
    from sqlanon.methods.mondrian.pipeline import Mondrian

POSITION = internal("position")
LOW, HIGH, RUN = internal("low"), internal("high"), internal("run")


def _number(ds: Dataset, rel: str) -> exp.Expression:
    """A row's position: its number in the stored order, from 0."""
    order = exp.Order(expressions=[exp.Ordered(this=ds.engine.row_order(rel))])
    return exp.Sub(this=exp.Window(this=exp.RowNumber(), order=order), expression=lit(1))


def _sub(query: exp.Expression, name: str) -> exp.Expression:
    return as_expression(exp.alias_(exp.Subquery(this=query), name, quoted=True))


def runs_query(ds: Dataset, m: Mondrian) -> exp.Select:
    """The kept table's rows, from the run's work table (each row key with its partition)."""
    assert m.result.work is not None
    s, w, n, r = internal("s"), internal("w"), internal("n"), internal("r")
    tuple_columns = [rounds.q(i) for i in range(len(m.attributes))]
    numbered = exp.select(*[alias(col(a.name, s), q) for a, q in zip(m.attributes, tuple_columns)],
                          alias(_number(ds, s), POSITION), col(rounds.PID, w)) \
        .from_(exp.alias_(ds.relation.copy(), s, table=True, quoted=True)) \
        .join(exp.alias_(table(m.result.work), w, table=True, quoted=True), join_type="inner",
              on=exp.EQ(this=ds.engine.row_key(s), expression=col(rounds.KEY, w)))

    def rank(partition: list[str]) -> exp.Expression:
        return exp.Window(this=exp.RowNumber(), partition_by=[col(c) for c in partition],
                          order=exp.Order(expressions=[exp.Ordered(this=col(POSITION))]))

    # rows of one tuple in stored order: a run is a stretch of them in one partition
    runs = exp.select(*[col(q) for q in tuple_columns], col(POSITION), col(rounds.PID),
                      alias(exp.Sub(this=rank(tuple_columns), expression=rank([*tuple_columns, rounds.PID])),
                            RUN)).from_(_sub(numbered, n))
    keys = [*[col(q) for q in tuple_columns], col(rounds.PID), col(RUN)]
    return exp.select(*[col(q) for q in tuple_columns], alias(exp.Min(this=col(POSITION)), LOW),
                      alias(exp.Max(this=col(POSITION)), HIGH), col(rounds.PID)) \
        .from_(_sub(runs, r)).group_by(*keys)


def numbered_source(ds: Dataset, rel: str) -> exp.Expression:
    """The source's rows with their positions, aliased ``rel``."""
    s = internal("s")
    return _sub(exp.select(exp.Star(), alias(_number(ds, s), POSITION))
                .from_(exp.alias_(ds.relation.copy(), s, table=True, quoted=True)), rel)


def join_condition(m: Mondrian, rows: str, runs: str) -> exp.Condition:
    """A numbered source row meets its run: the same tuple, its position in the range."""
    parts: list[exp.Expression] = [exp.EQ(this=col(a.name, rows), expression=col(rounds.q(i), runs))
                                   for i, a in enumerate(m.attributes)]
    parts.append(exp.Between(this=col(POSITION, rows), low=col(LOW, runs), high=col(HIGH, runs)))
    return exp.and_(*parts)
