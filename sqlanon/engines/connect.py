"""Open an engine from a URL-like string."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from sqlanon.engines.base import Engine
from sqlanon.errors import EngineError
from sqlanon.registry import Registry
from sqlanon.spec.targets import SPARK_CONNECT_PREFIX, file_path, target_kind

ENGINES: Registry[Callable[[str | None, bool], Engine]] = Registry("engine", sort=False)
"""Target kind (:data:`sqlanon.spec.targets.TARGET_KINDS`, and ``file``) -> ``(target, create)``
opener of its engine."""


@ENGINES.register("memory")
def _memory(target: str | None, create: bool) -> Engine:
    from sqlanon.engines.duckdb import DuckDBEngine

    return DuckDBEngine(":memory:")


@ENGINES.register("postgres")
def _postgres(target: str | None, create: bool) -> Engine:
    assert target is not None
    from sqlanon.engines.postgres import PostgresEngine

    return PostgresEngine(target)


@ENGINES.register("spark")
def _spark(target: str | None, create: bool) -> Engine:
    assert target is not None
    from sqlanon.engines.spark import SparkEngine
    from sqlanon.engines.spark_sessions import parse_target

    if target.startswith(SPARK_CONNECT_PREFIX):
        return SparkEngine(remote=target)
    master, conf = parse_target(target)
    return SparkEngine(master=master, conf=conf)


@ENGINES.register("file")
def _duckdb_file(target: str | None, create: bool) -> Engine:
    assert target is not None
    target = file_path(target)
    if not create and not Path(target).exists():
        raise EngineError(f"the DuckDB database {target!r} does not exist (sqlanon opens an existing "
                          "database; it creates a file only for an output)")
    from sqlanon.engines.duckdb import DuckDBEngine

    return DuckDBEngine(target)


def connect(target: str | None = None, *, create: bool = False) -> Engine:
    """Connect to a database.

    ``None`` or ``":memory:"`` gives an in-memory DuckDB; a path gives a DuckDB file;
    ``postgresql://...`` (or ``postgres://``) connects to PostgreSQL; ``spark://local[N]`` starts
    a local Spark session (``?key=value&...`` sets Spark settings), or uses the one running in this
    process; ``sc://HOST:PORT`` opens a session on a Spark Connect server.

    A DuckDB file that does not exist is an error naming the path, unless ``create`` (for a database
    that receives an output): a mistyped path must not silently become a new, empty database.
    """
    return ENGINES.get(target_kind(target))(target, create)
