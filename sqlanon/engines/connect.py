"""Open an engine from a URL-like string."""

from __future__ import annotations

from sqlanon.engines.base import Engine
from sqlanon.errors import SpecError


def connect(target: str | None = None) -> Engine:
    """Connect to a database.

    ``None`` or ``":memory:"`` gives an in-memory DuckDB; a path gives a DuckDB file;
    ``postgresql://...`` (or ``postgres://``) connects to PostgreSQL.
    """
    if target is None or target in (":memory:", "duckdb://", "duckdb:///:memory:"):
        from sqlanon.engines.duckdb import DuckDBEngine

        return DuckDBEngine(":memory:")
    if target.startswith(("postgresql://", "postgres://")) or target.startswith("host="):
        from sqlanon.engines.postgres import PostgresEngine

        return PostgresEngine(target)
    if target.startswith("duckdb://"):
        target = target[len("duckdb://"):]
    if "://" in target:
        raise SpecError(f"unsupported connection {target.split('://')[0]!r}: use a DuckDB file path "
                        "or a postgresql:// URL")
    from sqlanon.engines.duckdb import DuckDBEngine

    return DuckDBEngine(target)
