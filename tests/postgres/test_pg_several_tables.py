"""Several tables, one release, on PostgreSQL: the same rows as DuckDB, and a kill in the middle of
replacing both tables in place leaves both as they were."""

from __future__ import annotations

import json
import textwrap

import pytest

from sqlanon import api
from sqlanon.engines.postgres import PostgresEngine
from tests.conftest import ADULT, require_data
from tests.outputs.several_tables import build, check_release, rows, spec
from tests.processes import kill_when_marked

pytestmark = pytest.mark.postgres

COLUMNS = {"persons_anon": ["pid", "sex", "age", "race", "marital-status", "education", "ref"],
           "visits_anon": ["pid", "visit", "admitted", "ref_v"]}


@pytest.fixture()
def both(pg):
    duck = build(require_data(ADULT) / "adult.csv")
    for name in ("persons", "visits"):
        pg.create_table_from_arrow(name, duck.con.sql(f"SELECT * FROM {name}").to_arrow_table())
    yield duck, pg
    duck.close()


def released(engine, name: str) -> list[tuple]:
    return sorted(tuple(str(v) for v in r) for r in rows(engine, name, COLUMNS[name]))


@pytest.mark.parametrize("mode", ["table", "view"])
def test_the_same_release_as_duckdb(both, adult_dir, mode):
    duck, pg = both
    on_duck = api.anonymize(spec(adult_dir), engine=duck)
    on_pg = api.anonymize(spec(adult_dir, output={"mode": mode}), engine=pg)
    assert on_pg.node.levels == on_duck.node.levels
    assert on_pg.outputs["relations"] == on_duck.outputs["relations"]
    for name in COLUMNS:
        assert released(pg, name) == released(duck, name)
    check_release(pg, duck, "persons_anon", "visits_anon")


def test_printed_postgres_sql_runs_on_postgres(both, adult_dir):
    duck, pg = both
    api.anonymize(spec(adult_dir), engine=duck)
    printed = api.anonymize(spec(adult_dir, output={"mode": "sql", "dialect": "postgres"}), engine=duck)
    for statement, name in zip(printed.outputs["sql"], COLUMNS):
        on_pg = pg.fetch_script(statement.rstrip().rstrip(";"))
        columns = [on_pg[0].index(c) for c in COLUMNS[name]]
        assert sorted(tuple(str(r[i]) for i in columns) for r in on_pg[1]) == released(duck, name)


CHILD = textwrap.dedent("""
    import json, sys, time
    from pathlib import Path
    from sqlanon import api
    from sqlanon.engines.postgres import PostgresEngine

    dsn, marker, spec = sys.argv[1], Path(sys.argv[2]), json.loads(sys.argv[3])

    class Pausing(PostgresEngine):
        # Stops for good right after the second original table was dropped, inside the transaction.
        def _execute(self, sql):
            super()._execute(sql)
            if sql.startswith('DROP TABLE IF EXISTS "visits"'):
                marker.write_text("dropped")
                time.sleep(600)

    api.anonymize(spec, engine=Pausing(dsn))
""")


def test_in_place_survives_sigkill_with_every_table_intact(both, pg_dsn, adult_dir, tmp_path):
    duck, pg = both
    before = {t: sorted(rows(pg, t, ["pid", "ref" if t == "persons" else "admitted"]))
              for t in ("persons", "visits")}
    marker = tmp_path / "marker"
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    kill_when_marked(script, [pg_dsn, str(marker), json.dumps(spec(adult_dir, output={"mode": "in_place"}))],
                     marker)
    fresh = PostgresEngine(pg_dsn)  # the server rolls the dead session's transaction back
    try:
        assert {t: sorted(rows(fresh, t, ["pid", "ref" if t == "persons" else "admitted"]))
                for t in before} == before
        api.anonymize(spec(adult_dir, output={"mode": "in_place"}), engine=fresh)
        check_release(fresh, duck, "persons", "visits")
        names = fresh.fetch_script("SELECT tablename FROM pg_tables WHERE schemaname = current_schema()")
        assert sorted(r[0] for r in names[1]) == ["persons", "visits"]
    finally:
        fresh.close()
