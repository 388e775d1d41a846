"""Killed runs on PostgreSQL: no noisy row without a committed spend; staging relations of dead runs
removed by the next run, those of live runs (in other processes) left alone."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import warnings
from pathlib import Path

import psycopg
import pytest

from sqlanon import api
from sqlanon.engines.staging import is_staging
from sqlanon.methods.dp.budget import PrivacyLedger
from sqlanon.methods.rng import ReproducibleNoiseWarning
from sqlanon.spec.load import spec_from_dict
from tests.processes import ROOT, kill_when_marked

pytestmark = pytest.mark.postgres

N = 3000
BOUNDS = {"val": [0, 100_000]}
DP = {"laplace": {"mechanism": "laplace", "attributes": ["val"], "epsilon": 0.5, "sensitivity": 1,
                  "bounds": BOUNDS},
      "dp_microaggregation": {"mechanism": "dp_microaggregation", "attributes": ["val"], "k": 5,
                              "epsilon": 0.5, "bounds": BOUNDS}}


def spec_dict(transformation: dict, output: dict) -> dict:
    return {"source": {"table": "kill_rows"},
            "attributes": {"rid": {"role": "insensitive"}, "val": {"role": "sensitive"}},
            "transformation": {"method": "noise", **transformation}, "output": output}


@pytest.fixture()
def source(pg):
    pg.execute_script("CREATE TABLE kill_rows AS SELECT i AS rid, (i * 10)::double precision AS val "
               f"FROM generate_series(0, {N - 1}) i")
    return pg


def noisy_rows(pg) -> int:
    """Rows, in any table or view of any schema of the database, whose ``val`` is not ``rid * 10``
    (a DP microaggregation writes ``val`` only: every row of a table without ``rid`` counts)."""
    relations = pg.fetch_script(
        "SELECT n.nspname, c.relname, bool_or(a.attname = 'rid') FROM pg_class c "
        "JOIN pg_namespace n ON n.oid = c.relnamespace JOIN pg_attribute a ON a.attrelid = c.oid "
        "WHERE c.relkind IN ('r', 'v', 'm', 'p') AND a.attnum > 0 AND NOT a.attisdropped "
        "AND n.nspname NOT IN ('pg_catalog', 'information_schema') "
        "GROUP BY 1, 2 HAVING bool_or(a.attname = 'val')")[1]
    total = 0
    for schema, name, keyed in relations:
        where = "val IS DISTINCT FROM rid * 10" if keyed else "true"
        total += pg.fetch_script(f'SELECT count(*) FROM "{schema}"."{name}" WHERE {where}')[1][0][0]
    return total


def spent(pg, dataset: str) -> float:
    if not pg.relation_exists("sqlanon_privacy_budget"):
        return 0.0
    state = PrivacyLedger(pg).state(dataset)
    return 0.0 if state is None else float(state.spent.epsilon)


def wait_gone(pg, pid: int, timeout: float = 60) -> None:
    """Until the server has ended the backend of a killed client (and rolled its work back)."""
    deadline = time.monotonic() + timeout
    while pg.fetch_script(f"SELECT count(*) FROM pg_stat_activity WHERE pid = {int(pid)}")[1][0][0]:
        assert time.monotonic() < deadline, "the killed client's backend is still running"
        time.sleep(0.05)


KILLED_RELEASE = r"""
import json, sys, time, warnings
from pathlib import Path
from sqlanon import api
from sqlanon.engines.postgres import PostgresEngine
from sqlanon.spec.load import spec_from_dict

dsn, marker, spec = sys.argv[1], Path(sys.argv[2]), json.loads(sys.argv[3])
warnings.simplefilter("ignore")

class Pausing(PostgresEngine):  # stops for good once the noisy rows exist, before the commit
    def _execute(self, sql):
        super()._execute(sql)
        if sql.startswith("CREATE TABLE") and "SELECT" in sql:
            pid = self.con.execute("SELECT pg_backend_pid()").fetchone()[0]
            marker.write_text(str(pid))
            time.sleep(600)

api.apply(spec_from_dict(spec), engine=Pausing(dsn))
"""


@pytest.mark.parametrize("mechanism, mode", [("laplace", "in_place"), ("laplace", "table"),
                                             ("dp_microaggregation", "table")])
def test_a_killed_dp_release_leaves_no_uncharged_noisy_copy(source, pg_dsn, tmp_path, mechanism,
                                                            mode):
    output = {"mode": "in_place"} if mode == "in_place" else {"mode": "table", "name": "released"}
    spec = spec_dict({**DP[mechanism], "dataset": "people", "budget_epsilon": 1}, output)
    marker, script = tmp_path / "marker", tmp_path / "child.py"
    script.write_text(KILLED_RELEASE)
    kill_when_marked(script, [pg_dsn, str(marker), json.dumps(spec)], marker)
    wait_gone(source, int(marker.read_text()))
    assert spent(source, "people") == 0.5 or noisy_rows(source) == 0
    assert source.fetch_script("SELECT count(*), sum(val) FROM kill_rows")[1][0] == (N, 10 * N * (N - 1) / 2)


STAGING_OWNER = r"""
import sys, time
from pathlib import Path
from sqlanon.engines.postgres import PostgresEngine
from sqlanon.engines.staging import StagingArea

dsn, marker = sys.argv[1], Path(sys.argv[2])
engine = PostgresEngine(dsn)
with StagingArea(engine) as area:  # a run that committed part of its staging table
    engine.execute_script(f'CREATE TABLE "{area.name()}" AS SELECT rid, val + 0.5 AS val FROM kill_rows')
    pid = engine.fetch_script("SELECT pg_backend_pid()")[1][0][0]
    marker.write_text(f"{pid} {area.name()}")
    time.sleep(600)
"""


def start_owner(pg_dsn: str, tmp_path: Path) -> tuple[subprocess.Popen, int, str]:
    marker, script = tmp_path / "owner", tmp_path / "owner.py"
    script.write_text(STAGING_OWNER)
    child = subprocess.Popen([sys.executable, str(script), pg_dsn, str(marker)],
                             env=dict(os.environ, PYTHONPATH=str(ROOT)))
    deadline = time.monotonic() + 60
    while not marker.exists() or not marker.read_text():
        assert child.poll() is None and time.monotonic() < deadline
        time.sleep(0.05)
    pid, name = marker.read_text().split()
    return child, int(pid), name


def generalize(pg):
    """A generalization into a new table: another writer that removes leftovers."""
    return api.apply(spec_from_dict({
        "source": {"table": "kill_rows"},
        "attributes": {"rid": {"role": "insensitive"},
                       "val": {"role": "quasi_identifier", "hierarchy": {
                           "intervals": {"widths": [100_000]}}}},
        "privacy": [{"k_anonymity": {"k": 2}}],
        "transformation": {"levels": {"val": 1}},
        "output": {"mode": "table", "name": "generalized", "replace": True}}), engine=pg)


def test_staging_of_a_live_run_is_kept_and_of_a_killed_run_removed(source, pg_dsn, tmp_path):
    child, pid, name = start_owner(pg_dsn, tmp_path)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ReproducibleNoiseWarning)
            report = api.apply(spec_from_dict(spec_dict(
                {"mechanism": "gaussian", "attributes": ["val"], "sensitivity": 1, "epsilon": 1,
                 "delta": 1e-6}, {"mode": "table", "name": "noisy"})), engine=source)
        assert "staging_removed" not in report.outputs
        assert source.relation_exists(name)  # the owner is alive: its staging stays
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(30)
    wait_gone(source, pid)
    report = generalize(source)
    assert [r.split(".")[1] for r in report.outputs["staging_removed"]] == [name]
    left = source.fetch_script("SELECT relname FROM pg_class WHERE starts_with(relname, '__sa_')")[1]
    assert not [r for r, in left if is_staging(r)]
    # the cleaning session released the owner's lock key again
    with psycopg.connect(pg_dsn, autocommit=True) as other:
        key = int(name.removeprefix("__sa_stage_"), 16)
        assert other.execute(f"SELECT pg_try_advisory_lock({key})").fetchone()[0]
