"""Individual ranking on rows the engine numbered itself (capability ``distributed_numbering``).

The SQL form of individual ranking numbers each attribute's rows with a window over the whole table
(``ROW_NUMBER() OVER (ORDER BY value, ties...)``), which some engines (Spark) sort in one task. An
engine declaring ``distributed_numbering`` numbers the rows in the same orders into a temporary
table first (:meth:`~sqlanon.engines.base.Engine.number_rows`), and the query reads those numbers:
the orders, groups and statistics are the SQL form's, so the values are the same. The counts of
non-NULL values are already known (the pipeline counts the NULLs), so they enter as numbers.

The table exists only for the run: a view or printed SQL, read later, keeps the windows.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlglot import exp

from sqlanon.engines.base import Engine
from sqlanon.engines.staging import new_token, staging_name
from sqlanon.methods.microaggregation.algorithms.sql_ranking import individual_ranking, ranking_orders
from sqlanon.sql.nodes import col, table


@dataclass(frozen=True)
class NumberedRanking:
    table: str
    """The temporary table of the numbered rows (the caller drops it)."""
    query: exp.Select


def wanted(engine: Engine, algorithm: str, standalone: bool) -> bool:
    """Whether individual ranking should read rows the engine numbered: the engine can number them
    without one task sorting them all, and the query runs now (not a view or printed SQL)."""
    return algorithm == "individual_ranking" and not standalone \
        and engine.capabilities.distributed_numbering


def numbered_ranking(engine: Engine, relation: exp.Expression, columns: Sequence[str],
                     attributes: Sequence[str], k: int, key: Sequence[str] | None, statistic: str,
                     present: Sequence[int]) -> NumberedRanking:
    """Number ``relation``'s rows in each attribute's order and return the ranking query reading
    them; ``present`` is each attribute's number of non-NULL values."""
    name = staging_name(new_token(), "ranks")
    engine.number_rows(name, exp.select(*[col(c) for c in columns]).from_(relation.copy()),
                       ranking_orders(columns, attributes, key))
    return NumberedRanking(name, individual_ranking(table(name), columns, attributes, k, key=key,
                                                    statistic=statistic, present=present))
