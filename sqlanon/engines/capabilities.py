"""What an engine can do beyond running SQL, declared once per engine.

Code outside :mod:`sqlanon.engines` asks ``engine.capabilities`` (or calls the engine method that
needs the capability), never for the engine's type or name. An engine method whose capability is
not declared refuses with :class:`~sqlanon.errors.UnsupportedError` naming the engine and the
capability (:meth:`Capabilities.require`).
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from sqlanon.errors import UnsupportedError

_WHAT = {
    "positional_join": "join per-row values to a table by position",
    "stable_row_key": "name a table's rows by a stable key",
    "arrow_in": "scan Arrow data in place, without copying it into the database",
    "file_registration": "read CSV or Parquet files as a table",
    "transactional_ddl": "run statements, DDL included, in one transaction",
    "atomic_rename": "replace a table by another in one transaction",
    "row_block_writes": "write a table in row blocks on several connections",
    "recoverable_swap": "replace a table in recorded steps that a later run completes or undoes",
    "grouped_arrow_map": "run a Python function on each group of rows inside the engine",
    "row_stream_map": "draw per-row values where it reads a table's rows, partition by partition",
    "distributed_numbering": "number rows in a sort order without sorting them all in one task",
}


@dataclass(frozen=True)
class Capabilities:
    """One engine's declared capabilities; every field says which engine method it allows."""

    positional_join: bool = False
    """``POSITIONAL JOIN`` of a table (scanned in stored order) with a stream of values:
    :meth:`~sqlanon.engines.base.Engine.join_row_values` needs no row key."""
    stable_row_key: bool = False
    """:meth:`~sqlanon.engines.base.Engine.row_key`: an expression naming each row of a stored
    table, unchanged between reads (DuckDB ``rowid``, PostgreSQL ``ctid``)."""
    arrow_in: bool = False
    """:meth:`~sqlanon.engines.base.Engine.arrow_relation`: Arrow tables and record batch streams
    are read in place, as a relation, without being copied into the database."""
    file_registration: bool = False
    """:meth:`~sqlanon.engines.base.Engine.register_file`: CSV and Parquet files become
    temporary tables of the session."""
    transactional_ddl: bool = False
    """:meth:`~sqlanon.engines.base.Engine.transaction`: all statements inside, CREATE, DROP and
    ALTER included, commit together or roll back together."""
    atomic_rename: bool = False
    """:meth:`~sqlanon.engines.base.Engine.replace_table`: inside a transaction, dropping a table
    and renaming another into its place take effect together."""
    row_block_writes: bool = False
    """:meth:`~sqlanon.engines.base.Engine.write_row_blocks`: a table's rows split in blocks by
    row number and written in parallel by several connections, in order."""
    recoverable_swap: bool = False
    """:func:`~sqlanon.engines.swap.replace_table` without transactions: the result is staged
    under its own name, then swapped in by two renames, each step recorded in marks stored with
    the tables (:class:`~sqlanon.engines.swap.TableMarks`); a process killed at any step leaves
    the original or the result readable, and :func:`~sqlanon.engines.swap.recover` completes or
    undoes the swap."""
    grouped_arrow_map: bool = False
    """:meth:`~sqlanon.engines.base.Engine.map_arrow_groups`: a Python function runs on each group
    of a query's rows, handed over as one Arrow table, inside the engine (on a cluster, on its
    executors), and what it returns becomes a table without passing through sqlanon's process. An
    engine declaring it keeps its rows out of that process: work that needs every row in one process
    is refused there, with how to split it into groups."""

    row_stream_map: bool = False
    """:meth:`~sqlanon.engines.base.Engine.map_row_stream`: per-row values addressed by row position
    are drawn by the engine's workers while they read the table (Spark: a scalar Arrow UDF), each
    partition from its first row's number in the table's scan order; nothing goes to the driver."""

    distributed_numbering: bool = False
    """:meth:`~sqlanon.engines.base.Engine.number_rows`: a query's rows numbered in sort orders
    (``ROW_NUMBER() OVER (ORDER BY ...)``) into a temporary table, each sort split across tasks by
    ranges of the order's values, where a window without ``PARTITION BY`` would sort every row in
    one task (Spark); the numbers stay fixed however often the table is read."""

    def require(self, capability: str, engine: str) -> None:
        """Refuse (:class:`UnsupportedError`) when ``capability`` is not declared."""
        if capability not in _WHAT:
            raise ValueError(f"unknown engine capability {capability!r}")
        if not getattr(self, capability):
            raise UnsupportedError(f"{engine} cannot {_WHAT[capability]} (the engine does not "
                                   f"declare the capability {capability!r})")

    def declared(self) -> list[str]:
        """The names of the declared capabilities."""
        return [f.name for f in fields(self) if getattr(self, f.name)]

    @staticmethod
    def names() -> list[str]:
        return [f.name for f in fields(Capabilities)]
