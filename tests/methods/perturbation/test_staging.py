"""Staging tables of killed noise runs on DuckDB: never noisy rows without a committed spend, and
leftovers removed by the next run (but not those of a live run in the same process).

PostgreSQL: tests/postgres/test_pg_staging.py.
"""

from __future__ import annotations

import json
import logging
import warnings
from pathlib import Path

import pytest

from sqlanon import api
from sqlanon.engines import duckdb_blocks as B
from sqlanon.engines.duckdb import DuckDBEngine
from sqlanon.engines.staging import StagingArea, is_staging, remove_leftovers
from sqlanon.errors import EngineError
from sqlanon.methods.dp.budget import PrivacyLedger
from sqlanon.methods.dp.ledger_tables import BUDGET_TABLE, LEDGER_TABLE
from sqlanon.methods.rng import ReproducibleNoiseWarning
from sqlanon.spec.load import spec_from_dict
from tests.processes import kill_when_marked

N = 10_500

pytestmark = pytest.mark.filterwarnings("ignore::sqlanon.methods.rng.ReproducibleNoiseWarning")

LAPLACE = {"mechanism": "laplace", "attributes": ["x"], "epsilon": 0.5, "sensitivity": 1,
           "dataset": "people", "budget_epsilon": 1,
           "bounds": {"x": [0, 200_000]}}
GAUSSIAN = {"mechanism": "gaussian", "attributes": ["x"], "sensitivity": 1, "epsilon": 1,
            "delta": 1e-6}


def spec_dict(transformation: dict, mode: str = "in_place") -> dict:
    output = {"mode": "in_place"} if mode == "in_place" else {"mode": "table", "name": "out"}
    return {"source": {"table": "rows"},
            "attributes": {"id": {"role": "insensitive"}, "x": {"role": "sensitive"}},
            "transformation": {"method": "noise", **transformation}, "output": output}


KILLED_CHILD = r"""
import json, sys, time, warnings
from pathlib import Path
from sqlanon import api
from sqlanon.engines.duckdb import DuckDBEngine
from sqlanon.engines import duckdb_blocks as B
from sqlanon.spec.load import spec_from_dict

database, marker, where, spec = sys.argv[1], Path(sys.argv[2]), sys.argv[3], json.loads(sys.argv[4])
B.BLOCK_ROWS = 1000
warnings.simplefilter("ignore")
real = B._stream
calls = []

def pausing(rows, schema, batches):  # stops for good inside the fourth block
    calls.append(rows)
    if where == "block" and len(calls) == 4:
        marker.write_text("blocks")
        time.sleep(600)
    yield from real(rows, schema, batches)

class Pausing(DuckDBEngine):  # or stops right after the source was dropped, before the rename
    def _execute(self, sql):
        super()._execute(sql)
        if where == "drop" and sql.startswith('DROP TABLE "rows"'):
            marker.write_text("dropped")
            time.sleep(600)

B._stream = pausing
api.apply(spec_from_dict(spec), engine=Pausing(database))
"""


def make_database(path: Path) -> Path:
    with DuckDBEngine(str(path)) as e:
        e.con.execute(f"CREATE TABLE rows AS SELECT i AS id, (i * 10)::DOUBLE AS x FROM range({N}) r(i)")
    return path


def kill_during(tmp_path: Path, where: str, spec: dict) -> Path:
    database = make_database(tmp_path / "rows.duckdb")
    marker, script = tmp_path / "marker", tmp_path / "child.py"
    script.write_text(KILLED_CHILD)
    kill_when_marked(script, [str(database), str(marker), where, json.dumps(spec)], marker)
    return database


def relations(e: DuckDBEngine) -> list[tuple[str, str]]:
    """Every table and view of every schema, ``(schema, name)``."""
    return [(s, n) for s, n in e.con.execute(
        "SELECT table_schema, table_name FROM information_schema.tables "
        "WHERE table_catalog = current_database() ORDER BY ALL").fetchall()]


def noisy_rows(e: DuckDBEngine) -> int:
    """Rows, in any relation of the database, whose ``x`` is not the original ``id * 10``."""
    total = 0
    for schema, name in relations(e):
        if name in (BUDGET_TABLE, LEDGER_TABLE):
            continue
        columns = {c for c, in e.con.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_schema = ? AND "
            "table_name = ?", [schema, name]).fetchall()}
        if {"id", "x"} <= columns:
            total += e.con.execute(f'SELECT count(*) FROM "{schema}"."{name}" '
                                   "WHERE x IS DISTINCT FROM id * 10").fetchall()[0][0]
    return total


def spent(e: DuckDBEngine, dataset: str = "people") -> float:
    if not e.relation_exists(BUDGET_TABLE):
        return 0.0
    state = PrivacyLedger(e).state(dataset)
    return 0.0 if state is None else float(state.spent.epsilon)


@pytest.mark.parametrize("where, mode", [("block", "in_place"), ("block", "table"),
                                         ("drop", "in_place")])
def test_a_killed_dp_release_leaves_no_uncharged_noisy_copy(tmp_path, where, mode):
    """A DP release killed while its blocks are written (or between the drop of the source and the
    rename) leaves noisy rows only if the ledger shows the spend."""
    database = kill_during(tmp_path, where, spec_dict(LAPLACE, mode))
    with DuckDBEngine(str(database)) as e:
        assert spent(e) == 0.5 or noisy_rows(e) == 0, (spent(e), noisy_rows(e), relations(e))
        assert noisy_rows(e) > 0  # the kill came after the first block was committed
        ids, xs = zip(*e.con.execute("SELECT id, x FROM rows ORDER BY id").fetchall())
        assert list(ids) == list(range(N)) and list(xs) == [i * 10.0 for i in range(N)]


@pytest.mark.parametrize("where", ["block", "drop"])
def test_staging_left_by_a_killed_run_is_removed_by_the_next_run(tmp_path, where, caplog):
    database = kill_during(tmp_path, where, spec_dict(GAUSSIAN))
    with DuckDBEngine(str(database)) as e:
        left = [n for _, n in relations(e) if n != "rows"]
        assert left and all(is_staging(n) for n in left)
        with caplog.at_level(logging.WARNING, logger="sqlanon"):
            report = api.apply(spec_from_dict(spec_dict({**GAUSSIAN, "seed": 1}, "table")), engine=e)
        assert sorted(report.outputs["staging_removed"]) == sorted(f"main.{n}" for n in left)
        assert f"removed {len(left)} staging table" in caplog.text
        assert relations(e) == [("main", "out"), ("main", "rows")]


def test_staging_tables_of_earlier_versions_are_removed_by_a_microaggregation(tmp_path):
    """The DuckDB noise writer used to name its staging tables __sa_noise_<hex>; every writer
    removes leftovers, a microaggregation in place too."""
    with DuckDBEngine(str(make_database(tmp_path / "rows.duckdb"))) as e:
        e.con.execute('CREATE TABLE "__sa_noise_0123456789ab" AS SELECT * FROM rows')
        e.con.execute('CREATE SCHEMA other')
        e.con.execute('CREATE TABLE other."__sa_stage_0123456789ab_u" AS SELECT * FROM rows')
        e.con.execute('CREATE TABLE "__sa_noise_keep" (x INT)')  # not a staging name: kept
        report = api.apply(spec_from_dict({
            "source": {"table": "rows"},
            "attributes": {"id": {"role": "insensitive"}, "x": {"role": "quasi_identifier"}},
            "transformation": {"method": "microaggregation", "algorithm": "mdav", "k": 5,
                               "key": "id"},
            "output": {"mode": "in_place"}}), engine=e)
        assert report.outputs["staging_removed"] == ["main.__sa_noise_0123456789ab",
                                                     "other.__sa_stage_0123456789ab_u"]
        assert [n for _, n in relations(e)] == ["__sa_noise_keep", "rows"]


def test_a_live_run_in_the_same_process_keeps_its_staging(tmp_path):
    """Several runs may share a process: only tokens no open staging area holds are leftovers."""
    with DuckDBEngine(str(make_database(tmp_path / "rows.duckdb"))) as e:
        with StagingArea(e) as live:
            e.con.execute(f'CREATE TABLE "{live.name()}" AS SELECT * FROM rows')
            dead = StagingArea(e).name("u")
            e.con.execute(f'CREATE TABLE "{dead}" AS SELECT * FROM rows')
            assert remove_leftovers(e) == [f"main.{dead}"]
            assert e.relation_exists(live.name())
        assert remove_leftovers(e) == [f"main.{live.name()}"]


def test_a_failed_block_write_refunds_the_spend_and_drops_its_staging(tmp_path, monkeypatch):
    """The spend is committed before the first block; a write that fails cleanly takes it back
    together with the rows it wrote."""
    monkeypatch.setattr(B, "BLOCK_ROWS", 1000)
    real, calls = B._stream, []

    def failing(rows, schema, batches):
        calls.append(rows)
        if len(calls) == 5:
            raise OSError("disk full")
        yield from real(rows, schema, batches)

    monkeypatch.setattr(B, "_stream", failing)
    with DuckDBEngine(str(make_database(tmp_path / "rows.duckdb"))) as e:
        with pytest.raises(EngineError, match="disk full"):
            api.apply(spec_from_dict(spec_dict(LAPLACE)), engine=e)
        assert spent(e) == 0 and PrivacyLedger(e).entries("people") == []
        assert sorted(n for _, n in relations(e)) == sorted(["rows", BUDGET_TABLE, LEDGER_TABLE])
        assert noisy_rows(e) == 0
        monkeypatch.setattr(B, "_stream", real)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ReproducibleNoiseWarning)
            report = api.apply(spec_from_dict(spec_dict(LAPLACE)), engine=e)
        assert report.guarantee["ledger"]["spent"]["epsilon"] == 0.5 and spent(e) == 0.5
        assert len(PrivacyLedger(e).entries("people")) == 1
