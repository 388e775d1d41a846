"""Individual ranking on an engine that sorts a window over the whole table in one task and
inlines common table expressions (capability ``distributed_numbering``: Spark).

The SQL form of individual ranking numbers each attribute's rows with a window over the whole table
(``ROW_NUMBER() OVER (ORDER BY value, ties...)``) and joins each group's statistic back, which on
such an engine sorts the rows again for every join. There, while the engine sorts the table in one
task (:meth:`~sqlanon.engines.base.Engine.sorts_in_one_task`: its ``one_task_sort_rows``, on Spark by
default a rule on the table's rows and the session's cores), each attribute's groups and statistics
are windows in the order of its one sort
(:mod:`~sqlanon.methods.microaggregation.algorithms.one_sort_ranking`): one sort per attribute, in
one task, as the window alone. Otherwise the engine numbers the rows in
the same orders into a temporary table first (:meth:`~sqlanon.engines.base.Engine.number_rows`,
each sort split across tasks), and the query reads those numbers. Either way the orders, groups
and statistics are the SQL form's, so the values are the same. The counts of non-NULL values are
already known (the pipeline counts the NULLs), so they enter as numbers.

With a unique ``transformation.key`` (which alone breaks the ties), only the key and the attributes
are numbered and grouped, and the source's rows join them once by the key: the sorts and the joins
of the group statistics move those columns only, not whole rows. Without one, the whole rows are
numbered (every column breaks the ties).

The table and the counts hold only for the run: a view or printed SQL, read later, keeps the SQL form.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlglot import exp

from sqlanon.engines.base import Engine
from sqlanon.engines.staging import new_token, staging_name
from sqlanon.methods.microaggregation.algorithms.one_sort_ranking import one_sort_ranking
from sqlanon.methods.microaggregation.algorithms.sql_ranking import individual_ranking, ranking_orders
from sqlanon.methods.microaggregation.rows import as_relation
from sqlanon.sql.nodes import alias, col, count_star, internal, table

_SOURCE, _RANKED, _SHARED = internal("s"), internal("r"), internal("shared")


@dataclass(frozen=True)
class NumberedRanking:
    table: str | None
    """The temporary table of the numbered rows, if any (the caller drops it)."""
    query: exp.Select


def wanted(engine: Engine, algorithm: str, standalone: bool) -> bool:
    """Whether individual ranking should take the forms of this module: the engine can number rows
    without one task sorting them all, and the query runs now (not a view or printed SQL)."""
    return algorithm == "individual_ranking" and not standalone \
        and engine.capabilities.distributed_numbering


def numbered_ranking(engine: Engine, relation: exp.Expression, columns: Sequence[str],
                     attributes: Sequence[str], k: int, key: Sequence[str] | None, statistic: str,
                     present: Sequence[int], rows: int) -> NumberedRanking:
    """The ranking query of ``relation``'s ``rows`` rows, ``present`` being each attribute's number
    of non-NULL values: windows in each attribute's order, or, when the engine would not sort so
    many rows in one task, the rows numbered first in each order."""
    narrow = key is not None and _unique(engine, relation, key)
    numbered = list(dict.fromkeys([*(key or ()), *attributes])) if narrow else list(columns)
    selected = exp.select(*[col(c) for c in numbered]).from_(relation.copy())
    name = None
    if engine.sorts_in_one_task(rows):
        ranked = one_sort_ranking(exp.Subquery(this=selected), numbered, attributes, k, key=key,
                                  statistic=statistic, present=present)
    else:
        name = staging_name(new_token(), "ranks")
        engine.number_rows(name, selected, ranking_orders(numbered, attributes, key))
        ranked = individual_ranking(table(name), numbered, attributes, k, key=key, statistic=statistic,
                                    present=present)
    if not narrow or key is None:
        return NumberedRanking(name, ranked)
    on = exp.and_(*[exp.EQ(this=col(c, _SOURCE), expression=col(c, _RANKED)) for c in key])
    query = exp.select(*[alias(col(c, _RANKED if c in attributes else _SOURCE), c) for c in columns]) \
        .from_(as_relation(relation, _SOURCE)) \
        .join(as_relation(ranked, _RANKED), on=on, join_type="inner")
    return NumberedRanking(name, query)


def _unique(engine: Engine, relation: exp.Expression, key: Sequence[str]) -> bool:
    """Whether no two rows share their ``key`` (whose NULLs were refused before)."""
    shared = exp.select(*[col(c) for c in key]).from_(relation.copy()).group_by(*[col(c) for c in key]) \
        .having(exp.GT(this=count_star(), expression=exp.Literal.number(1)))
    return int(engine.fetch(exp.select(count_star()).from_(as_relation(shared, _SHARED)))[1][0][0]) == 0
