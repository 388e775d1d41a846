"""Microaggregation on Spark gives DuckDB's tables and report figures for the same rows: individual
ranking and projection as Spark SQL, MDAV and V-MDAV blocked by ``block_by`` and run block by block
on the executors. Without blocking, a clustering algorithm is refused before anything is read."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from sqlglot import exp

from sqlanon import api
from sqlanon.engines.duckdb import DuckDBEngine
from sqlanon.errors import SpecError, UnsupportedError
from sqlanon.spec import spec_from_dict
from sqlanon.sql.nodes import table
from tests.compare import same
from tests.ports import free_port

pytestmark = pytest.mark.spark

N = 2_000
GRADES = ["low", "mid", "high", "top"]
JOBS = {"clerk": ["office", "*"], "typist": ["office", "*"], "smith": ["craft", "*"],
        "joiner": ["craft", "*"], "baker": ["craft", "*"]}


def people(n: int = N, seed: int = 14) -> pa.Table:
    """Numbers with ties (integer ages), three large regions, two regions of fewer than k rows (pooled
    into one block) and one of NULL; ids in an order other than the rows'."""
    rng = np.random.default_rng(seed)
    region = rng.choice(["north", "south", "east"], size=n).astype(object)
    region[:2], region[2:4], region[4:40] = "isle", "fjord", None
    return pa.table({
        "id": pa.array(rng.permutation(n) * 7 + 3, pa.int64()),
        "region": pa.array(region.tolist(), pa.string()),
        "age": pa.array(rng.integers(18, 90, n), pa.int64()),
        "income": pa.array(np.round(rng.lognormal(10, 0.6, n), 2)),
        "hours": pa.array(rng.normal(38, 9, n)),
        "note": pa.array([f"person {i}" for i in range(n)]),
        "grade": pa.array(rng.choice(GRADES, size=n).tolist(), pa.string()),
        "job": pa.array(rng.choice(list(JOBS), size=n).tolist(), pa.string()),
    })


@pytest.fixture(scope="module")
def engines(spark_session):
    """The same table ``people`` in DuckDB and in a Spark database of its own (``database``)."""
    from sqlanon.engines.spark import SparkEngine
    from tests.spark_session import drop_database, fresh_database

    database = fresh_database(spark_session)
    spark = SparkEngine(session=spark_session)
    duck = DuckDBEngine()
    try:
        data = people()
        spark.create_table_from_arrow("people", data)
        duck.create_table_from_arrow("people", data)
        yield {"duckdb": duck, "spark": spark, "database": database}
    finally:
        duck.close()
        spark.close()
        drop_database(spark_session, database)


def spec(name: str, **transformation) -> dict:
    return {
        "source": {"table": "people"},
        "attributes": {"id": "insensitive", "region": "insensitive", "note": "insensitive",
                       "grade": "insensitive", "job": "insensitive",
                       "age": "quasi_identifier", "income": "quasi_identifier", "hours": "quasi_identifier"},
        "transformation": {"method": "microaggregation", "k": 4, **transformation},
        "output": {"mode": "table", "name": name},
    }


def written(engine, name: str) -> list[tuple]:
    """The output's rows sorted by id (unique), the order of the columns kept."""
    return sorted(engine.fetch(exp.select("*").from_(table(name)))[1], key=lambda r: r[0])


def apply_both(engines, d: dict, metrics: bool) -> dict:
    return {name: api.apply(spec_from_dict(d), engine=engines[name], metrics=None if metrics else ())
            .as_dict() for name in ("duckdb", "spark")}


@pytest.fixture()
def driver_reads(monkeypatch) -> list[int]:
    """How many rows each query result sqlanon reads from Spark holds (the real reads, counted)."""
    from sqlanon.engines.spark import SparkEngine

    counts: list[int] = []
    fetch_rows, fetch_arrow = SparkEngine._fetch_rows, SparkEngine.fetch_arrow

    def counted_rows(self, sql):
        names, rows = fetch_rows(self, sql)
        counts.append(len(rows))
        return names, rows

    def counted_arrow(self, query):
        data = fetch_arrow(self, query)
        counts.append(data.num_rows)
        return data

    monkeypatch.setattr(SparkEngine, "_fetch_rows", counted_rows)
    monkeypatch.setattr(SparkEngine, "fetch_arrow", counted_arrow)
    return counts


def assert_same_release(engines, d: dict, reads: list[int], *, metrics: bool = True) -> dict:
    """Spark's report and table are DuckDB's (the report's metrics, each a Spark job, when asked).
    Without metrics (record linkage reads every row), the driver reads aggregates only: counts, the
    strata of ``block_by`` (six regions) and the group sizes' summary."""
    reports = apply_both(engines, d, metrics)
    assert same(reports["spark"], reports["duckdb"]), reports
    assert reads and (metrics or max(reads) <= 6), reads
    name = d["output"]["name"]
    spark, duck = written(engines["spark"], name), written(engines["duckdb"], name)
    assert len(spark) == N and same(spark, duck)
    return reports["spark"]


@pytest.mark.parametrize("algorithm, key, statistic, metrics", [
    ("individual_ranking", "id", "median", True), ("individual_ranking", None, "mean", False),
    ("projection", None, "mean", False)])
def test_sql_methods_give_duckdbs_table(engines, driver_reads, algorithm, key, statistic, metrics):
    """Ties of a value are broken by the key, or without one by every other column, as on DuckDB."""
    d = spec(f"out_{algorithm}_{key}", algorithm=algorithm, statistic=statistic, attributes=["age", "income"],
             **({"key": key} if key else {}))
    if algorithm == "projection":  # one SELECT: a view of it is one statement, which Spark can make
        d["output"]["mode"] = "view"
    report = assert_same_release(engines, d, driver_reads, metrics=metrics)
    assert report["achieved_k"] >= 4
    assert not metrics or {"sse", "il1s", "record_linkage"} <= set(report["metrics"])


@pytest.mark.parametrize("algorithm, key, metrics", [("mdav", None, False), ("vmdav", "id", True)])
def test_blocked_clustering_gives_duckdbs_groups(engines, driver_reads, algorithm, key, metrics):
    """Blocks of region: each large region, NULL included, on its own; the two small ones pooled."""
    d = spec(f"out_blocked_{algorithm}", algorithm=algorithm, block_by=["region"],
             **({"key": key} if key else {}))
    if key:  # an ordinal attribute takes its group's median grade, which the executors choose
        d["attributes"]["grade"] = {"role": "quasi_identifier", "type": "ordinal", "order": GRADES}
    report = assert_same_release(engines, d, driver_reads, metrics=metrics)
    assert report["achieved_k"] >= 4 and report["groups"] > N // 8
    assert not metrics or report["metrics"]["il1s"] > 0
    # every group lies within one block: MDAV's groups share the means of all three attributes
    out = engines["spark"].fetch(exp.select(exp.column("region"), exp.column("age"), exp.column("income"))
                                 .from_(table(d["output"]["name"])))[1]
    blocks: dict = {}
    for region, age, income in out:
        blocks.setdefault((age, income), set()).add(region if region not in ("isle", "fjord") else "pool")
    assert all(len(b) == 1 for b in blocks.values())


def test_clustering_without_blocking_is_refused_before_anything_is_written(engines):
    spark = engines["spark"]
    with pytest.raises(UnsupportedError, match="needs all rows on one machine") as e:
        api.apply(spec_from_dict(spec("out_unblocked", algorithm="mdav")), engine=spark)
    assert "transformation.block_by" in str(e.value) and "\n" not in str(e.value)
    assert not spark.relation_exists("out_unblocked")
    with pytest.raises(UnsupportedError, match=r"block_size .* block by columns instead"):
        api.check(spec_from_dict(spec("out_unblocked", algorithm="mdav", block_size=100)), engine=spark)
    with pytest.raises(UnsupportedError, match="use algorithm individual_ranking"):
        api.check(spec_from_dict(spec("out_unblocked", algorithm="optimal_univariate")), engine=spark)
    view = spec("out_unblocked", algorithm="mdav", block_by=["region"])
    view["output"]["mode"] = "view"
    with pytest.raises(SpecError, match=r"reads a group table created with it in one transaction.*"
                                        r"output\.mode: table") as e:
        api.apply(spec_from_dict(view), engine=spark)
    assert e.value.path == "output.mode" and not spark.relation_exists("out_unblocked")


@pytest.fixture()
def connect_server(spark_session):
    """A Spark Connect server in the test session's own JVM (no other process), on a free port."""
    context = spark_session._jsc.sc()
    port = free_port()
    context.conf().set("spark.connect.grpc.binding.port", str(port))
    service = spark_session._jvm.org.apache.spark.sql.connect.service.SparkConnectService
    service.start(context)
    yield f"sc://127.0.0.1:{port}"
    service.stop(getattr(service, "stop$default$1")(), getattr(service, "stop$default$2")())


def test_blocked_mdav_and_individual_ranking_run_through_spark_connect(engines, connect_server):
    """The client sends the function to the server, whose executors run it: MDAV on mixed
    attributes, a nominal one coded into its distinct values over the whole table in every block,
    and its group's centroid chosen there. Individual ranking, told to number tables of any size
    across tasks, numbers the rows with the DataFrame calls of a Connect session (range partitions,
    checkpoints); the session's cores, which the default choice asks, are read the same way."""
    from sqlanon.engines.spark import SparkEngine

    d = spec("out_connect", algorithm="mdav_mixed", block_by=["region"], key="id")
    d["attributes"]["job"] = {"role": "quasi_identifier", "hierarchy": {"map": JOBS}}
    ranked = spec("out_connect_ranked", algorithm="individual_ranking", key="id",
                  attributes=["age", "income", "hours"])
    remote = SparkEngine(remote=connect_server, one_task_sort_rows=0)
    try:
        for name, done in (("out_connect", d), ("out_connect_ranked", ranked)):
            duck = api.apply(spec_from_dict(done), engine=engines["duckdb"], metrics=()).as_dict()
            done["source"]["schema"] = engines["database"]
            report = api.apply(spec_from_dict(done), engine=remote, metrics=()).as_dict()
            out = sorted(remote.fetch(exp.select("*").from_(table(name, engines["database"])))[1],
                         key=lambda r: r[0])
            assert same({**report, "outputs": {}}, {**duck, "outputs": {}}), (report, duck)
            assert len(out) == N and same(out, written(engines["duckdb"], name))
        assert remote._session_cores() == 2  # the rule's question, answered through Connect
    finally:
        remote.close()


def test_a_value_the_algorithm_cannot_group_is_refused_as_on_duckdb(engines):
    """A NaN reaches the grouping on the executors, which refuse it with a pull's message and path."""
    bad = people(40).set_column(4, "hours", pa.array([float("nan")] + [1.0] * 39))
    d = spec("out_nan", algorithm="mdav", block_by=["region"], key="id")
    d["source"]["table"] = "people_nan"
    errors = {}
    for name in ("duckdb", "spark"):
        engines[name].create_table_from_arrow("people_nan", bad)
        with pytest.raises(SpecError) as e:
            api.check(spec_from_dict(d), engine=engines[name])
        errors[name] = (e.value.path, str(e.value))
    assert errors["spark"] == errors["duckdb"] == ("attributes.hours", "attributes.hours: column 'hours' "
                                                   "has 1 NaN or infinite value")
