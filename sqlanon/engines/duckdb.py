"""DuckDB, the embedded default engine."""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from sqlglot import exp

from sqlanon.engines import duckdb_blocks, duckdb_rows
from sqlanon.engines.base import Engine, internal_name
from sqlanon.engines.capabilities import Capabilities
from sqlanon.engines.duckdb_blocks import ROW_GROUP_ROWS
from sqlanon.engines.messages import driver_message
from sqlanon.engines.row_values import Batches, Block, Projection, RowsFrom
from sqlanon.errors import EngineError
from sqlanon.sql.nodes import col, lit, table
from sqlanon.sql.render import render

if TYPE_CHECKING:
    import pyarrow as pa

_FILE_READERS = {"csv": "read_csv", "parquet": "read_parquet"}

# information_schema.tables and .columns with only the columns read: the same catalog functions,
# without building every other column of the views (a lookup costs about half as much)
_CATALOG = {
    "tables": "(SELECT database_name AS table_catalog, schema_name AS table_schema, table_name, CASE WHEN "
              "temporary THEN 'LOCAL TEMPORARY' ELSE 'BASE TABLE' END AS table_type FROM duckdb_tables() "
              "UNION ALL SELECT database_name, schema_name, view_name, 'VIEW' FROM duckdb_views())",
    "columns": "(SELECT database_name AS table_catalog, schema_name AS table_schema, table_name, "
               "column_name, data_type, column_index AS ordinal_position FROM duckdb_columns())",
}


def _open(database: str, read_only: bool) -> Any:
    """A DuckDB connection; a locked file or a directory is an error naming the path."""
    import duckdb

    if database != ":memory:" and Path(database).is_dir():
        raise EngineError(f"duckdb: {database!r} is a directory, not a DuckDB database file")
    try:
        return duckdb.connect(database, read_only=read_only)
    except duckdb.Error as e:
        if "lock" in str(e).lower():
            raise EngineError(f"duckdb: the database {database!r} is locked by another process; "
                              "close it there (DuckDB lets one process write a file) and retry") from e
        raise EngineError(f"duckdb: cannot open {database!r}: {driver_message(e)}") from e


def _numpy_columns(columns: list[list[Any]]) -> dict[str, Any] | None:
    """The columns as NumPy arrays DuckDB scans as VARCHAR or BIGINT, or None when a column holds
    anything else (floats, decimals, dates, booleans, a mix of types)."""
    import numpy as np

    out: dict[str, Any] = {}
    for i, values in enumerate(columns):
        kinds = set(map(type, values))
        if kinds <= {str, type(None)}:
            out[f"c{i}"] = np.array(values, dtype=object)
        elif kinds == {int} and -2**63 <= min(values) and max(values) < 2**63:
            out[f"c{i}"] = np.array(values, dtype=np.int64)
        else:
            return None
    return out


class DuckDBEngine(Engine):
    name: ClassVar[str] = "duckdb"
    dialect_name: ClassVar[str] = "duckdb"
    capabilities: ClassVar[Capabilities] = Capabilities(
        positional_join=True, stable_row_key=True, arrow_in=True, file_registration=True,
        transactional_ddl=True, atomic_rename=True, row_block_writes=True)

    def __init__(self, database: str = ":memory:", *, read_only: bool = False,
                 connection: Any = None) -> None:
        self.database = database
        self.con = connection if connection is not None else _open(database, read_only)

    def _execute(self, sql: str) -> None:
        self.con.execute(sql)

    def insert_rows(self, name: str, rows, *, schema: str | None = None) -> None:
        """Append rows through columns scanned by DuckDB (per-row binding is far slower): NumPy
        arrays when every column holds only text (or NULL) or only integers, else an Arrow table
        (whose conversion from Python values imports pandas, which costs more than small inserts)."""
        if not rows:
            return
        columns = [list(values) for values in zip(*rows)]
        data: Any = _numpy_columns(columns)
        if data is None:
            import pyarrow as pa

            data = pa.table({f"c{i}": values for i, values in enumerate(columns)})
        with self._arrow_relation(data, internal_name("rows")) as view:
            self.execute(exp.insert(exp.select("*").from_(view), table(name, schema)))

    @contextlib.contextmanager
    def _arrow_relation(self, data: Any, name: str) -> Iterator[exp.Table]:
        self.con.register(name, data)
        try:
            yield table(name)
        finally:
            self.con.unregister(name)

    def create_table_from_arrow(self, name: str, data: pa.Table, *, temporary: bool = False,
                                schema: str | None = None) -> None:
        with self._arrow_relation(data, internal_name("arrow")) as relation:
            self.create_table_as(name, exp.select(exp.Star()).from_(relation), temporary=temporary,
                                 schema=schema)

    def _fetch_rows(self, sql: str) -> tuple[list[str], list[tuple[Any, ...]]]:
        cur = self.con.execute(sql)
        names = [d[0] for d in cur.description]
        return names, cur.fetchall()

    def fetch_arrow(self, query):
        sql = self.sql(query)
        self._log(query)
        try:
            return self.con.sql(sql).to_arrow_table()  # a DB-API result would copy the rows, and warn
        except Exception as e:
            raise self.error(e, query) from e

    def fetch_numpy(self, query):
        sql = self.sql(query)
        self._log(query)
        try:
            return self.con.execute(sql).fetchnumpy()
        except Exception as e:
            raise self.error(e, query) from e

    def _begin(self) -> None:
        self.con.execute("BEGIN TRANSACTION")

    def _commit(self) -> None:
        self.con.execute("COMMIT")

    def _rollback(self) -> None:
        self.con.execute("ROLLBACK")

    def _catalog_match(self, relation: str, schema: str | None) -> tuple[str, str, str] | None:
        """``(catalog, schema, name)`` of the relation DuckDB resolves ``schema.relation`` to, or None.

        Names compare as DuckDB compares them, ignoring ASCII case even when quoted; a temporary
        relation shadows a stored one of the same name, as in DuckDB's own name resolution. Only
        the current database and the temporary catalog are searched (not other attached ones).
        """
        match = self._catalog_row(relation, schema)
        return None if match is None else (match[0], match[1], match[2])

    def _catalog_row(self, relation: str, schema: str | None) -> tuple[Any, ...] | None:
        """The row of ``information_schema.tables`` (``t``) :meth:`_catalog_match` finds."""
        rows = self._catalog_rows(relation, schema)
        return None if not rows else rows[0]

    def _catalog_rows(self, relation: str, schema: str | None, more: str = "",
                      catalog_table: str = "tables") -> list[tuple[Any, ...]]:
        """The rows of ``information_schema.<catalog_table>`` (``t``) of the relation
        :meth:`_catalog_match` finds, in the catalog's order."""
        rows = self.con.execute(
            "SELECT table_catalog, table_schema, table_name" + (f", {more}" if more else "")
            + f" FROM {_CATALOG[catalog_table]} t WHERE lower(table_name) = lower(?) AND "
            "lower(table_schema) = lower(coalesce(?, current_schema())) AND table_catalog IN "
            "(current_database(), 'temp')", [relation, schema]).fetchall()
        fold = self.dialect.fold
        wanted = fold(schema) if schema is not None else None
        rows = [r for r in rows if fold(r[2]) == fold(relation) and (wanted is None or fold(r[1]) == wanted)]
        if not rows:
            return []
        found = next((r for r in rows if r[0] == "temp"), rows[0])[:3]
        return [r for r in rows if r[:3] == found]

    def columns(self, relation: str, schema: str | None = None) -> list[tuple[str, str]]:
        # one query: the columns of every relation the name may denote, the one it resolves to kept
        rows = self._catalog_rows(relation, schema, "column_name, data_type, ordinal_position", "columns")
        if not rows:
            where = f"{schema}.{relation}" if schema else relation
            raise EngineError(f"duckdb: no table or view named {where!r} in {self.database!r}")
        return [(r[3], r[4]) for r in sorted(rows, key=lambda r: r[5])]

    def relation_exists(self, relation: str, schema: str | None = None) -> bool:
        return self._catalog_match(relation, schema) is not None

    def schema_exists(self, schema: str) -> bool:
        names = self.con.execute("SELECT schema_name FROM duckdb_schemas() WHERE database_name IN "
                                 "(current_database(), 'temp')").fetchall()
        return any(self.dialect.fold(r[0]) == self.dialect.fold(schema) for r in names)

    def dependent_views(self, relation: str, schema: str | None = None) -> list[str]:
        """Views whose SQL reads ``schema.relation`` (DuckDB records no dependency: it would let
        the table be dropped and the views read whatever takes its name)."""
        from sqlanon.engines.duckdb_views import views_reading

        # no view, none to look for (the common case: three catalog queries fewer); asked without the
        # views' SQL, which DuckDB writes out for its own internal views too (half the cost)
        if not self.con.execute("SELECT 1 FROM duckdb_views() WHERE NOT internal LIMIT 1").fetchall():
            return []
        views = self.con.execute(
            "SELECT database_name, schema_name, view_name, sql FROM duckdb_views() WHERE NOT internal "
            "ORDER BY schema_name, view_name").fetchall()
        match = self._catalog_match(relation, schema)
        if match is None:
            return []
        current = self.con.execute("SELECT current_database(), current_schema()").fetchone()
        return views_reading(match, views, current, self._relations())

    def _relations(self) -> set[tuple[str, str, str]]:
        fold = self.dialect.fold
        rows = self.con.execute(f"SELECT table_catalog, table_schema, table_name FROM {_CATALOG['tables']}"
                                ).fetchall()
        return {(fold(c), fold(s), fold(n)) for c, s, n in rows}

    def stored_tables(self, prefix: str) -> list[tuple[str, str]]:
        sql = ("SELECT schema_name, table_name FROM duckdb_tables() WHERE database_name = current_database() "
               "AND starts_with(table_name, ?) AND NOT temporary")
        try:
            return [(r[0], r[1]) for r in self.con.execute(sql, [prefix]).fetchall()]
        except Exception as e:
            raise self.error(e, sql) from e

    def _register_file(self, name: str, path: str, *, kind: str, options: dict[str, Any]) -> None:
        """Load a CSV or Parquet file into a temporary table ``name``.

        The copy lives only as long as the connection, so the raw data never lands in a database
        file, and the file itself is only read.
        """
        args: list[exp.Expression] = [lit(path)]
        for key, value in options.items():
            args.append(exp.EQ(this=exp.column(key), expression=lit(value)))
        func = "read_csv" if kind == "csv" else "read_parquet"
        reader = exp.Anonymous(this=func, expressions=args)
        statement = exp.Create(this=table(name), kind="TABLE", replace=True,
                               properties=exp.Properties(expressions=[exp.TemporaryProperty()]),
                               expression=exp.select(exp.Star()).from_(reader))
        # the readers are DuckDB's own table functions: allowed in what the engine runs for
        # itself, not in the SQL sqlanon writes for users
        readers = dataclasses.replace(self.dialect, anonymous_functions=self.dialect.anonymous_functions
                                      | frozenset(_FILE_READERS.values()))
        self._run(render(statement, readers), statement, None)

    # -- per-row values ---------------------------------------------------------------------------
    def _row_key(self, relation_alias: str | None) -> exp.Expression:
        return col("rowid", relation_alias) if relation_alias else exp.column("rowid")

    def _has_row_keys(self, relation: exp.Table, columns: Sequence[str]) -> bool:
        """A base or temporary table without a column named ``rowid``: the relation DuckDB resolves
        the name to binds ``rowid`` (a view does not). The query is bound, not run (a relation of
        the Python API): a failure leaves an open transaction usable, and binding costs a fraction
        of a catalog lookup."""
        import duckdb

        if any(c.lower() == "rowid" for c in columns):
            return False
        try:
            self.con.sql(self.sql(exp.select(self._row_key(None)).from_(relation.copy()).limit(0)))
        except duckdb.Error:
            return False
        return True

    def _check_row_order(self) -> None:
        duckdb_rows.check_insertion_order(self)

    def _join_by_position(self, relation: exp.Table, n: int, schema: pa.Schema, batches: Batches
                          ) -> contextlib.AbstractContextManager[exp.Select]:
        return duckdb_rows.joined_by_position(self, relation, n, schema, batches)

    def _row_blocks(self, relation: exp.Table) -> list[Block] | None:
        return duckdb_blocks.blocks_of(self, relation)

    def _write_row_blocks(self, relation: exp.Table, target: str, blocks: list[Block],
                          schema: pa.Schema, rows_from: RowsFrom, projection: Projection,
                          uncompressed: frozenset[str]) -> None:
        duckdb_blocks.write_blocks(self, relation, target, blocks, schema, rows_from, projection,
                                   uncompressed)

    def discard_row_blocks(self, target: str, schema: str | None = None) -> None:
        duckdb_blocks.discard(self, target, schema)

    def closes_after_run(self) -> None:
        # a file's close checkpoints what the write-ahead log holds: each commit writes its changes
        # into the file at once instead (a checkpoint at commit skips the log), one write, not two
        if self.database != ":memory:":
            self.con.execute("SET checkpoint_threshold = '0b'")

    def sized_for(self, relation: exp.Table) -> None:
        # DuckDB shares a scan among its threads by row groups: a relation of at most one row group
        # gains nothing from a second thread, while a CREATE TABLE AS of its rows takes about twice
        # as long with two as with one (bench/README.md, "Threads on a small source")
        beyond = exp.select(lit(1)).from_(relation.copy()).limit(1).offset(ROW_GROUP_ROWS)
        if not self.fetch(beyond)[1]:
            self.con.execute("SET threads = 1")

    def close(self) -> None:
        self.con.close()
