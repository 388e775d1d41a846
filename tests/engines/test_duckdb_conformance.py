"""DuckDB (in memory and in a file) passes the engine conformance suite."""

from __future__ import annotations

import pytest

from sqlanon.engines import connect
from sqlanon.engines.capabilities import Capabilities
from sqlanon.engines.duckdb import DuckDBEngine
from tests.engines.conformance import EngineConformance


class TestDuckDBInMemory(EngineConformance):
    @pytest.fixture()
    def engine(self):
        with connect() as engine:
            yield engine


class TestDuckDBFile(EngineConformance):
    @pytest.fixture()
    def engine(self, tmp_path):
        with connect(str(tmp_path / "conformance.duckdb"), create=True) as engine:
            yield engine


class Plain(DuckDBEngine):
    """DuckDB declaring only what any SQL database with transactions has: the suite then checks
    that every capability it does not declare is refused, and that rows are matched by key."""

    capabilities = Capabilities(stable_row_key=True, transactional_ddl=True, atomic_rename=True)


class TestDuckDBWithoutOptionalCapabilities(EngineConformance):
    @pytest.fixture()
    def engine(self):
        with Plain() as engine:
            yield engine


def test_the_declarations_differ_where_the_engines_differ():
    assert set(DuckDBEngine.capabilities.declared()) - set(Plain.capabilities.declared()) == {
        "positional_join", "arrow_in", "file_registration", "row_block_writes"}
