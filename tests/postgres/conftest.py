"""A fresh schema per test on the session's PostgreSQL server (``pg_server``, tests/conftest.py).

Without the server binaries every test here fails with the command that installs them.
"""

from __future__ import annotations

import itertools

import pytest

_names = itertools.count(1)


@pytest.fixture()
def pg_dsn(pg_server) -> str:
    """A connection string to a new, empty schema (first on the search path)."""
    return pg_server.create_schema(f"test_{next(_names)}")


@pytest.fixture()
def pg(pg_dsn):
    from sqlanon.engines.postgres import PostgresEngine

    engine = PostgresEngine(pg_dsn)
    yield engine
    engine.close()
