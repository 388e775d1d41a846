"""DuckDB, the embedded default engine."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any, ClassVar

from sqlglot import exp

from sqlanon.sql.nodes import internal, table
from sqlanon.engines.base import Engine, driver_message
from sqlanon.errors import EngineError


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


class DuckDBEngine(Engine):
    name: ClassVar[str] = "duckdb"
    dialect_name: ClassVar[str] = "duckdb"

    def __init__(self, database: str = ":memory:", *, read_only: bool = False,
                 connection: Any = None) -> None:
        self.database = database
        self.con = connection if connection is not None else _open(database, read_only)

    def _execute(self, sql: str) -> None:
        self.con.execute(sql)

    def insert_rows(self, name: str, rows, *, schema: str | None = None) -> None:
        """Append rows through an Arrow table scanned by DuckDB (per-row binding is far slower)."""
        if not rows:
            return
        import pyarrow as pa

        data = pa.table({f"c{i}": list(values) for i, values in enumerate(zip(*rows))})
        view = internal(f"rows_{uuid.uuid4().hex[:8]}")
        self.con.register(view, data)
        try:
            self.execute(exp.insert(exp.select("*").from_(table(view)), table(name, schema)))
        finally:
            self.con.unregister(view)

    def _fetch_rows(self, sql: str) -> tuple[list[str], list[tuple[Any, ...]]]:
        cur = self.con.execute(sql)
        names = [d[0] for d in cur.description]
        return names, cur.fetchall()

    def fetch_arrow(self, query):
        sql = self.sql(query)
        self._log(query)
        try:
            return self.con.execute(sql).to_arrow_table()
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
        rows = self.con.execute(
            "SELECT table_catalog, table_schema, table_name FROM information_schema.tables "
            "WHERE lower(table_name) = lower(?) AND lower(table_schema) = lower(coalesce(?, "
            "current_schema())) AND table_catalog IN (current_database(), 'temp')",
            [relation, schema]).fetchall()
        fold = self.dialect.fold
        wanted = fold(schema) if schema is not None else None
        rows = [r for r in rows if fold(r[2]) == fold(relation) and (wanted is None or fold(r[1]) == wanted)]
        if not rows:
            return None
        return next((r for r in rows if r[0] == "temp"), rows[0])

    def columns(self, relation: str, schema: str | None = None) -> list[tuple[str, str]]:
        match = self._catalog_match(relation, schema)
        if match is None:
            where = f"{schema}.{relation}" if schema else relation
            raise EngineError(f"duckdb: no table or view named {where!r} in {self.database!r}")
        rows = self.con.execute(
            "SELECT column_name, data_type FROM information_schema.columns WHERE table_catalog = ? "
            "AND table_schema = ? AND table_name = ? ORDER BY ordinal_position", list(match)).fetchall()
        return [(r[0], r[1]) for r in rows]

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

        match = self._catalog_match(relation, schema)
        if match is None:
            return []
        current = self.con.execute("SELECT current_database(), current_schema()").fetchone()
        views = self.con.execute(
            "SELECT database_name, schema_name, view_name, sql FROM duckdb_views() WHERE NOT internal "
            "ORDER BY schema_name, view_name").fetchall()
        return views_reading(match, views, current, self._relations())

    def _relations(self) -> set[tuple[str, str, str]]:
        fold = self.dialect.fold
        rows = self.con.execute("SELECT table_catalog, table_schema, table_name FROM "
                                "information_schema.tables").fetchall()
        return {(fold(c), fold(s), fold(n)) for c, s, n in rows}

    def register_file(self, name: str, path: str, *, kind: str, options: dict[str, Any] | None = None
                      ) -> None:
        """Load a CSV or Parquet file into a temporary table ``name``.

        The copy lives only as long as the connection, so the raw data never lands in a database
        file, and the file itself is only read.
        """
        from sqlglot import exp

        from sqlanon.sql.nodes import lit

        args: list[exp.Expression] = [lit(path)]
        for key, value in (options or {}).items():
            args.append(exp.EQ(this=exp.column(key), expression=lit(value)))
        func = "read_csv" if kind == "csv" else "read_parquet"
        reader = exp.Anonymous(this=func, expressions=args)
        query = exp.select(exp.Star()).from_(reader)
        self.execute(
            f"CREATE OR REPLACE TEMP TABLE {exp.to_identifier(name, quoted=True).sql('duckdb')} AS "
            + query.sql("duckdb")
        )

    def close(self) -> None:
        self.con.close()
