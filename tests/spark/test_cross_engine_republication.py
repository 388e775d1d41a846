"""Spark: the intersection of two releases (``check --against``'s SQL) gives DuckDB's pairs and
counts on the same releases; m-invariance, which groups every row of a release in one process, is
refused with what to do instead."""

from __future__ import annotations

import pyarrow as pa
import pytest

from sqlanon import api
from sqlanon.errors import UnsupportedError
from sqlanon.methods.republication.intersection import LinkedRelease, flagged_query, pairs_query
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


def test_m_invariance_is_refused_on_spark(spark):
    spark.create_table_from_arrow("people", tables()["current"], temporary=True)
    spec = {"source": {"table": "people"},
            "attributes": {"id": "identifier", "age": "quasi_identifier", "disease": "sensitive"},
            "publishing": {"mode": "m_invariance", "m": 2, "key": "id", "state": "s"}}
    with pytest.raises(UnsupportedError, match="m_invariance groups every row of a release in one "
                                               "process.*run it on DuckDB or PostgreSQL"):
        api.apply(spec, engine=spark)
