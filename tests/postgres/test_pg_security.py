"""Hostile names and values (quotes, semicolons, comments, unicode) on PostgreSQL: outputs are right
and nothing else is touched (the DuckDB twin is tests/outputs/test_security.py)."""

from __future__ import annotations

import pytest

from sqlanon import api
from sqlanon.spec import spec_from_dict
from tests.outputs.people import (
    WEIRD_KEPT,
    WEIRD_MASKED,
    WEIRD_ROWS,
    WEIRD_TABLE,
    canon,
    load_weird,
    sorted_rows,
    weird_spec,
)

pytestmark = pytest.mark.postgres


def relations(engine) -> list[str]:
    return sorted(r[0] for r in engine.fetch_script(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()")[1])


@pytest.fixture()
def weird(pg):
    load_weird(pg)
    return pg


@pytest.mark.parametrize(("mode", "relation"), [("table", 'out"put; --'), ("view", 'out"put; --'),
                                                ("in_place", WEIRD_TABLE)])
def test_modes_with_hostile_names(weird, mode, relation):
    report = api.apply(spec_from_dict(weird_spec(output={"mode": mode})), engine=weird)
    assert report.outputs["relation"] == relation
    assert sorted_rows(weird, relation) == canon(WEIRD_KEPT)
    assert weird.fetch_script("SELECT * FROM x")[1] == [(42,)]
    expected = {WEIRD_TABLE, "x"} | ({relation} if mode != "in_place" else set())
    assert set(relations(weird)) == expected


def test_mask_mode_with_hostile_labels(weird):
    api.apply(spec_from_dict(weird_spec(transformation={"suppressed": "mask"})), engine=weird)
    assert sorted_rows(weird, 'out"put; --') == canon(WEIRD_KEPT + WEIRD_MASKED)
    assert sorted_rows(weird, WEIRD_TABLE) == canon(WEIRD_ROWS)


def test_printed_sql_runs_and_touches_nothing_else(weird):
    spec = weird_spec(output={"mode": "sql", "dialect": "postgres"})
    report = api.apply(spec_from_dict(spec), engine=weird)
    assert canon(weird.fetch_script(report.outputs["sql"].rstrip().rstrip(";"))[1]) == canon(WEIRD_KEPT)
    assert weird.fetch_script("SELECT * FROM x")[1] == [(42,)]
    assert relations(weird) == sorted([WEIRD_TABLE, "x"])


def test_compiled_in_place_script_runs_as_one_script(weird):
    spec = spec_from_dict(weird_spec(output={"mode": "in_place"}))
    script = api.compile_sql(spec, engine=weird, dialect="postgres")
    assert script.startswith("BEGIN;\n") and script.rstrip().endswith("COMMIT;")
    weird.con.execute(script)  # the whole printed script, as psql would run it
    assert sorted_rows(weird, WEIRD_TABLE) == canon(WEIRD_KEPT)
    assert relations(weird) == sorted([WEIRD_TABLE, "x"])
