"""Output modes on DuckDB: table, view (suppression at query time), in_place (atomic), sql."""

from __future__ import annotations

import json
import textwrap
from collections import Counter

import pytest
import sqlglot

from sqlanon import api
from sqlanon.engines.duckdb import DuckDBEngine
from sqlanon.errors import EngineError, SpecError
from sqlanon.spec import spec_from_dict
from tests.outputs.people import KEPT, ROWS, canon, load_people, people_spec, sorted_rows
from tests.processes import kill_when_marked

QIS = ["age", "zip", "sex"]


def apply(engine, **changes):
    return api.apply(spec_from_dict(people_spec(**changes)), engine=engine)


def class_sizes(engine, relation: str) -> Counter:
    return Counter(sorted_rows(engine, relation, QIS))


# -- table ------------------------------------------------------------------------------------------
def test_table_refuses_to_overwrite_unless_asked(people):
    people.execute_script("CREATE TABLE people_anon AS SELECT 'keep me' AS x")
    with pytest.raises(SpecError, match=r"output\.name: 'people_anon' already exists; .*output\.replace:"
                                        r" true"):
        apply(people)
    assert people.fetch_script("SELECT * FROM people_anon")[1] == [("keep me",)]
    apply(people, output={"replace": True})
    assert sorted_rows(people, "people_anon", ["id", *QIS, "disease"]) == canon(KEPT)


def test_table_with_a_given_name(people):
    report = apply(people, output={"name": "released"})
    assert report.outputs["relation"] == "released"
    assert sorted_rows(people, "released", ["id", *QIS, "disease"]) == canon(KEPT)
    assert len(people.fetch_script("SELECT * FROM people")[1]) == 10  # the source is untouched


# -- view -------------------------------------------------------------------------------------------
def test_view_stays_k_anonymous_after_inserts(people):
    apply(people, output={"mode": "view"})
    assert sorted_rows(people, "people_anon", ["id", *QIS, "disease"]) == canon(KEPT)
    # a new person in a class of his own: (<40, 479**, M) has one row, so the view hides him
    people.execute_script("INSERT INTO people VALUES (11, 'Kim', 33, '47905', 'M', 'flu')")
    assert (11,) not in sorted_rows(people, "people_anon", ["id"])
    # a second one makes the class 2-anonymous: both appear
    people.execute_script("INSERT INTO people VALUES (12, 'Lou', 38, '47909', 'M', 'cold')")
    ids = [r[0] for r in sorted_rows(people, "people_anon", ["id"])]
    assert 11 in ids and 12 in ids
    # Fay (45, 47906, M) was an outlier; a second (>=40, 479**, M) row brings her back
    people.execute_script("INSERT INTO people VALUES (13, 'Max', 49, '47911', 'M', 'flu')")
    ids = {r[0] for r in sorted_rows(people, "people_anon", ["id"])}
    assert {6, 13} <= ids and not {8, 9} & ids
    # whatever was inserted, every class in the view has at least k = 2 rows
    assert min(class_sizes(people, "people_anon").values()) >= 2


def test_view_generalizes_values_missing_from_the_hierarchy_to_null(people):
    apply(people, output={"mode": "view"})
    people.execute_script("INSERT INTO people VALUES (11, 'Kim', 33, '12345', 'M', 'flu')")
    assert (11,) not in sorted_rows(people, "people_anon", ["id"])
    people.execute_script("INSERT INTO people VALUES (12, 'Lou', 38, '12399', 'M', 'cold')")
    rows = people.fetch_script("SELECT id, age, zip, sex FROM people_anon WHERE id > 10 ORDER BY id")[1]
    assert rows == [(11, "<40", None, "M"), (12, "<40", None, "M")]


def test_view_checks_l_diversity_at_query_time(people):
    apply(people, output={"mode": "view"},
          privacy=[{"k_anonymity": {"k": 2}}, {"l_diversity": {"attribute": "disease", "l": 2}}])
    people.execute_script("INSERT INTO people VALUES (11, 'Kim', 33, '47905', 'M', 'flu'), "
                   "(12, 'Lou', 38, '47909', 'M', 'flu')")  # 2-anonymous, but only flu
    ids = {r[0] for r in sorted_rows(people, "people_anon", ["id"])}
    assert ids == {1, 2, 3, 4, 5, 7, 10}


def test_view_refuses_to_overwrite_unless_asked(people):
    apply(people, output={"mode": "view"})
    with pytest.raises(SpecError, match="'people_anon' already exists"):
        apply(people, output={"mode": "view"})
    apply(people, output={"mode": "view", "replace": True}, transformation={"suppressed": "mask"})
    assert len(sorted_rows(people, "people_anon")) == 10


# -- in place ---------------------------------------------------------------------------------------
def test_in_place_replaces_the_source(people):
    report = apply(people, output={"mode": "in_place"})
    assert report.outputs["relation"] == "people"
    assert sorted_rows(people, "people") == canon(KEPT)
    tables = people.fetch_script("SELECT table_name FROM information_schema.tables")[1]
    assert tables == [("people",)]


class FailingRename(DuckDBEngine):
    """A real DuckDB whose rename statement fails, as a lost connection or a full disk would."""

    def _execute(self, sql: str) -> None:
        if sql.startswith("ALTER TABLE"):
            raise RuntimeError("disk full")
        super()._execute(sql)


def test_in_place_rolls_back_on_failure():
    with FailingRename() as e:
        load_people(e)
        with pytest.raises(EngineError, match="disk full"):
            apply(e, output={"mode": "in_place"})
        assert sorted_rows(e, "people") == canon(ROWS)
        assert e.fetch_script("SELECT table_name FROM information_schema.tables")[1] == [("people",)]


def test_in_place_refuses_a_file_source(tmp_path):
    data = tmp_path / "people.csv"
    data.write_text("id,age,zip,sex,disease\n" + "".join(
        f"{r[0]},{r[2]},{r[3]},{r[4]},{r[5]}\n" for r in ROWS))
    spec = people_spec(source={"file": str(data), "table": None}, output={"mode": "in_place"})
    del spec["attributes"]["name"]
    with pytest.raises(SpecError, match="output.mode: in_place replaces a database table"):
        api.apply(spec_from_dict(spec))
    assert data.read_text().startswith("id,age,zip,sex,disease\n1,23,47677,F,flu\n")


CHILD = textwrap.dedent("""
    import json, sys, time
    from pathlib import Path
    from sqlanon import api
    from sqlanon.engines.duckdb import DuckDBEngine
    from sqlanon.spec import spec_from_dict

    database, marker, spec = sys.argv[1], Path(sys.argv[2]), json.loads(sys.argv[3])

    class Pausing(DuckDBEngine):
        # Stops for good right after the original table was dropped, inside the transaction.
        def _execute(self, sql):
            super()._execute(sql)
            if sql.startswith('DROP TABLE "people"'):
                marker.write_text("dropped")
                time.sleep(600)

    api.apply(spec_from_dict(spec), engine=Pausing(database))
""")


def test_in_place_survives_sigkill_mid_operation(tmp_path):
    database = tmp_path / "people.duckdb"
    with DuckDBEngine(str(database)) as e:
        load_people(e)
    marker = tmp_path / "marker"
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    kill_when_marked(script, [str(database), str(marker),
                              json.dumps(people_spec(output={"mode": "in_place"}))], marker)
    with DuckDBEngine(str(database)) as e:
        assert sorted_rows(e, "people") == canon(ROWS)
        assert e.fetch_script("SELECT table_name FROM information_schema.tables")[1] == [("people",)]


# -- sql --------------------------------------------------------------------------------------------
def test_sql_to_a_file_runs_anywhere(people, tmp_path):
    path = tmp_path / "anon.sql"
    report = apply(people, output={"mode": "sql", "path": str(path)})
    assert report.outputs == {"mode": "sql", "dialect": "duckdb", "path": str(path),
                              "suppressed": "remove", "dropped_columns": ["name"]}
    assert not people.relation_exists("people_anon")
    text = path.read_text()
    assert text.count(";") == 1 and text.rstrip().endswith(";")
    assert canon(people.fetch_script(text.rstrip().rstrip(";"))[1]) == canon(KEPT)


def test_sql_path_is_relative_to_the_spec_file(people, tmp_path, monkeypatch):
    import yaml

    spec_file = tmp_path / "specs" / "people.yaml"
    spec_file.parent.mkdir()
    spec_file.write_text(yaml.safe_dump(people_spec(output={"mode": "sql", "path": "anon.sql"})))
    monkeypatch.chdir(tmp_path)
    report = api.apply(str(spec_file), engine=people)
    assert report.outputs["path"] == str(spec_file.parent / "anon.sql")
    assert (spec_file.parent / "anon.sql").read_text().startswith("WITH ")
    assert not (tmp_path / "anon.sql").exists()


def test_sql_for_another_dialect_is_returned(people):
    report = apply(people, output={"mode": "sql", "dialect": "snowflake"})
    statements = sqlglot.parse(report.outputs["sql"], read="snowflake")
    assert len([s for s in statements if s is not None]) == 1
    assert isinstance(statements[0], sqlglot.exp.Query)
