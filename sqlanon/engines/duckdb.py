"""DuckDB, the embedded default engine."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any, ClassVar

from sqlglot import exp

from sqlanon.compile.sql import internal, table
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

    def insert_rows(self, name: str, rows) -> None:  # type: ignore[no-untyped-def]
        """Append rows through an Arrow table scanned by DuckDB (per-row binding is far slower)."""
        if not rows:
            return
        import pyarrow as pa

        data = pa.table({f"c{i}": list(values) for i, values in enumerate(zip(*rows))})
        view = internal(f"rows_{uuid.uuid4().hex[:8]}")
        self.con.register(view, data)
        try:
            self.execute(exp.insert(exp.select("*").from_(table(view)), table(name)))
        finally:
            self.con.unregister(view)

    def _fetch_rows(self, sql: str) -> tuple[list[str], list[tuple[Any, ...]]]:
        cur = self.con.execute(sql)
        names = [d[0] for d in cur.description]
        return names, cur.fetchall()

    def fetch_arrow(self, query):  # type: ignore[override]
        sql = self.sql(query)
        self._log(query)
        try:
            return self.con.execute(sql).to_arrow_table()
        except Exception as e:
            raise self.error(e, query) from e

    def fetch_numpy(self, query):  # type: ignore[override]
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

    def columns(self, relation: str) -> list[tuple[str, str]]:
        rows = self.con.execute(
            "SELECT column_name, data_type, table_catalog FROM information_schema.columns "
            "WHERE table_name = ? AND table_schema = current_schema() ORDER BY ordinal_position",
            [relation],
        ).fetchall()
        # a temporary table shadows a stored one of the same name, as in DuckDB's own name resolution
        catalogs = {r[2] for r in rows}
        if len(catalogs) > 1:
            rows = [r for r in rows if r[2] == "temp"]
        if not rows:
            raise EngineError(f"duckdb: no table or view named {relation!r} in {self.database!r}")
        return [(r[0], r[1]) for r in rows]

    def relation_exists(self, relation: str) -> bool:
        n = self.con.execute(
            "SELECT count(*) FROM information_schema.tables WHERE table_name = ? "
            "AND table_schema = current_schema()", [relation]).fetchall()[0][0]  # no pending result
        return n > 0

    def register_file(self, name: str, path: str, *, kind: str, options: dict[str, Any] | None = None
                      ) -> None:
        """Load a CSV or Parquet file into a temporary table ``name``.

        The copy lives only as long as the connection, so the raw data never lands in a database
        file, and the file itself is only read.
        """
        from sqlglot import exp

        from sqlanon.compile.sql import lit

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
