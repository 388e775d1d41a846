"""Spark: the intersection of two releases (``check --against``'s SQL) gives DuckDB's pairs and
counts on the same releases; m-invariance keeps its state in Spark tables and publishes DuckDB's
releases."""

from __future__ import annotations

import random

import numpy as np
import pyarrow as pa
import pytest
from sqlglot import exp

from sqlanon import api
from sqlanon.methods.republication.algorithm import m_invariant
from sqlanon.methods.republication.intersection import LinkedRelease, flagged_query, pairs_query
from sqlanon.methods.republication.state import State
from sqlanon.sql.nodes import table
from tests.methods.republication.test_check_against import PEOPLE, PREVIOUS

pytestmark = pytest.mark.spark


def tables() -> dict[str, pa.Table]:
    ids = [p[0] for p in PEOPLE]
    diseases = [p[2] for p in PEOPLE]
    return {"current": pa.table({"id": ids, "age": [str(p[1] // 10) for p in PEOPLE], "disease": diseases}),
            "previous": pa.table({"id": ids, "age": [PREVIOUS[i] for i in ids], "disease": diseases})}


def test_spark_intersects_two_releases_as_duckdb_does(spark, duck):
    results = []
    for engine in (spark, duck):
        for name, data in tables().items():
            engine.create_table_from_arrow(name, data, temporary=True)
        previous, current = (LinkedRelease(table(n), "id", ("age",), "disease")
                             for n in ("previous", "current"))
        flagged = flagged_query(pairs_query(previous, current), 3, 2)
        results.append([tuple(r) for r in engine.fetch(flagged)[1]])
    assert results[0] == results[1]
    # previous class, current class, persons, fewest candidate values, persons pinned down
    assert results[0] == [("age=A", "age=3", 2, 1, 2), ("age=B", "age=3", 2, 1, 2),
                          ("age=A", "age=2", 2, 2, 0), ("age=B", "age=2", 2, 2, 0)]


def _two_releases(engine, pool: pa.Table) -> tuple[list[list[tuple]], dict[str, list[tuple]]]:
    """Two m-invariant releases of ``pool``'s first 120 persons; between them 20 deleted and 20 of the
    others inserted (the same on either engine). Returns the releases and the state."""
    def rows(name: str) -> list[tuple]:
        return sorted(tuple(str(v) for v in r) for r in engine.fetch(exp.select("*").from_(table(name)))[1])

    ids = pool.column("id").to_pylist()
    engine.create_table_from_arrow("people", pool.filter(pa.array([i <= 120 for i in ids])))
    spec = {"source": {"table": "people"},
            "attributes": {"id": "identifier", "age": "quasi_identifier", "sex": "quasi_identifier",
                           "occupation": "sensitive"},
            "publishing": {"mode": "m_invariance", "m": 2, "key": "id", "state": "s"},
            "output": {"mode": "table", "name": "r1"}}
    api.apply(spec, engine=engine)
    gone = set(random.Random(5).sample(range(1, 121), 20))
    kept = pa.array([(i <= 120 and i not in gone) or 120 < i <= 140 for i in ids])
    engine.create_table_from_arrow("people_next", pool.filter(kept))
    engine.drop("people")
    engine.rename_table("people_next", "people")
    second = {**spec, "output": {"mode": "table", "name": "r2"}}
    report = api.apply(second, engine=engine)
    assert report.invariant and report.m_unique and report.persons_kept == 100
    state = {part: rows("s" + part) for part in ("__signatures", "__releases", "__counterfeits")}
    # a release recorded, then undone (its output could not be written), leaves the state as it was
    recorded = State("s")
    earlier = recorded.signatures(engine)
    keys, values = ["1001", "1002"], ["Sales", "Adm-clerical"]
    recorded.append(engine, 3, keys, values, m_invariant(keys, values, np.zeros((2, 1)), 2, earlier), earlier)
    recorded.remove(engine, 3)
    assert {part: rows("s" + part) for part in state} == state
    return [rows("r1"), rows("r2")], state


def test_spark_publishes_the_m_invariant_releases_duckdb_publishes(spark, duck, adult_dir):
    """The state lives in Spark tables; the releases and the state equal DuckDB's (the intersection
    check's SQL is compared above)."""
    import duckdb

    con = duckdb.connect()
    adult = con.read_csv(str(adult_dir / "adult.csv"), sep=";", header=True, all_varchar=True)  # noqa: F841
    pool = con.sql("SELECT CAST(row_number() OVER () AS INTEGER) AS id, CAST(age AS INTEGER) AS age, sex, "
                   "occupation FROM adult LIMIT 140").to_arrow_table()
    spark_releases, spark_state = _two_releases(spark, pool)
    duck_releases, duck_state = _two_releases(duck, pool)
    assert spark_releases == duck_releases
    assert spark_state == duck_state
    assert len({r[0] for r in spark_releases[1]}) >= 40  # groups of at least 2 rows
