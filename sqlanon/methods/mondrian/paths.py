"""Which path computes a Mondrian run's cuts, and the in-memory path's reads and writes.

The database path (:mod:`sqlanon.methods.mondrian.partitioning`) sends two or three statements per
round, whatever the table's size; on a small table those fixed costs are the whole run. The
in-memory path (:mod:`sqlanon.methods.mondrian.memory`) reads the table once (a strict run its
frequency set, a relaxed run its rows in stored order) and makes the same cuts in numpy. ``path:
auto`` takes it when what it reads has at most :data:`MEMORY_LIMIT` rows and no privacy model besides
k judges the cuts: the source's rows are counted first, and only a table with more rows than that
has its distinct tuples counted.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa
from sqlglot import exp

from sqlanon.engines.base import Engine, internal_name
from sqlanon.methods.mondrian import rounds
from sqlanon.methods.mondrian.cuts import Hierarchical
from sqlanon.methods.mondrian.memory import MemoryRounds
from sqlanon.methods.mondrian.partitioning import Options, Partitioning
from sqlanon.methods.mondrian.settings import MondrianSettings
from sqlanon.sql.nodes import alias, col, count_star, internal, lit

MEMORY_LIMIT = 1_000_000
"""``path: auto`` partitions in memory when the frequency set (strict) or the table (relaxed) has at
most this many rows: about 100 MB of numpy arrays for eight quasi-identifiers."""

COUNT = internal("count")


def in_memory(engine: Engine, source: exp.Expression, settings: MondrianSettings,
              hierarchies: Sequence[Hierarchical | None], *, order: exp.Expression | None = None,
              key: exp.Expression | None = None) -> tuple[Partitioning | None, int]:
    """The partitioning computed in memory, or None when ``path: auto`` leaves it to the database;
    and the queries asked to decide (counted in the database path's report then).

    ``source`` is the relation of coded quasi-identifiers (``__sa_q0``, ...); a relaxed run also
    needs its stored ``order`` and, when its work is kept for the release, the row ``key`` (the
    kept work table then maps each key to its partition).
    """
    if settings.path == "database" or (settings.path == "auto" and settings.models):
        return None, 0
    names = [rounds.q(i) for i in range(len(hierarchies))]
    queries = 0
    if settings.path == "auto":
        fits, queries = _fits(engine, source, names if settings.strict else None)
        if not fits:
            return None, queries
    if settings.strict:
        query = exp.select(*[col(n) for n in names], alias(count_star(), COUNT)).from_(source.copy())
        if names:
            query = query.group_by(*[col(n) for n in names])
    else:
        assert order is not None
        keys = [alias(key, rounds.KEY)] if key is not None else []
        query = exp.select(*[col(n) for n in names], *keys).from_(source.copy()) \
            .order_by(exp.Ordered(this=order))
    data = engine.fetch_arrow(query)
    queries += 1
    data = data.combine_chunks()
    values = np.column_stack([_numbers(data.column(n)) for n in names]) if names \
        else np.zeros((data.num_rows, 0))
    counts = _numbers(data.column(COUNT)).astype(np.int64) if settings.strict \
        else np.ones(data.num_rows, dtype=np.int64)
    runner = MemoryRounds(values, counts, Options(settings.k, settings.strict, settings.exact), hierarchies)
    result = runner.run()
    if settings.strict:
        result.tuples = data.drop_columns([COUNT]).append_column(rounds.PID, pa.array(runner.assignment))
    if key is not None:
        result.tuples = pa.table({rounds.KEY: data.column(rounds.KEY),
                                  rounds.PID: pa.array(runner.assignment, pa.int64())})
        result.work = internal_name("mondrian_work")
        engine.create_table_from_arrow(result.work, result.tuples, temporary=True)
        queries += 1
    result.queries = queries
    return result, queries


def _fits(engine: Engine, source: exp.Expression, group_by: list[str] | None) -> tuple[bool, int]:
    """Whether what the in-memory path reads has at most :data:`MEMORY_LIMIT` rows (the distinct
    tuples of ``group_by``, else the rows), and the queries asked: the rows are counted first; only
    a table with more rows than the limit has its distinct tuples counted (up to the limit + 1, so
    nothing but a number leaves the engine)."""
    rows = engine.fetch(exp.select(count_star()).from_(source.copy()))[1][0][0]
    if rows <= MEMORY_LIMIT:
        return True, 1
    if not group_by:
        return False, 1
    groups = exp.select(lit(1)).from_(source.copy()).group_by(*[col(n) for n in group_by]) \
        .limit(MEMORY_LIMIT + 1)
    counted = exp.select(count_star()).from_(exp.alias_(exp.Subquery(this=groups), internal("g")))
    return engine.fetch(counted)[1][0][0] <= MEMORY_LIMIT, 2


def _numbers(column: pa.ChunkedArray) -> np.ndarray:
    """A fetched numeric column as float64 (by pyarrow's cast: decimals too; no pandas)."""
    return np.asarray(column.cast(pa.float64()).chunk(0) if column.num_chunks else [], dtype=np.float64)
