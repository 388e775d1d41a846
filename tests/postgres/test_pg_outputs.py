"""Output modes on PostgreSQL: the hand-worked people rows, views after inserts, atomic in-place
replacement (rollback, SIGKILL), and the SQL printed for DuckDB and for PostgreSQL returning the
same rows on each."""

from __future__ import annotations

import hashlib
import json
import textwrap
from collections import Counter

import pytest

from sqlanon import api
from sqlanon.engines.duckdb import DuckDBEngine
from sqlanon.engines.postgres import PostgresEngine
from sqlanon.errors import EngineError, InfeasibleError
from sqlanon.spec import spec_from_dict
from tests.outputs.people import KEPT, MASKED, ROWS, canon, load_people, people_spec, sorted_rows
from tests.processes import kill_when_marked

pytestmark = pytest.mark.postgres

QIS = ["age", "zip", "sex"]
SALT = "pg-salt-4f9c2a7e1b"


@pytest.fixture()
def people(pg):
    load_people(pg)
    return pg


def apply(engine, spec: dict):
    return api.apply(spec_from_dict(spec), engine=engine)


def tables(engine) -> list[str]:
    return sorted(r[0] for r in engine.fetch_script(
        "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()")[1])


@pytest.mark.parametrize("mode", ["table", "view"])
def test_table_and_view(people, mode):
    report = apply(people, people_spec(output={"mode": mode}))
    assert report.outputs["rows"] == 7
    assert sorted_rows(people, "people_anon") == canon(KEPT)


def test_mask_mode(people):
    apply(people, people_spec(transformation={"suppressed": "mask"}))
    assert sorted_rows(people, "people_anon") == canon(KEPT + MASKED)


def test_refusal_names_both_numbers(people):
    with pytest.raises(InfeasibleError, match="3 rows .* at most 2 of 10"):
        apply(people, people_spec(transformation={"suppression_limit": 0.2}))


def test_view_stays_k_anonymous_after_inserts(people):
    apply(people, people_spec(output={"mode": "view"}))
    people.execute_script("INSERT INTO people VALUES (11, 'Kim', 33, '47905', 'M', 'flu')")
    assert (11,) not in sorted_rows(people, "people_anon", ["id"])
    people.execute_script("INSERT INTO people VALUES (12, 'Lou', 38, '47909', 'M', 'cold'), "
                   "(13, 'Max', 49, '47911', 'M', 'flu')")
    ids = {r[0] for r in sorted_rows(people, "people_anon", ["id"])}
    assert ids == {1, 2, 3, 4, 5, 7, 10, 11, 12, 6, 13}
    assert min(Counter(sorted_rows(people, "people_anon", QIS)).values()) >= 2


def test_hash_matches_python(people):
    spec = people_spec()
    spec["attributes"]["name"] = {"role": "identifier", "action": "hash", "salt": SALT}
    apply(people, spec)
    got = dict(people.fetch_script("SELECT id, name FROM people_anon")[1])
    assert got[10] == hashlib.sha256((SALT + "O'Brien; --").encode()).hexdigest()
    assert got[1] == hashlib.sha256((SALT + "Ann").encode()).hexdigest()


def test_in_place(people):
    apply(people, people_spec(output={"mode": "in_place"}))
    assert sorted_rows(people, "people") == canon(KEPT)
    assert tables(people) == ["people"]


def test_in_place_rolls_back_when_the_drop_fails(people):
    # a foreign key into the table makes PostgreSQL refuse the DROP (views are refused before)
    people.execute_script("ALTER TABLE people ADD PRIMARY KEY (id)")
    people.execute_script("CREATE TABLE child (person int REFERENCES people (id))")
    with pytest.raises(EngineError, match="cannot drop table people because other objects depend"):
        apply(people, people_spec(output={"mode": "in_place"}))
    assert sorted_rows(people, "people") == canon(ROWS)
    assert tables(people) == ["child", "people"]


CHILD = textwrap.dedent("""
    import json, sys, time
    from pathlib import Path
    from sqlanon import api
    from sqlanon.engines.postgres import PostgresEngine
    from sqlanon.spec import spec_from_dict

    dsn, marker, spec = sys.argv[1], Path(sys.argv[2]), json.loads(sys.argv[3])

    class Pausing(PostgresEngine):
        # Stops for good right after the original table was dropped, inside the transaction.
        def _execute(self, sql):
            super()._execute(sql)
            if sql.startswith('DROP TABLE "people"'):
                marker.write_text("dropped")
                time.sleep(600)

    api.apply(spec_from_dict(spec), engine=Pausing(dsn))
""")


def test_in_place_survives_sigkill_mid_operation(people, pg_dsn, tmp_path):
    marker = tmp_path / "marker"
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    kill_when_marked(script, [pg_dsn, str(marker),
                              json.dumps(people_spec(output={"mode": "in_place"}))], marker)
    # a new connection: the server rolls the dead session's transaction back (it may take a moment
    # to notice the closed socket; the table lock makes this query wait until then)
    fresh = PostgresEngine(pg_dsn)
    try:
        assert sorted_rows(fresh, "people") == canon(ROWS)
        assert tables(fresh) == ["people"]
    finally:
        fresh.close()


def test_printed_sql_gives_the_same_rows_on_duckdb_and_postgres(people):
    """Pseudonyms, hashes, masked QIs: the DuckDB text run on DuckDB equals the PostgreSQL text run
    on PostgreSQL, and both equal the hand-worked rows."""
    spec = people_spec(transformation={"suppressed": "mask"})
    spec["attributes"]["name"] = {"role": "identifier", "action": "pseudonymize", "salt": SALT}
    with DuckDBEngine() as duck:
        load_people(duck)
        duck_sql = api.compile_sql(spec_from_dict(dict(spec, output={"mode": "sql"})), engine=duck,
                                   dialect="duckdb")
        on_duck = canon(duck.fetch_script(duck_sql.rstrip().rstrip(";"))[1])
    pg_sql = api.compile_sql(spec_from_dict(dict(spec, output={"mode": "sql"})), engine=people,
                             dialect="postgres")
    assert pg_sql != duck_sql
    on_pg = canon(people.fetch_script(pg_sql.rstrip().rstrip(";"))[1])
    assert on_pg == on_duck
    digests = sorted(hashlib.sha256((SALT + r[1]).encode()).hexdigest() for r in ROWS)
    rank = {d: i for i, d in enumerate(digests, start=1)}
    names = {r[0]: rank[hashlib.sha256((SALT + r[1]).encode()).hexdigest()] for r in ROWS}
    assert on_pg == canon((r[0], names[r[0]], *r[1:]) for r in KEPT + MASKED)


def test_equal_numbers_written_differently_stay_one_class(pg):
    """PostgreSQL numeric keeps the scale (1.0 and 1.00 are equal but print differently); classes and
    the join of rows to classes must use equality, not the text form."""
    pg.execute_script("CREATE TABLE m (id int, score numeric, sex varchar)")
    pg.execute_script("INSERT INTO m VALUES (1, 1.0, 'F'), (2, 1.00, 'F'), (3, 2.5, 'M'), (4, 2.50, 'M'), "
               "(5, NULL, 'F'), (6, NULL, 'F')")
    spec = {"source": {"table": "m"},
            "attributes": {"id": "insensitive",
                           "score": {"role": "quasi_identifier",
                                     "hierarchy": {"intervals": {"widths": [10]}}},
                           "sex": {"role": "quasi_identifier", "hierarchy": {"map": {"F": "*", "M": "*"}}}},
            "privacy": [{"k_anonymity": {"k": 2}}],
            "transformation": {"levels": {"score": 0, "sex": 0}}}
    report = apply(pg, spec)
    assert report.node.classes == 3 and report.node.outlier_rows == 0
    assert sorted(r[0] for r in pg.fetch_script("SELECT id FROM m_anon")[1]) == [1, 2, 3, 4, 5, 6]
