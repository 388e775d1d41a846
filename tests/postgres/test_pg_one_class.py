"""Rule ``one_class`` on PostgreSQL: the search and the released rows (a table and a view) are
DuckDB's, computed in the same test on the same visits."""

from __future__ import annotations

import pyarrow as pa
import pytest
from sqlglot import exp

from sqlanon import api
from sqlanon.sql.nodes import table
from tests.methods.generalization.test_privacy_unit_one_class import VISITS, spec

pytestmark = pytest.mark.postgres


def release(engine) -> list[tuple]:
    names = ("pid", "age", "zip", "visit", "dx")
    data = pa.table({name: [r[i] for r in VISITS] for i, name in enumerate(names)})
    engine.create_table_from_arrow("visits", data)
    searched = spec({}, limit=0.5)
    searched["transformation"] = {"search": "optimal", "suppression_limit": 0.5}
    report = api.anonymize(searched, engine=engine).as_dict()
    api.apply(spec({"age": 1, "zip": 2}, mode="view", name="fixed"), engine=engine)
    out = []
    for name in ("out", "fixed"):
        out.append(sorted(tuple(str(v) for v in r) for r in engine.fetch(
            exp.select("pid", "visit", "age", "zip").from_(table(name)))[1]))
    return [report["transformation"]["levels"], report["privacy_unit"], *out]


def test_postgres_releases_what_duckdb_releases(pg, duck):
    got, expected = release(pg), release(duck)
    assert got == expected
    assert expected[1]["suppressed_persons"] >= 1  # person 3's ages fall in two classes below the top
    pg.execute_script("DROP VIEW fixed; DROP TABLE out; DROP TABLE visits")
