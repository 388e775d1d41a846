"""PostgreSQL (14 or later) through psycopg 3.

The connection runs in autocommit mode; :meth:`Engine.transaction` issues ``BEGIN``, ``COMMIT`` and
``ROLLBACK`` itself, so DDL inside it is transactional (PostgreSQL supports that). Catalog look-ups
pass names as query parameters, never as SQL text. Numeric results come back as Python ``int`` or
``float`` (not ``Decimal``), as from DuckDB, so that both engines report identical numbers. Joins on
``IS NOT DISTINCT FROM`` are made hashable (:func:`sqlanon.sql.dialects.adapt`).
"""

from __future__ import annotations

import contextlib
import csv
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from sqlglot import exp

from sqlanon.engines.base import Engine
from sqlanon.engines.capabilities import Capabilities
from sqlanon.engines.messages import driver_message
from sqlanon.engines.postgres_arrow import copy_arrow
from sqlanon.errors import EngineError, UnsupportedError
from sqlanon.sql.nodes import col, ident, table
from sqlanon.sql.render import render

if TYPE_CHECKING:
    import pyarrow as pa

_NUMERIC_OID = 1700
"""PostgreSQL's ``numeric`` type, which psycopg returns as ``Decimal``."""


def _relation_oid(schema: str | None) -> str:
    """SQL for the oid of a relation given as parameters: ``schema.name``, or ``name`` resolved
    through the search path (including the session's temporary schema)."""
    if schema is None:
        return "to_regclass(quote_ident(%s))"
    return "to_regclass(quote_ident(%s) || '.' || quote_ident(%s))"


def _params(relation: str, schema: str | None) -> list[str]:
    return [relation] if schema is None else [schema, relation]


def _plain(value: Any) -> Any:
    """``Decimal`` (PostgreSQL's SUM of integers) as ``int`` when integral, else ``float``."""
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    return value


class PostgresEngine(Engine):
    """A connection to one PostgreSQL database.

    Args:
        dsn: a libpq connection string or ``postgresql://`` URL.
        connection: an open psycopg connection to use instead (it is switched to autocommit).
    """

    name: ClassVar[str] = "postgres"
    dialect_name: ClassVar[str] = "postgres"
    capabilities: ClassVar[Capabilities] = Capabilities(
        stable_row_key=True, transactional_ddl=True, atomic_rename=True)

    def __init__(self, dsn: str = "", *, connection: Any = None) -> None:
        try:
            import psycopg
        except ImportError as e:  # pragma: no cover - depends on the installation
            raise UnsupportedError("PostgreSQL needs psycopg 3: pip install 'sqlanon[postgres]'") from e
        self.dsn = dsn
        try:
            self.con = connection if connection is not None else psycopg.connect(dsn, autocommit=True)
        except psycopg.Error as e:
            raise EngineError(f"postgres: cannot connect: {driver_message(e)}") from e
        self.con.autocommit = True

    # -- hooks ------------------------------------------------------------------------------------
    def _execute(self, sql: str) -> None:
        self.con.execute(sql)  # rendered by sqlglot, never user text

    def _execute_many(self, sql: str, rows):
        try:
            with self.con.cursor() as cur:
                cur.executemany(sql, rows)  # rendered by sqlglot
        except Exception as e:  # psycopg is imported where the connection is made
            raise self.error(e, sql) from e

    def _fetch_rows(self, sql: str) -> tuple[list[str], list[tuple[Any, ...]]]:
        cur = self.con.execute(sql)
        description = cur.description or []
        names = [d.name for d in description]
        rows = cur.fetchall()
        if any(d.type_code == _NUMERIC_OID for d in description):
            rows = [tuple(_plain(v) for v in row) for row in rows]
        return names, rows

    def _begin(self) -> None:
        self.con.execute("BEGIN")

    def _commit(self) -> None:
        self.con.execute("COMMIT")

    def _rollback(self) -> None:
        self.con.execute("ROLLBACK")

    # -- catalog ----------------------------------------------------------------------------------
    def columns(self, relation: str, schema: str | None = None) -> list[tuple[str, str]]:
        rows = self.con.execute(
            "SELECT a.attname, format_type(a.atttypid, a.atttypmod) FROM pg_catalog.pg_attribute a "
            f"WHERE a.attrelid = {_relation_oid(schema)} AND a.attnum > 0 AND NOT a.attisdropped "
            "ORDER BY a.attnum", _params(relation, schema)).fetchall()
        if not rows:
            where = f"{schema}.{relation}" if schema else relation
            raise EngineError(f"postgres: no table or view named {where!r}")
        return [(r[0], r[1]) for r in rows]

    def relation_exists(self, relation: str, schema: str | None = None) -> bool:
        row = self.con.execute(f"SELECT {_relation_oid(schema)} IS NOT NULL",
                               _params(relation, schema)).fetchone()
        return bool(row and row[0])

    def schema_exists(self, schema: str) -> bool:
        row = self.con.execute("SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_namespace WHERE nspname = %s)",
                               [schema]).fetchone()
        return bool(row and row[0])

    def dependent_views(self, relation: str, schema: str | None = None) -> list[str]:
        """Views and materialized views whose rules read the relation (``schema.view``)."""
        rows = self.con.execute(
            "SELECT DISTINCT n.nspname, c.relname FROM pg_catalog.pg_depend d "
            "JOIN pg_catalog.pg_rewrite r ON r.oid = d.objid "
            "JOIN pg_catalog.pg_class c ON c.oid = r.ev_class "
            "JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace "
            "WHERE d.classid = 'pg_catalog.pg_rewrite'::regclass "
            f"AND d.refobjid = {_relation_oid(schema)} AND c.oid <> d.refobjid "
            "ORDER BY 1, 2", _params(relation, schema)).fetchall()
        return [f"{r[0]}.{r[1]}" for r in rows]

    @contextlib.contextmanager
    def scratch_statements(self) -> Iterator[None]:
        """Without JIT compilation: on temporary tables without statistics the planner's costs of
        nested joins reach billions, and compiling each statement then takes seconds where running it
        takes milliseconds."""
        self.execute_script("SET jit = off")
        try:
            yield
        finally:
            self.execute_script("RESET jit")

    # -- statements PostgreSQL spells differently ---------------------------------------------------
    def create_table_as(self, name: str, query: exp.Expression, *, replace: bool = False,
                        temporary: bool = False, schema: str | None = None) -> None:
        """PostgreSQL has no ``CREATE OR REPLACE TABLE``: replacing drops the old table first."""
        if replace:
            self.drop(name, schema=schema)
        super().create_table_as(name, query, replace=False, temporary=temporary, schema=schema)

    def copy_csv(self, name: str, path: str | Path, *, delimiter: str = ",", header: bool = True,
                 encoding: str = "utf-8") -> int:
        """Load a CSV file into a new table ``name`` of text columns with ``COPY``; returns the rows.

        Column names come from the header (``c1``, ``c2``... without one). Every value is kept as
        text, as ARX reads data; cast later if needed.
        """
        p = Path(path)
        with p.open(encoding=encoding, newline="") as f:
            first = next(csv.reader(f, delimiter=delimiter))
        names = [c.strip() for c in first] if header else [f"c{i + 1}" for i in range(len(first))]
        self.execute(exp.Create(this=exp.Schema(this=table(name), expressions=[
            exp.ColumnDef(this=ident(c), kind=exp.DataType.build("text")) for c in names]), kind="TABLE"))
        quoted = render(table(name), self.dialect)
        with self.con.cursor() as cur, cur.copy(
                f"COPY {quoted} FROM STDIN WITH (FORMAT csv, DELIMITER %s, HEADER %s)",
                (delimiter, bool(header))) as copy, p.open("rb") as f:
            while chunk := f.read(1 << 20):
                copy.write(chunk)
        return self.row_count(name)

    # -- between sessions -------------------------------------------------------------------------
    def _scalar(self, sql: str, params: list[Any]) -> Any:
        try:
            row = self.con.execute(sql, params).fetchone()
        except Exception as e:
            raise self.error(e, sql) from e
        return row[0] if row else None

    def stored_tables(self, prefix: str) -> list[tuple[str, str]]:
        sql = ("SELECT n.nspname, c.relname FROM pg_catalog.pg_class c "
               "JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace "
               "WHERE c.relkind IN ('r', 'p') AND c.relpersistence = 'p' AND starts_with(c.relname, %s)")
        try:
            return [(r[0], r[1]) for r in self.con.execute(sql, [prefix]).fetchall()]
        except Exception as e:
            raise self.error(e, sql) from e

    def session_lock(self, key: int) -> bool:
        """A session advisory lock (``pg_advisory_lock``)."""
        self._scalar("SELECT pg_advisory_lock(%s)", [key])
        return True

    def try_session_lock(self, key: int) -> bool:
        return bool(self._scalar("SELECT pg_try_advisory_lock(%s)", [key]))

    def session_unlock(self, key: int) -> None:
        self._scalar("SELECT pg_advisory_unlock(%s)", [key])

    def create_table_from_arrow(self, name: str, data: pa.Table, *, temporary: bool = False,
                                schema: str | None = None) -> None:
        """The rows are copied with ``COPY`` (PostgreSQL cannot read Arrow in place)."""
        copy_arrow(self, name, data, temporary=temporary, schema=schema)

    def _row_key(self, relation_alias: str | None) -> exp.Expression:
        """``ctid`` as text: stable while the table is not updated, which sqlanon never does to a
        table it reads."""
        key = col("ctid", relation_alias) if relation_alias else exp.column("ctid")
        return exp.cast(key, exp.DataType.build("text"))

    def _row_order(self, relation_alias: str | None) -> exp.Expression:
        return col("ctid", relation_alias) if relation_alias else exp.column("ctid")

    def close(self) -> None:
        self.con.close()
