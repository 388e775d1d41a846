"""One in-memory DuckDB shared by the random cases of this folder (connecting costs more than a check)."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def shared_duck():
    from sqlanon.engines.duckdb import DuckDBEngine

    engine = DuckDBEngine()
    yield engine
    engine.close()
