"""Open an engine from a URL-like string."""

from __future__ import annotations

from pathlib import Path

from sqlanon.engines.base import Engine
from sqlanon.errors import EngineError
from sqlanon.spec.targets import file_path, target_kind


def connect(target: str | None = None, *, create: bool = False) -> Engine:
    """Connect to a database.

    ``None`` or ``":memory:"`` gives an in-memory DuckDB; a path gives a DuckDB file;
    ``postgresql://...`` (or ``postgres://``) connects to PostgreSQL.

    A DuckDB file that does not exist is an error naming the path, unless ``create`` (for a database
    that receives an output): a mistyped path must not silently become a new, empty database.
    """
    kind = target_kind(target)
    if kind == "memory":
        from sqlanon.engines.duckdb import DuckDBEngine

        return DuckDBEngine(":memory:")
    assert target is not None
    if kind == "postgres":
        from sqlanon.engines.postgres import PostgresEngine

        return PostgresEngine(target)
    target = file_path(target)
    if not create and not Path(target).exists():
        raise EngineError(f"the DuckDB database {target!r} does not exist (sqlanon opens an existing "
                          "database; it creates a file only for an output)")
    from sqlanon.engines.duckdb import DuckDBEngine

    return DuckDBEngine(target)
