"""A real PostgreSQL 15 server for the session (tests/pg_server.py), a fresh schema per test.

Without the server binaries every test here fails with the command that installs them.
"""

from __future__ import annotations

import itertools

import pytest

from tests.pg_server import PostgresServer, PostgresUnavailable

_names = itertools.count(1)


@pytest.fixture(scope="session")
def pg_server():
    try:
        server = PostgresServer().start()
    except PostgresUnavailable as e:
        pytest.fail(str(e), pytrace=False)
    yield server
    server.stop()


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
