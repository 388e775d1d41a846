"""DuckDB (in memory and in a file) passes the engine conformance suite."""

from __future__ import annotations

import pytest

from sqlanon import api
from sqlanon.engines import connect
from sqlanon.engines.capabilities import Capabilities
from sqlanon.engines.duckdb import DuckDBEngine
from sqlanon.engines.duckdb_blocks import ROW_GROUP_ROWS
from sqlanon.spec import spec_from_dict
from sqlanon.sql.nodes import table
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


class TestDuckDBFileClosedAfterRun(EngineConformance):
    """A file that a run opened and closes when done commits straight into the file."""

    @pytest.fixture()
    def engine(self, tmp_path):
        with connect(str(tmp_path / "conformance.duckdb"), create=True) as engine:
            engine.closes_after_run()
            yield engine


@pytest.mark.parametrize("closed_after_run", [False, True])
def test_a_run_that_closes_the_file_commits_into_it_not_into_the_log(tmp_path, closed_after_run):
    path = tmp_path / "out.duckdb"
    engine = DuckDBEngine(str(path))
    if closed_after_run:
        engine.closes_after_run()
    with engine.transaction():
        engine.con.execute("CREATE TABLE t AS SELECT range AS i, 'x' || range AS s FROM range(50000)")
    wal = tmp_path / "out.duckdb.wal"
    logged = wal.exists() and wal.stat().st_size > 0
    engine.close()
    assert logged is not closed_after_run
    with DuckDBEngine(str(path), read_only=True) as reopened:
        assert reopened.con.execute("SELECT count(*), sum(i) FROM t").fetchone() == (50000, 1249975000)


class TestDuckDBSizedForOneRowGroup(EngineConformance):
    """A run that opened the connection over a source of one row group runs on one thread."""

    @pytest.fixture()
    def engine(self, tmp_path):
        with connect(str(tmp_path / "conformance.duckdb"), create=True) as engine:
            engine.closes_after_run()
            engine.con.execute("CREATE TABLE one_group AS SELECT range AS i FROM range(10)")
            engine.sized_for(table("one_group"))
            assert _threads(engine) == 1
            yield engine


def _threads(engine: DuckDBEngine) -> int:
    return int(engine.con.execute("SELECT current_setting('threads')").fetchall()[0][0])


@pytest.mark.parametrize(("rows", "view"), [(1, False), (ROW_GROUP_ROWS, False), (ROW_GROUP_ROWS, True),
                                            (ROW_GROUP_ROWS + 1, False), (ROW_GROUP_ROWS + 1, True)])
def test_a_source_of_one_row_group_runs_on_one_thread(rows, view):
    with DuckDBEngine() as engine:
        engine.con.execute("SET threads = 2")
        engine.con.execute(f"CREATE TABLE t AS SELECT range AS i FROM range({rows})")
        engine.con.execute("CREATE VIEW v AS SELECT * FROM t")
        engine.sized_for(table("v" if view else "t"))
        assert _threads(engine) == (1 if rows <= ROW_GROUP_ROWS else 2)


def test_a_run_on_the_callers_connection_keeps_its_threads(tmp_path):
    (tmp_path / "c.csv").write_text("a;*\nb;*\n", encoding="utf-8")
    spec = spec_from_dict({
        "source": {"table": "t"},
        "attributes": {"c": {"role": "quasi_identifier", "hierarchy": {"csv": str(tmp_path / "c.csv")}},
                       "n": "insensitive"},
        "privacy": {"k_anonymity": {"k": 2}},
        "output": {"mode": "table", "name": "t_anon"}})
    with DuckDBEngine() as engine:
        engine.con.execute("SET threads = 2")
        engine.con.execute("CREATE TABLE t AS SELECT ['a', 'b'][1 + range % 2] AS c, range AS n "
                           "FROM range(100)")
        api.anonymize(spec, engine=engine)
        assert engine.row_count("t_anon") == 100
        assert _threads(engine) == 2
