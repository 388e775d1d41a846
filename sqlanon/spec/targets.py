"""What a database setting names: an in-memory DuckDB, a PostgreSQL server, a Spark session, or a
DuckDB file.

One reading for the spec loader (which resolves file paths against the spec's folder) and for
:func:`sqlanon.engines.connect.connect`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

from sqlanon.errors import SpecError
from sqlanon.registry import Registry

MEMORY = (":memory:", "duckdb://", "duckdb:///:memory:")
POSTGRES_PREFIXES = ("postgresql://", "postgres://", "host=")
DUCKDB_PREFIX = "duckdb://"
SPARK_PREFIX = "spark://"
SPARK_CONNECT_PREFIX = "sc://"

Kind = Literal["memory", "postgres", "spark", "file"]


TARGET_KINDS: Registry[Callable[[str | None], bool]] = Registry("database target", sort=False)
"""Kind -> whether a target names it, asked in registration order; a target no kind claims is a
DuckDB file (:func:`target_kind`). The engine each kind opens: :data:`sqlanon.engines.connect.ENGINES`."""


@TARGET_KINDS.register("memory")
def _memory(target: str | None) -> bool:
    return target is None or target in MEMORY


@TARGET_KINDS.register("postgres")
def _postgres(target: str | None) -> bool:
    return target is not None and target.startswith(POSTGRES_PREFIXES)


@TARGET_KINDS.register("spark")
def _spark(target: str | None) -> bool:
    return target is not None and target.startswith((SPARK_PREFIX, SPARK_CONNECT_PREFIX))


def target_kind(target: str | None, path: str = "") -> Kind:
    """``memory``, ``postgres``, ``spark`` or ``file``; a URL of another scheme (``mysql://``) is a
    SpecError at ``path``, never mistaken for a relative file name.

    >>> target_kind("postgresql://me@db/clinic"), target_kind("clinic.duckdb"), target_kind(None)
    ('postgres', 'file', 'memory')
    >>> target_kind("spark://local[2]"), target_kind("sc://spark.example.com:15002")
    ('spark', 'spark')
    """
    for kind, names in TARGET_KINDS.items():
        if names(target):
            return kind  # type: ignore[return-value]
    assert target is not None
    if "://" in file_path(target):
        raise SpecError(f"unsupported connection {target.split('://')[0]!r}: use a DuckDB file path, "
                        "a postgresql:// URL, spark://local[N] or sc://HOST:PORT", path=path)
    return "file"


def file_path(target: str) -> str:
    """A DuckDB file target without its optional ``duckdb://`` prefix."""
    return target[len(DUCKDB_PREFIX):] if target.startswith(DUCKDB_PREFIX) else target
