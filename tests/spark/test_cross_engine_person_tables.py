"""Several tables and rule ``one_class`` give the same release on Spark as on DuckDB, computed in the
same test from the same generated rows: 300 persons with 1 to 4 visits each, whose admission date
varies from visit to visit; the age of a person with four visits grows by one at the last visit,
and every fiftieth person is alone in its age and zip code."""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

import pytest
from sqlglot import exp

from sqlanon import api
from sqlanon.engines.duckdb import DuckDBEngine
from sqlanon.sql.nodes import col, table
from tests.compare import same

pytestmark = pytest.mark.spark

PERSONS = 300
SALT = "Zq4-rT9x!mW2vLp7"


@pytest.fixture(scope="module")
def engines(spark_session):
    from sqlanon.engines.spark import SparkEngine
    from tests.spark_session import drop_database, fresh_database

    duck = DuckDBEngine()
    duck.con.execute(f"""
        CREATE TABLE persons AS SELECT pid,
            CAST(CASE WHEN pid % 50 = 0 THEN 90 + pid % 9 ELSE 20 + (pid * 7) % 50 END AS INTEGER) AS age,
            CAST(CASE WHEN pid % 50 = 0 THEN 90000 + pid ELSE 10000 + (pid * 13) % 40 END AS VARCHAR)
                AS zip, pid * 7 AS ref
            FROM range(1, {PERSONS + 1}) r(pid);
        CREATE TABLE visits AS SELECT p.pid, CAST(w.visit AS INTEGER) AS visit,
            DATE '2020-01-01' + CAST((p.pid % 24) * 30 + w.visit * 3 AS INTEGER) AS admitted,
            'clinic ' || (p.pid % 4) AS clinic, p.ref AS ref_v,
            CAST(p.age + CAST(w.visit = 3 AS INTEGER) AS INTEGER) AS age, p.zip
            FROM persons p JOIN range(0, 4) w(visit) ON w.visit < 1 + p.pid % 4""")
    database = fresh_database(spark_session)
    engines = {"duckdb": duck, "spark": SparkEngine(session=spark_session)}
    try:
        for name in ("persons", "visits"):
            engines["spark"].create_table_from_arrow(
                name, duck.fetch_arrow(exp.select("*").from_(table(name))))
        yield engines
    finally:
        for engine in engines.values():
            engine.close()
        drop_database(spark_session, database)


def figures(report: Any) -> dict:
    d = report.as_dict()
    if d.get("search"):
        d["search"] = {k: v for k, v in d["search"].items() if k not in ("seconds", "evaluation")}
    return d


def agree(reports: dict) -> dict:
    d = {name: figures(r) for name, r in reports.items()}
    differ = {k: (d["spark"].get(k), d["duckdb"].get(k)) for k in d["duckdb"].keys() | d["spark"].keys()
              if not same(d["spark"].get(k), d["duckdb"].get(k))}
    assert not differ, differ
    return d["duckdb"]


def rows(engine: Any, relation: str, columns: list[str]) -> list[tuple]:
    return [tuple(str(v) for v in r)
            for r in engine.fetch(exp.select(*[col(c) for c in columns]).from_(table(relation)))[1]]


def several_tables_spec() -> dict:
    return {"source": {"table": "persons"}, "privacy_unit": "pid",
            "attributes": {"pid": {"role": "identifier", "action": "pseudonymize", "salt": SALT},
                           "age": {"role": "quasi_identifier",
                                   "hierarchy": {"intervals": {"widths": [5, 10, 20]}}},
                           "zip": {"role": "quasi_identifier", "hierarchy": {"mask": {"levels": 5}}},
                           "ref": "insensitive"},
            "privacy": [{"k_anonymity": {"k": 5}}],
            "tables": {"visits": {"table": "visits", "key": "pid", "rules": {"admitted": "min"},
                                  "attributes": {"admitted": {"role": "quasi_identifier", "hierarchy": {
                                      "date": ["month", "quarter", "year"]}},
                                      "clinic": {"role": "identifier", "action": "drop"},
                                      "visit": "insensitive", "ref_v": "insensitive"}}},
            "transformation": {"search": "optimal", "suppression_limit": 0.05},
            "output": {"mode": "table"}}


def test_several_tables_are_released_alike(engines):
    reports = {e: api.anonymize(several_tables_spec(), engine=engine) for e, engine in engines.items()}
    # Spark has no multi-statement transaction: it writes the tables one after the other
    together = {e: r.outputs.pop("together") for e, r in reports.items()}
    assert together == {"duckdb": True, "spark": False}
    found = agree(reports)
    assert found["anonymous"] and found["privacy_unit"]["persons"] == PERSONS
    suppressed = found["privacy_unit"]["suppressed_persons"]
    assert suppressed > 0, "the data must make the search suppress someone"
    persons = {e: rows(engine, "persons_anon", ["pid", "age", "zip", "ref"]) for e, engine in engines.items()}
    visits = {e: rows(engine, "visits_anon", ["pid", "visit", "admitted", "ref_v"])
              for e, engine in engines.items()}
    assert Counter(persons["spark"]) == Counter(persons["duckdb"])
    assert Counter(visits["spark"]) == Counter(visits["duckdb"])
    assert "clinic" not in engines["spark"].columns("visits_anon")
    # by brute force on Spark's release: keys join, suppressed persons are gone from both tables
    source_visits = Counter(r[0] for r in rows(engines["duckdb"], "visits", ["ref_v"]))
    by_pid = {pid: ref for pid, _, _, ref in persons["spark"]}
    assert len(by_pid) == PERSONS - suppressed == len(persons["spark"])
    mine: dict[str, list[tuple]] = defaultdict(list)
    for pid, _, admitted, ref_v in visits["spark"]:
        assert pid in by_pid, "every visit's key names a released person"
        mine[pid].append((admitted, ref_v))
    classes: dict[tuple, set[str]] = defaultdict(set)
    for pid, age, zip_, ref in persons["spark"]:
        assert {r for _, r in mine[pid]} == {ref}, "a pseudonym names the same person in both tables"
        assert len(mine[pid]) == source_visits[ref], "a released person keeps all its visits"
        admitted = {a for a, _ in mine[pid]}
        assert len(admitted) == 1
        classes[(age, zip_, *admitted)].add(pid)
    assert min(len(c) for c in classes.values()) >= 5
    released_refs = set(by_pid.values())
    assert len(released_refs) == PERSONS - suppressed
    assert {r for *_, r in visits["spark"]} == released_refs


def one_class_spec(transformation: dict, output: dict) -> dict:
    return {"source": {"table": "visits"},
            "privacy_unit": {"column": "pid", "attributes": {"age": "one_class"}},
            "attributes": {"pid": "insensitive", "visit": "insensitive", "ref_v": "insensitive",
                           "age": {"role": "quasi_identifier",
                                   "hierarchy": {"intervals": {"widths": [5, 10, 20]}}},
                           "zip": {"role": "quasi_identifier", "hierarchy": {"mask": {"levels": 5}}}},
            "privacy": [{"k_anonymity": {"k": 5}}],
            "transformation": transformation, "metrics": ["loss"], "output": output}


def test_one_class_is_searched_checked_and_written_alike(engines):
    searched = one_class_spec({"search": "optimal", "suppression_limit": 0.1},
                              {"mode": "table", "name": "one_class_out"})
    found = agree({e: api.anonymize(searched, engine=engine) for e, engine in engines.items()})
    assert found["anonymous"] and found["privacy_unit"]["suppressed_persons"] > 0
    written = {e: Counter(rows(engine, "one_class_out", ["pid", "visit", "age", "zip"]))
               for e, engine in engines.items()}
    assert written["spark"] == written["duckdb"]
    ages: dict[str, set[str]] = defaultdict(set)
    for (pid, _, age, _), _n in written["spark"].items():
        ages[pid].add(age)
    assert all(len(a) == 1 for a in ages.values()), "a released person's rows share one age class"
    assert len(ages) == PERSONS - found["privacy_unit"]["suppressed_persons"]
    # the levels found, without suppression: the persons who fit no class fail on both engines
    levels = found["transformation"]["levels"]
    assert 0 < levels["age"] < 4, "the data must make age one class at a level between"
    checked = agree({e: api.check(one_class_spec({"levels": levels, "suppression_limit": 0.0},
                                                 {"mode": "none"}), engine=engine)
                     for e, engine in engines.items()})
    assert not checked["anonymous"]


def test_several_tables_as_views_release_the_tables_rows(engines):
    """Mode view on both engines at the levels the search chooses: Spark's views (created one after the
    other) read the rows DuckDB's views read (DuckDB's views against its tables: tests/outputs)."""
    levels = figures(api.anonymize(several_tables_spec() | {"output": {"mode": "none"}},
                                   engine=engines["duckdb"]))["transformation"]["levels"]
    d = several_tables_spec()
    d["transformation"] = {"levels": levels, "suppression_limit": 0.05}
    d["output"] = {"mode": "view", "name": "persons_view"}
    d["tables"]["visits"]["name"] = "visits_view"
    reports = {e: api.apply(d, engine=engine) for e, engine in engines.items()}
    assert {e: r.outputs["mode"] for e, r in reports.items()} == {"duckdb": "view", "spark": "view"}
    for view, columns in (("persons_view", ["pid", "age", "zip", "ref"]),
                          ("visits_view", ["pid", "visit", "admitted", "ref_v"])):
        released = {e: Counter(rows(engine, view, columns)) for e, engine in engines.items()}
        assert released["spark"] == released["duckdb"] and released["duckdb"], view
