"""A privacy unit gives the same answers on DuckDB, PostgreSQL and Spark: persons from Adult with
generated visits whose age varies (rule ``first`` by visit), searched for person-level k-anonymity,
checked with person-level l-diversity, and microaggregated by person."""

from __future__ import annotations

from collections import Counter

import pytest
from sqlglot import exp

from sqlanon import api
from sqlanon.engines.duckdb import DuckDBEngine
from sqlanon.sql.nodes import table
from tests.compare import same
from tests.conftest import ADULT, require_data

pytestmark = [pytest.mark.spark, pytest.mark.postgres]

QIS = ["sex", "age", "race", "marital-status", "education"]
OCCUPATION = "occupation"


@pytest.fixture(scope="module")
def engines(spark_session, pg_server):
    from sqlanon.engines.postgres import PostgresEngine
    from sqlanon.engines.spark import SparkEngine
    from tests.spark_session import drop_database, fresh_database

    require_data(ADULT)
    duck = DuckDBEngine()
    columns = ", ".join(f'"{c}"' for c in ["sex", "race", "marital-status", "education", OCCUPATION])
    duck.con.execute(f"""
        CREATE TABLE persons AS SELECT row_number() OVER () AS pid, * FROM (
            SELECT * FROM read_csv(?, delim=';', header=true, all_varchar=true) LIMIT 1200);
        CREATE TABLE visits AS SELECT p.pid, v.visit, {columns},
            CAST(CAST(p.age AS INTEGER) + v.visit AS VARCHAR) AS age,
            CAST(CAST(p.age AS INTEGER) * 10 + v.visit AS INTEGER) AS score
            FROM persons p JOIN range(0, 3) v(visit) ON v.visit <= p.pid % 3""".replace(
        "?", f"'{ADULT / 'adult.csv'}'"))
    data = duck.con.execute("SELECT * FROM visits").to_arrow_table()
    database = fresh_database(spark_session)
    engines = {"duckdb": duck,
               "postgres": PostgresEngine(pg_server.create_schema("cross_privacy_unit")),
               "spark": SparkEngine(session=spark_session)}
    try:
        for name in ("postgres", "spark"):
            engines[name].create_table_from_arrow("visits", data)
        yield engines
    finally:
        for engine in engines.values():
            engine.close()
        drop_database(spark_session, database)


def spec(privacy, transformation, output=None) -> dict:
    attributes = {q: {"role": "quasi_identifier",
                      "hierarchy": {"csv": str(ADULT / f"adult_hierarchy_{q}.csv")}} for q in QIS}
    attributes[OCCUPATION] = {"role": "sensitive"}
    attributes.update({c: {"role": "insensitive"} for c in ("pid", "visit", "score")})
    return {"source": {"table": "visits"}, "attributes": attributes, "privacy": privacy,
            "privacy_unit": {"column": "pid", "attributes": {"age": "first"}, "order_by": "visit"},
            "transformation": transformation, "metrics": ["loss"], "output": output or {"mode": "none"}}


def figures(report) -> dict:
    d = report.as_dict()
    if d.get("search"):
        d["search"] = {k: v for k, v in d["search"].items() if k not in ("seconds", "evaluation")}
    return d


def rows(engine, relation: str) -> Counter:
    return Counter(tuple(str(v) for v in r) for r in engine.fetch(exp.select("*").from_(table(relation)))[1])


def agree(reports: dict) -> dict:
    d = {name: figures(r) for name, r in reports.items()}
    for name in ("postgres", "spark"):
        assert same(d[name], d["duckdb"]), (name, d[name], d["duckdb"])
    return d["duckdb"]


def test_persons_are_checked_searched_and_written_alike(engines):
    searched = spec([{"k_anonymity": {"k": 5}}], {"search": "optimal", "suppression_limit": 0.02},
                    {"mode": "table", "name": "by_person"})
    found = agree({e: api.anonymize(searched, engine=engine) for e, engine in engines.items()})
    assert found["anonymous"] and found["rows"] == 1200 and found["privacy_unit"]["persons"] == 1200
    written = {e: rows(engine, "by_person") for e, engine in engines.items()}
    assert written["postgres"] == written["spark"] == written["duckdb"]
    levels = found["transformation"]["levels"]
    diverse = spec([{"k_anonymity": {"k": 5}}, {"l_diversity": {"attribute": OCCUPATION, "l": 3}}],
                   {"levels": {**levels, "age": max(levels["age"], 2)}, "suppression_limit": 0.1})
    checked = agree({e: api.check(diverse, engine=engine) for e, engine in engines.items()})
    assert checked["rows"] == 1200 and checked["privacy"]["l_diversity[occupation]"]["violating_rows"] > 0
    micro = spec([], {"method": "microaggregation", "algorithm": "individual_ranking", "k": 3,
                      "attributes": ["score"]}, {"mode": "table", "name": "micro"})
    micro["attributes"]["score"] = {"role": "quasi_identifier"}
    micro["privacy_unit"] = {"column": "pid", "attributes": {"score": "min"}}
    for q in QIS:
        micro["attributes"][q] = {"role": "insensitive"}
    for engine in engines.values():
        api.apply(micro, engine=engine)
    written = {e: rows(engine, "micro") for e, engine in engines.items()}
    assert written["postgres"] == written["spark"] == written["duckdb"]
