"""The documented hash recipe (docs/outputs.md) against PostgreSQL: see tests/outputs/test_hash_text.py.

Defect guarded: a DOUBLE 3.0 hashed ``3`` on PostgreSQL and ``3.0`` on DuckDB.
"""

from __future__ import annotations

import pytest

from tests.outputs.test_hash_text import check_engine

pytestmark = pytest.mark.postgres


def test_documented_recipe_reproduces_postgres_hashes(pg):
    """Whatever the session's time zone."""
    pg.execute_script("SET TIME ZONE 'Asia/Kolkata'")
    pg.execute_script("SET DateStyle = 'ISO, DMY'")
    check_engine(pg)


def test_a_release_hashes_doubles_and_booleans_alike_on_duckdb_and_postgres(pg, duck):
    """End to end: the same spec applied on both engines writes the same hashes, which the
    documented recipe gives (DOUBLE 3.0 hashed '3.0' on DuckDB and '3' on PostgreSQL; BOOLEAN
    hashed 'true' where the recipe said 'True')."""
    from sqlanon import api
    from sqlanon.spec import spec_from_dict
    from tests.outputs.people import COLUMNS, ROWS, load_people, people_spec, sorted_rows
    from tests.outputs.test_hash_text import documented_recipe

    columns = [*COLUMNS, ("score", "double"), ("flag", "boolean")]
    rows = [(*r, float(r[0] % 4), r[0] % 2 == 0) for r in ROWS]
    spec = people_spec(output={"mode": "table", "name": "released"})
    for c in ("score", "flag"):
        spec["attributes"][c] = {"role": "identifier", "action": "hash", "salt": "a-long-salt-value"}
    outputs = []
    for engine in (duck, pg):
        load_people(engine, rows=rows, columns=columns)
        api.apply(spec_from_dict(spec), engine=engine)
        outputs.append(sorted_rows(engine, "released", ["id", "score", "flag"]))
    assert outputs[0] == outputs[1]
    recipe = documented_recipe()["salted_hash"]
    by_id = {r[0]: r for r in rows}
    for i, score, flag in outputs[0]:
        assert (score, flag) == (recipe("a-long-salt-value", by_id[i][6]),
                                 recipe("a-long-salt-value", by_id[i][7]))
