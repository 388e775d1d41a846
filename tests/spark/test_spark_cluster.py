"""The command line on a standalone Spark cluster through Spark Connect: a master, two one-core
workers and a Connect server, each a process of its own. `anonymize --database sc://...` gives the
report DuckDB gives for the same Parquet file, writes the same rows, and the tasks of its jobs ran on
executors of both workers. The Spark engine on a Connect session passes the engine conformance
suite, as on a local session."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path
from urllib.parse import urlsplit

import pyarrow.parquet as pq
import pytest
from sqlglot import exp

from sqlanon import api
from sqlanon.engines.duckdb import DuckDBEngine
from sqlanon.spec import spec_from_dict
from sqlanon.sql.nodes import table
from tests.conftest import ADULT, ROOT, adult_spec_dict, require_data
from tests.engines.conformance import EngineConformance
from tests.spark.cluster import Cluster, ClusterUnavailable, get_json
from tests.spark.test_spark_generalization import QIS, same

pytestmark = [pytest.mark.spark, pytest.mark.cluster]

OUTPUT = "adult_anon"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    try:
        with Cluster(tmp_path_factory.mktemp("spark-cluster")) as running:
            yield running
    except ClusterUnavailable as e:
        pytest.fail(str(e), pytrace=False)


@pytest.fixture(scope="module")
def adult_parquet(tmp_path_factory) -> Path:
    """Adult (every column as text) as one Parquet file of several row groups, which Spark reads in
    several tasks."""
    path = tmp_path_factory.mktemp("adult") / "adult.parquet"
    duck = DuckDBEngine()
    try:
        data = duck.con.read_csv(str(require_data(ADULT) / "adult.csv"), delimiter=";", header=True,
                                 all_varchar=True).to_arrow_table()
    finally:
        duck.close()
    pq.write_table(data, path, row_group_size=4000)
    return path


def spec(parquet: Path) -> dict:
    d = adult_spec_dict(ADULT, qis=QIS, sensitive=["occupation"])
    d["source"] = {"file": str(parquet), "format": "parquet"}
    d["transformation"] = {"search": "optimal", "metric": "loss", "suppression_limit": 0.02}
    d["metrics"] = ["loss"]
    d["output"] = {"mode": "table", "name": OUTPUT}
    return d


def without_timings(report: dict) -> dict:
    search = report.get("search")
    if search:
        report = {**report, "search": {k: v for k, v in search.items() if k not in ("seconds", "evaluation")}}
    return report


def test_anonymize_on_a_cluster_gives_duckdbs_report_and_runs_on_both_workers(adult_parquet, cluster,
                                                                             tmp_path):
    spec_file = tmp_path / "adult.yml"
    spec_file.write_text(json.dumps(spec(adult_parquet)), encoding="utf-8")  # JSON is YAML
    run = subprocess.run([sys.executable, "-m", "sqlanon", "anonymize", str(spec_file),
                          "--database", cluster.remote, "--json"],
                         capture_output=True, text=True, timeout=600, cwd=tmp_path,
                         env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert run.returncode == 0, run.stdout + run.stderr
    assert not run.stderr.strip(), run.stderr  # nothing logged by the Connect client either
    on_spark = json.loads(run.stdout)

    duck = DuckDBEngine()
    try:
        on_duckdb = api.anonymize(spec_from_dict(spec(adult_parquet)), engine=duck).as_dict()
        duckdb_rows = Counter(duck.fetch(exp.select("*").from_(table(OUTPUT)))[1])
    finally:
        duck.close()
    assert on_spark["anonymous"]
    assert on_spark["transformation"]["levels"] == on_duckdb["transformation"]["levels"]
    assert same(without_timings(on_spark), without_timings(on_duckdb)), (on_spark, on_duckdb)

    from sqlanon.engines.spark import SparkEngine

    reader = SparkEngine(remote=cluster.remote)
    try:
        written = reader.fetch_arrow(exp.select(exp.Star()).from_(table(OUTPUT)))
        spark_rows = Counter(zip(*(written.column(c).to_pylist() for c in written.column_names)))
    finally:
        reader.close()
    assert spark_rows == duckdb_rows
    assert sum(spark_rows.values()) == on_spark["outputs"]["rows"]

    # two executors, each of which ran tasks, on different workers (an executor's log pages are
    # served by its worker's UI)
    workers = {urlsplit(w["webuiaddress"]).netloc: w["id"] for w in cluster.workers()}
    executors = cluster.executors()
    assert len(executors) == 2 and all(e["completedTasks"] > 0 for e in executors), executors
    ran_on = {workers[urlsplit(e["executorLogs"]["stdout"]).netloc] for e in executors}
    assert ran_on == set(workers.values()) and len(ran_on) == 2, (executors, workers)
    app = cluster.application()
    jobs = get_json(f"{cluster.driver_api}/applications/{app}/jobs")
    assert jobs and all(j["status"] == "SUCCEEDED" for j in jobs), jobs


class TestSparkConnect(EngineConformance):
    any_table_name = False

    @pytest.fixture()
    def engine(self, cluster):
        """An engine on a session of its own, in a new database of the server's catalog."""
        from sqlanon.engines.spark import SparkEngine
        from tests.spark_session import drop_database, fresh_database

        engine = SparkEngine(remote=cluster.remote)
        name = fresh_database(engine.session)
        yield engine
        drop_database(engine.session, name)
        engine.close()


def test_a_closed_connect_session_leaves_local_sessions_local(cluster):
    """pyspark marks the process as a Connect client when a remote session opens; the engine undoes
    the mark when it closes the session it opened, so a local session opens locally afterwards."""
    from sqlanon.engines import connect
    from sqlanon.engines.spark import CONNECT_MODE, SparkEngine

    before = os.environ.get(CONNECT_MODE)
    engine = SparkEngine(remote=cluster.remote)
    try:
        assert engine.fetch(exp.select(exp.Literal.number(1)))[1] == [(1,)]
    finally:
        engine.close()
    assert os.environ.get(CONNECT_MODE) == before
    with connect("spark://local[2]") as local:
        assert type(local.session).__module__ == "pyspark.sql.session"  # not pyspark.sql.connect
