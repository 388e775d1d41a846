"""Every privacy model gives the same answers on DuckDB, PostgreSQL and Spark, on Adult and creditcard.

The three engines hold the same tables (Adult with its research subset, creditcard), loaded from one
Arrow copy. The models come in four groups, each checked at suppression limits 0 % and 2 %:

* the groups whose models the in-memory search evaluates (k-anonymity, distinct, entropy and recursive
  l-diversity, p-sensitive and (α, k)-anonymity, the average risk, t-closeness with the equal and the
  hierarchical distance) run the optimal search (Loss): the chosen node, every model's figures, the
  metrics and the rows written are the same on the three engines;
* the other groups (δ-disclosure, basic and enhanced β-likeness, δ-presence; t-closeness with the
  ordered distance, (k, e)- and (k, p, q, r)-anonymity on a numeric attribute) are checked at a fixed
  node: the same figures for every model on the three engines;
* one node is written in every output mode (table by the searches; view, in_place, sql) and compiled
  for each engine's dialect: the same rows everywhere.
"""

from __future__ import annotations

import itertools
from collections import Counter
from typing import Any

import pyarrow as pa
import pytest
from sqlglot import exp

from sqlanon import api
from sqlanon.engines.duckdb import DuckDBEngine
from sqlanon.outputs.scripts import split_statements
from sqlanon.spec import spec_from_dict
from sqlanon.sql.nodes import table
from tests.compare import same
from tests.conftest import ADULT, DATA, require_data

pytestmark = [pytest.mark.spark, pytest.mark.postgres]

CREDITCARD = DATA / "creditcard"
ADULT_QIS = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass",
             "salary-class"]
CC_QIS = ["LIMIT_BAL", "SEX", "EDUCATION", "MARRIAGE", "AGE", "PAY_0", "PAY_2", "PAY_3"]
OCCUPATION = "occupation"
SENSITIVE_NUMBER = "PAY_5"
"""A repayment status (10 ordered codes): the ordered distance costs classes × distinct values."""

SEARCHED: dict[str, list[dict[str, Any]]] = {
    "k-l-alpha-p-risk": [
        {"k_anonymity": {"k": 5}},
        {"l_diversity": {"attribute": OCCUPATION, "l": 2}},
        {"alpha_k_anonymity": {"attribute": OCCUPATION, "alpha": 0.8, "k": 2}},
        {"p_sensitive_k_anonymity": {"attribute": OCCUPATION, "k": 2, "p": 2}},
        {"average_risk": {"threshold": 0.05}}],
    "entropy-recursive-t": [
        {"l_diversity": {"attribute": OCCUPATION, "l": 2.5, "variant": "entropy"}},
        {"l_diversity": {"attribute": OCCUPATION, "l": 3, "variant": "recursive", "c": 4}},
        {"t_closeness": {"attribute": OCCUPATION, "t": 0.3}},
        {"t_closeness": {"attribute": OCCUPATION, "t": 0.3, "distance": "hierarchical"}}],
}
CHECKED: dict[str, tuple[str, list[dict[str, Any]], dict[str, int]]] = {
    "disclosure-likeness-presence": ("adult", [
        {"k_anonymity": {"k": 2}},
        {"delta_disclosure": {"attribute": OCCUPATION, "delta": 3}},
        {"beta_likeness": {"attribute": OCCUPATION, "beta": 3}},
        {"beta_likeness": {"attribute": OCCUPATION, "beta": 3, "variant": "enhanced"}},
        {"delta_presence": {"subset": "research", "delta_min": 0.0, "delta_max": 0.8}}],
        {"sex": 1, "age": 3, "race": 1, "marital-status": 1, "education": 2, "native-country": 2,
         "workclass": 1, "salary-class": 0}),
    "numeric-sensitive": ("cc", [
        {"k_anonymity": {"k": 5}},
        {"t_closeness": {"attribute": SENSITIVE_NUMBER, "t": 0.3, "distance": "ordered"}},
        {"k_e_anonymity": {"attribute": SENSITIVE_NUMBER, "k": 3, "e": 2}},
        {"kpqr_anonymity": {"attribute": SENSITIVE_NUMBER, "k": 2, "p": 2, "q": 0.01, "r": 0.01}}],
        {"LIMIT_BAL": 2, "SEX": 0, "EDUCATION": 1, "MARRIAGE": 1, "AGE": 3, "PAY_0": 1, "PAY_2": 1,
         "PAY_3": 1}),
}
LIMITS = [0.0, 0.02]
METRICS = ["loss", "discernibility"]
_names = itertools.count(1)


def read(path, *, numeric: tuple[str, ...] = ()) -> pa.Table:
    """A ``;``-separated file as text columns (as ARX reads them), ``numeric`` columns as integers."""
    import duckdb

    con = duckdb.connect()
    try:
        rel = con.read_csv(str(path), sep=";", header=True, all_varchar=True)
        columns = ", ".join(f'CAST("{c}" AS BIGINT) AS "{c}"' if c in numeric else f'"{c}"'
                            for c in rel.columns)
        return con.sql(f"SELECT {columns} FROM rel").to_arrow_table()
    finally:
        con.close()


@pytest.fixture(scope="module")
def engines(spark_session, pg_server):
    """DuckDB, PostgreSQL (a schema of its own) and Spark (a database of its own) holding ``adult``,
    ``research`` (Adult's research subset) and ``cc`` (creditcard)."""
    from sqlanon.engines.postgres import PostgresEngine
    from sqlanon.engines.spark import SparkEngine
    from tests.spark_session import drop_database, fresh_database

    require_data(ADULT)
    require_data(CREDITCARD)
    tables = {"adult": read(ADULT / "adult.csv"), "research": read(ADULT / "adult_subset.csv"),
              "cc": read(CREDITCARD / "creditcard_int.csv", numeric=(SENSITIVE_NUMBER,))}
    database = fresh_database(spark_session)
    engines = {"duckdb": DuckDBEngine(),
               "postgres": PostgresEngine(pg_server.create_schema(f"cross_{next(_names)}")),
               "spark": SparkEngine(session=spark_session)}
    try:
        for engine in engines.values():
            for name, data in tables.items():
                engine.create_table_from_arrow(name, data)
        yield engines
    finally:
        for engine in engines.values():
            engine.close()
        drop_database(spark_session, database)


def spec(source: str, privacy: list[dict[str, Any]], limit: float, *, levels: dict[str, int] | None = None,
         output: dict[str, Any] | None = None) -> dict[str, Any]:
    if source == "adult":
        attributes = {q: {"role": "quasi_identifier",
                          "hierarchy": {"csv": str(ADULT / f"adult_hierarchy_{q}.csv")}} for q in ADULT_QIS}
        attributes[OCCUPATION] = {"role": "sensitive", "hierarchy": {
            "csv": str(ADULT / f"adult_hierarchy_{OCCUPATION}.csv")}}
    else:
        attributes = {q: {"role": "quasi_identifier", "hierarchy": {
            "csv": str(CREDITCARD / f"creditcard_int_hierarchy_{q}.csv")}} for q in CC_QIS}
        attributes[SENSITIVE_NUMBER] = {"role": "sensitive"}
    transformation: dict[str, Any] = {"suppression_limit": limit}
    if levels is None:
        transformation.update(search="optimal", metric="loss")
    else:
        transformation["levels"] = levels
    return {"source": {"table": source}, "attributes": attributes, "privacy": privacy,
            "transformation": transformation, "metrics": METRICS, "output": output or {"mode": "none"}}


def figures(report: Any) -> dict[str, Any]:
    """The report without what differs by engine on purpose (timings, the SQL text's dialect)."""
    d = report.as_dict()
    if d.get("search"):
        d["search"] = {k: v for k, v in d["search"].items() if k not in ("seconds", "evaluation")}
    for step in (d.get("local_recoding") or {}).get("steps", []):
        step.pop("seconds", None)
    if "sql" in d.get("outputs", {}):
        d["outputs"] = {k: v for k, v in d["outputs"].items() if k not in ("sql", "dialect")}
    return d


def rows(engine: Any, relation: str) -> Counter:
    return Counter(engine.fetch(exp.select("*").from_(table(relation)))[1])


def agree(reports: dict[str, Any]) -> dict[str, Any]:
    """The DuckDB figures, after asserting that PostgreSQL's and Spark's are the same."""
    d = {name: figures(r) for name, r in reports.items()}
    for name in ("postgres", "spark"):
        assert same(d[name], d["duckdb"]), (name, d[name], d["duckdb"])
    return d["duckdb"]


@pytest.mark.parametrize("limit", LIMITS, ids=["0%", "2%"])
@pytest.mark.parametrize("group", list(SEARCHED))
def test_the_search_chooses_the_same_node_and_writes_the_same_rows(engines, group, limit):
    name = f"searched_{group.replace('-', '_')}_{int(limit * 100)}"
    d = spec("adult", SEARCHED[group], limit, output={"mode": "table", "name": name})
    reports = {e: api.anonymize(spec_from_dict(d), engine=engine) for e, engine in engines.items()}
    figures_ = agree(reports)
    assert figures_["anonymous"] and all(m["holds"] for m in figures_["privacy"].values())
    assert len(figures_["privacy"]) == len(SEARCHED[group])
    levels = figures_["transformation"]["levels"]
    assert 0 < sum(levels.values())  # a node above the bottom: the models had work to do
    written = {e: rows(engine, name) for e, engine in engines.items()}
    assert written["postgres"] == written["spark"] == written["duckdb"]
    assert sum(written["duckdb"].values()) == figures_["outputs"]["rows"] > 0


@pytest.mark.parametrize("limit", LIMITS, ids=["0%", "2%"])
@pytest.mark.parametrize("group", list(CHECKED))
def test_every_model_gives_the_same_figures_at_a_node(engines, group, limit):
    source, privacy, levels = CHECKED[group]
    d = spec(source, privacy, limit, levels=levels)
    figures_ = agree({e: api.check(spec_from_dict(d), engine=engine) for e, engine in engines.items()})
    assert len(figures_["privacy"]) == len(privacy)
    assert set(figures_["metrics"]) == set(METRICS)


NODE = {"sex": 0, "age": 3, "race": 0, "marital-status": 2, "education": 2, "native-country": 1,
        "workclass": 1, "salary-class": 0}
WRITTEN = SEARCHED["k-l-alpha-p-risk"]


@pytest.mark.parametrize("mode", ["view", "in_place", "sql"])
def test_every_output_mode_writes_the_same_rows(engines, mode):
    """(Mode ``table`` is the searches' output above.)"""
    name = f"written_{mode}"
    if mode == "in_place":
        for engine in engines.values():
            engine.create_table_as(name, exp.select("*").from_(table("adult")), replace=True)
    written = {}
    reports = {}
    for e, engine in engines.items():
        d = spec("adult", WRITTEN, 0.02, levels=NODE, output={"mode": mode, "name": name})
        if mode == "in_place":
            d["source"]["table"] = name
            d["output"] = {"mode": "in_place"}
        if mode == "sql":
            d["output"] = {"mode": "sql", "dialect": engine.dialect_name}
        reports[e] = api.apply(spec_from_dict(d), engine=engine, metrics=())
        if mode == "sql":
            sql = reports[e].outputs["sql"].strip().rstrip(";")
            written[e] = Counter(engine.fetch_script(sql)[1])
        else:
            written[e] = rows(engine, name)
    figures_ = agree(reports)
    assert written["postgres"] == written["spark"] == written["duckdb"]
    assert 0 < sum(written["duckdb"].values()) == figures_["rows"] - figures_["suppressed_rows"]


def test_compiled_scripts_write_the_same_rows(engines):
    """``compile`` for each engine's own dialect: the script, run there, writes the same table."""
    written = {}
    for e, engine in engines.items():
        d = spec("adult", WRITTEN, 0.02, levels=NODE, output={"mode": "table", "name": "compiled"})
        script = api.compile_sql(spec_from_dict(d), engine=engine, dialect=engine.dialect_name)
        for statement in split_statements(script, engine.dialect):
            engine.execute_script(statement)
        written[e] = rows(engine, "compiled")
    assert written["postgres"] == written["spark"] == written["duckdb"]
    assert sum(written["duckdb"].values()) > 0


def _local_spec(name: str, mode: str) -> dict[str, Any]:
    d = spec("adult", SEARCHED["k-l-alpha-p-risk"][:2], 0.02, output={"mode": mode, "name": name})
    d["transformation"] |= {"recoding": "local", "local_recoding": {"variant": "fast", "records": 0.002}}
    return d


def test_local_recoding_releases_the_same_rows(engines):
    """ARX's local recoding (fast variant) from the 2 % optimum: the same steps, figures and rows."""
    reports = {e: api.anonymize(spec_from_dict(_local_spec("local_table", "table")), engine=engine)
               for e, engine in engines.items()}
    written = {e: rows(engine, "local_table") for e, engine in engines.items()}
    figures_ = agree(reports)
    local = figures_["local_recoding"]
    assert len(local["steps"]) > 1 and local["output"]["suppressed_rows"] < figures_["suppressed_rows"]
    assert written["postgres"] == written["spark"] == written["duckdb"]
    assert sum(written["duckdb"].values()) == local["output"]["rows"] - local["output"]["suppressed_rows"]


def test_a_local_recoding_view_reads_its_kept_steps_table(engines):
    """A view and its steps table are created in one transaction: PostgreSQL's view gives DuckDB's rows;
    Spark, without transactional DDL, refuses the view before anything is read."""
    from sqlanon.errors import SpecError

    written = {}
    for e in ("duckdb", "postgres"):
        api.anonymize(spec_from_dict(_local_spec("local_view", "view")), engine=engines[e])
        written[e] = rows(engines[e], "local_view")
    assert written["postgres"] == written["duckdb"] and sum(written["duckdb"].values()) > 30000
    with pytest.raises(SpecError, match="view output of a local recoding reads a group table"):
        api.anonymize(spec_from_dict(_local_spec("local_view", "view")), engine=engines["spark"])
