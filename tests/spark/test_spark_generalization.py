"""Generalization on Spark gives DuckDB's results on Adult: the same report figures, the same rows
written (as a table and as a view), and the same node chosen by the search, for k-anonymity and
l-diversity with and without suppression."""

from __future__ import annotations

from collections import Counter

import pytest
from sqlglot import exp

from sqlanon import api
from sqlanon.engines.duckdb import DuckDBEngine
from sqlanon.spec import spec_from_dict
from sqlanon.sql.nodes import table
from tests.compare import same
from tests.conftest import ADULT, adult_spec_dict, require_data

pytestmark = pytest.mark.spark

QIS = ["sex", "age", "race", "marital-status", "education", "native-country"]
NODE = {"age": 1, "education": 1, "marital-status": 1, "native-country": 1, "race": 1}
K5 = [{"k_anonymity": {"k": 5}}]
K3_L2 = [{"k_anonymity": {"k": 3}}, {"l_diversity": {"attribute": "occupation", "l": 2}}]


@pytest.fixture(scope="module")
def engines(spark_session):
    """Adult (every column as text) in DuckDB and in a Spark database of its own."""
    from sqlanon.engines.spark import SparkEngine
    from tests.spark_session import drop_database, fresh_database

    require_data(ADULT)
    database = fresh_database(spark_session)
    spark = SparkEngine(session=spark_session)
    duck = DuckDBEngine()
    try:
        spark.register_file("adult_csv", str(ADULT / "adult.csv"), kind="csv",
                            options={"header": True, "delim": ";", "all_varchar": True})
        spark.create_table_as("adult", exp.select("*").from_(table("adult_csv")))
        duck.con.execute("CREATE TABLE adult AS SELECT * FROM read_csv(?, delim=';', header=true, "
                         "all_varchar=true)", [str(ADULT / "adult.csv")])
        yield {"duckdb": duck, "spark": spark}
    finally:
        duck.close()
        spark.close()
        drop_database(spark_session, database)


def spec(privacy, limit: float, *, levels=None, output=None, search: bool = False) -> dict:
    """Adult's spec with one metric (most metrics are a query per attribute, each a Spark job)."""
    d = adult_spec_dict(ADULT, qis=QIS, sensitive=["occupation"], privacy=privacy, levels=levels,
                        limit=limit)
    d["metrics"] = ["loss"]
    if search:
        d["transformation"] = {"search": "optimal", "metric": "loss", "suppression_limit": limit}
    d["output"] = output or {"mode": "none"}
    return d


def figures(report) -> dict:
    """The report without what differs by engine on purpose (timings)."""
    d = report.as_dict()
    search = d.get("search")
    if search:
        d["search"] = {k: v for k, v in search.items() if k not in ("seconds", "evaluation")}
    return d


def rows(engine, relation: str) -> Counter:
    return Counter(engine.fetch(exp.select("*").from_(table(relation)))[1])


def run_both(engines, verb, d: dict) -> dict:
    return {name: figures(verb(spec_from_dict(d), engine=e)) for name, e in engines.items()}


def test_check_gives_the_same_figures(engines):
    d = spec(K5, 0.02, levels=NODE)
    d["metrics"] = ["loss", "discernibility", "aecs", "entropy"]
    reports = run_both(engines, api.check, d)
    assert same(reports["spark"], reports["duckdb"]), reports
    assert reports["spark"]["outlier_rows"] > 0 and "loss" in reports["spark"]["metrics"]


@pytest.mark.parametrize("mode", ["table", "view"])
def test_apply_writes_the_same_rows(engines, mode):
    output = {"mode": mode, "name": f"adult_{mode}", "replace": False}
    reports = run_both(engines, api.apply, spec(K3_L2, 0.02, levels=NODE, output=output))
    assert same(reports["spark"], reports["duckdb"]), reports
    written = {name: rows(e, f"adult_{mode}") for name, e in engines.items()}
    assert sum(written["spark"].values()) == reports["spark"]["outputs"]["rows"] > 0
    assert written["spark"] == written["duckdb"]
    kinds = engines["spark"].fetch_script(f"DESCRIBE TABLE EXTENDED adult_{mode}")[1]
    assert ("Type", "VIEW" if mode == "view" else "MANAGED", "") in kinds


@pytest.mark.parametrize("privacy, limit", [(K5, 0.0), (K5, 0.02), (K3_L2, 0.02)],
                         ids=["k5-0", "k5-2", "k3-l2-2"])
def test_the_search_chooses_the_same_node(engines, privacy, limit):
    output = {"mode": "table", "name": f"adult_searched_{len(privacy)}_{int(limit * 100)}"}
    reports = run_both(engines, api.anonymize, spec(privacy, limit, output=output, search=True))
    assert same(reports["spark"], reports["duckdb"]), reports
    assert reports["spark"]["anonymous"]
    assert rows(engines["spark"], output["name"]) == rows(engines["duckdb"], output["name"])


def test_a_replaced_table_holds_the_same_rows(engines):
    """output.replace: the table replaced on Spark holds DuckDB's rows, and no table of the swap is
    left behind (in_place, the same swap: tests/spark/test_spark_swap_kill.py)."""
    d = spec(K3_L2, 0.02, levels=NODE, output={"mode": "table", "name": "adult_kept", "replace": True})
    for engine in engines.values():
        engine.create_table_as("adult_kept", exp.select("*").from_(table("adult")), replace=True)
    reports = run_both(engines, api.apply, d)
    assert same(reports["spark"], reports["duckdb"]), reports
    written = {name: rows(e, "adult_kept") for name, e in engines.items()}
    assert written["spark"] == written["duckdb"]
    assert sum(written["spark"].values()) == reports["spark"]["outputs"]["rows"] > 0
    assert engines["spark"].tables_named("__sa_") == []
    assert engines["spark"].marks("adult_kept") == {}


def test_a_parquet_source_is_read_by_spark(engines, tmp_path):
    path = tmp_path / "people.parquet"
    engines["duckdb"].con.execute(f"COPY (SELECT * FROM adult) TO '{path}' (FORMAT parquet)")
    d = spec(K3_L2, 0.02, levels={"age": 2, "race": 1})
    d["source"] = {"file": str(path), "format": "parquet"}
    d["attributes"] = {q: d["attributes"][q] for q in ("sex", "age", "race", "occupation")}
    reports = run_both(engines, api.check, d)
    assert same(reports["spark"], reports["duckdb"]), reports
    assert reports["spark"]["rows"] == engines["spark"].row_count("adult")
