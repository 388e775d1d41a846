"""Several tables, one release: a person table and a visits table from Adult (DuckDB)."""

from __future__ import annotations

import json
import textwrap

import pytest

from sqlanon import api
from sqlanon.engines.duckdb import DuckDBEngine
from sqlanon.errors import InfeasibleError, SpecError, UnsupportedError
from sqlanon.spec import spec_from_dict
from tests.outputs.several_tables import PERSONS, build, check_release, rows, spec
from tests.processes import kill_when_marked


@pytest.fixture()
def two(adult_dir):
    duck = build(adult_dir / "adult.csv")
    yield duck
    duck.close()


def test_release_is_person_level_k_anonymous_across_both_tables(two, adult_dir):
    report = api.anonymize(spec(adult_dir), engine=two)
    counts = check_release(two, two, "persons_anon", "visits_anon")
    assert report.privacy_unit["persons"] == PERSONS
    assert counts["suppressed"] == report.privacy_unit["suppressed_persons"] > 0
    assert [r["relation"] for r in report.outputs["relations"]] == ["persons_anon", "visits_anon"]
    assert report.outputs["relations"][1]["dropped_columns"] == ["clinic"]
    assert report.outputs["together"] is True
    # the admission date was generalized with the person, not released as it was
    assert all(len(str(a)) < 10 for (a,) in rows(two, "visits_anon", ["admitted"]))
    assert not [r for r in two.fetch_script("SELECT table_name FROM information_schema.tables")[1]
                if r[0].startswith("__sa_")]


def test_the_admission_date_is_a_quasi_identifier_of_the_person(two, adult_dir):
    """The same levels of the person table's quasi-identifiers make smaller classes once the earliest
    admission (a month) is known too: the check counts the event table's attribute with the person."""
    levels = {"sex": 0, "age": 2, "race": 1, "marital-status": 2}
    alone = spec(adult_dir, levels=levels)
    alone.pop("tables")
    both = spec(adult_dir, levels={**levels, "admitted": 0})
    for s in (alone, both):
        s["transformation"].pop("search")
    person_table = api.check(alone, engine=two)
    joined = api.check(both, engine=two)
    assert joined.node.rows == person_table.node.rows == PERSONS
    assert joined.node.classes > person_table.node.classes
    assert person_table.anonymous and not joined.anonymous
    assert joined.node.outlier_rows > person_table.node.outlier_rows


def test_rule_first_and_an_event_table_without_quasi_identifiers(two, adult_dir):
    two.con.execute("CREATE TABLE notes AS SELECT pid AS who, 'note ' || pid AS text FROM visits "
                    "UNION ALL SELECT 99999, 'nobody'")
    s = spec(adult_dir)
    s["tables"]["visits"].update(rules={"admitted": "first"}, order_by="visit")
    s["tables"]["notes"] = {"table": "notes", "key": "who", "attributes": {"text": "insensitive"}}
    report = api.anonymize(s, engine=two)
    check_release(two, two, "persons_anon", "visits_anon")
    released = {r[0] for r in rows(two, "persons_anon", ["pid"])}
    notes = rows(two, "notes_anon", ["who", "text"])
    assert {who for who, _ in notes} == released, "the notes of released persons, and none other"
    assert len(notes) == report.outputs["relations"][1]["rows"] == report.outputs["relations"][2]["rows"]
    # `first` by visit: the first visit's admission is the earliest here, as `min`
    by_min = api.anonymize(spec(adult_dir, output={"mode": "sql"}), engine=two)
    assert by_min.node.levels == report.node.levels


@pytest.mark.parametrize("mode", ["view", "in_place"])
def test_views_and_in_place(two, adult_dir, mode):
    api.anonymize(spec(adult_dir, output={"mode": mode}), engine=two)
    if mode == "view":
        check_release(two, two, "persons_anon", "visits_anon")
        kinds = dict(two.fetch_script("SELECT table_name, table_type FROM information_schema.tables")[1])
        assert kinds["visits_anon"] == kinds["persons_anon"] == "VIEW"
        # a view reads the tables again: a later visit of a released person is released with it
        before = len(rows(two, "visits_anon", ["pid"]))
        two.con.execute("INSERT INTO visits SELECT pid, 9, admitted + 1, clinic, ref_v FROM visits "
                        "WHERE visit = 0 AND pid IN (SELECT ref / 7 FROM persons_anon) LIMIT 1")
        assert len(rows(two, "visits_anon", ["pid"])) == before + 1
        check_release(two, two, "persons_anon", "visits_anon")
    else:
        with build(adult_dir / "adult.csv") as source:
            check_release(two, source, "persons", "visits")
        names = sorted(r[0] for r in two.fetch_script("SELECT table_name FROM information_schema.tables")[1])
        assert names == ["persons", "visits"]


def test_a_view_release_that_fails_leaves_no_view(two, adult_dir):
    s = spec(adult_dir, output={"mode": "view"}, suppression_limit=0.0)
    s["privacy"] = [{"k_anonymity": {"k": PERSONS + 1}}]
    with pytest.raises(InfeasibleError):
        api.anonymize(s, engine=two)
    assert sorted(r[0] for r in two.fetch_script("SELECT table_name FROM information_schema.tables")[1]) \
        == ["persons", "visits"]


def test_hostile_names(adult_dir):
    person, visits = 'pe"rs; DROP TABLE x;--', "vi'sits \"v\""
    with build(adult_dir / "adult.csv", person, visits) as duck:
        s = spec(adult_dir, person=person, visits=visits)
        s["tables"]["visits"]["name"] = 'out"v\'; --'
        s["output"]["name"] = "out p"
        api.anonymize(s, engine=duck)
        check_release(duck, duck, "out p", 'out"v\'; --', visits_source=visits)


def test_an_existing_output_is_refused_before_anything_is_written(two, adult_dir):
    two.con.execute("CREATE TABLE visits_anon (x INTEGER)")
    with pytest.raises(SpecError, match=r"tables\.visits\.name: 'visits_anon' exists; set output.replace"):
        api.anonymize(spec(adult_dir), engine=two)
    assert not two.relation_exists("persons_anon")
    api.anonymize(spec(adult_dir, output={"mode": "table", "replace": True}), engine=two)
    check_release(two, two, "persons_anon", "visits_anon")


@pytest.mark.parametrize(("change", "message"), [
    (lambda s: s["tables"]["visits"].update(table="nope"),
     r"tables\.visits\.table: no table or view named 'nope'"),
    (lambda s: s["tables"]["visits"].update(key="pi"),
     r"tables\.visits\.key: table 'visits' has no column 'pi'\. Did you mean 'pid'\?"),
    (lambda s: s["tables"]["visits"]["attributes"].update(admited="insensitive"),
     r"tables\.visits\.attributes\.admited: table 'visits' has no column 'admited'"),
    (lambda s: s["tables"]["visits"]["attributes"]["admitted"].update(
        hierarchy={"intervals": {"widths": [5]}}),
     r"^tables\.visits\.attributes\.admitted\.hierarchy: the intervals hierarchy reads numbers, but "
     r"column 'admitted' is DATE"),
    (lambda s: s["tables"]["visits"].update(rules={}),
     r"tables\.visits\.rules\.admitted: 'admitted' differs between the rows of person 1 \(pid\)"),
])
def test_data_errors_name_the_key_path_table_and_column(two, adult_dir, change, message):
    s = spec(adult_dir)
    change(s)
    with pytest.raises(SpecError, match=message):
        api.anonymize(s, engine=two)


@pytest.mark.parametrize(("change", "message"), [
    (lambda s: s.pop("privacy_unit"), r"^tables: several tables need `privacy_unit: COLUMN`"),
    (lambda s: s["tables"]["visits"].pop("key"), r"^tables\.visits\.key: is required"),
    (lambda s: s["tables"]["visits"].update(kee="pid"), r"^tables\.visits\.kee: unknown key 'kee'.*'key'"),
    (lambda s: s["tables"]["visits"]["attributes"].update(diagnosis="sensitive"),
     r"^tables\.visits\.attributes\.diagnosis\.role: role sensitive is not available in an event table"),
    (lambda s: s["tables"]["visits"]["attributes"].update(age={"role": "quasi_identifier",
                                                                "hierarchy": {"mask": {"levels": 2}}}),
     r"^tables\.visits\.attributes\.age: 'age' is also an attribute of the person table"),
    (lambda s: s["tables"]["visits"]["attributes"].update(pid="insensitive"),
     r"^tables\.visits\.attributes\.pid: 'pid' is the key"),
    (lambda s: s["tables"]["visits"].update(rules={"admitted": "first"}),
     r"^tables\.visits\.order_by: rule `first` needs `order_by: COLUMN`"),
    (lambda s: s["tables"]["visits"]["attributes"]["admitted"].pop("hierarchy"),
     r"^tables\.visits\.attributes\.admitted\.hierarchy: a quasi-identifier needs a hierarchy"),
    (lambda s: s["tables"]["visits"]["attributes"].update(clinic={"role": "identifer"}),
     r"^tables\.visits\.attributes\.clinic\.role:"),
    (lambda s: s["tables"]["visits"].update(name="persons_anon"),
     r"^tables\.visits\.name: output 'persons_anon' is also output.name's"),
    (lambda s: s.update(transformation={"method": "microaggregation", "k": 5}),
     r"^tables: method microaggregation releases one table; several tables are released by method "
     r"generalization"),
])
def test_spec_errors_are_one_line_naming_the_key_path(adult_dir, change, message):
    s = spec(adult_dir)
    change(s)
    with pytest.raises(SpecError, match=message) as e:
        spec_from_dict(s)
    assert "\n" not in str(e.value)


def test_one_table_verbs_refuse_several(two, adult_dir):
    with pytest.raises(UnsupportedError, match=r"check --against reads one table; remove `tables`"):
        api.check(spec(adult_dir), engine=two, against="visits")
    with pytest.raises(UnsupportedError, match=r"compile reads one table; apply or anonymize with "
                                                r"output.mode sql print every table's SQL"):
        api.compile_sql(spec(adult_dir), engine=two)
    with pytest.raises(UnsupportedError, match=r"risk reads one table"):
        api.risk(spec(adult_dir), engine=two)


CHILD = textwrap.dedent("""
    import json, sys, time
    from pathlib import Path
    from sqlanon import api
    from sqlanon.engines.duckdb import DuckDBEngine

    database, marker, spec = sys.argv[1], Path(sys.argv[2]), json.loads(sys.argv[3])

    class Pausing(DuckDBEngine):
        # Stops for good right after the second original table was dropped, inside the transaction.
        def _execute(self, sql):
            super()._execute(sql)
            if sql.startswith('DROP TABLE IF EXISTS "visits"'):
                marker.write_text("dropped")
                time.sleep(600)

    api.anonymize(spec, engine=Pausing(database))
""")


def test_in_place_survives_sigkill_with_every_table_intact(adult_dir, tmp_path):
    database = tmp_path / "two.duckdb"
    with build(adult_dir / "adult.csv") as duck:
        duck.con.execute(f"ATTACH '{database}' AS f; COPY FROM DATABASE memory TO f; DETACH f")
        before = {t: sorted(rows(duck, t, ["pid", "ref" if t == "persons" else "admitted"]))
                  for t in ("persons", "visits")}
    marker = tmp_path / "marker"
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    kill_when_marked(script, [str(database), str(marker), json.dumps(spec(
        adult_dir, output={"mode": "in_place"}))], marker)
    with DuckDBEngine(str(database)) as e:
        assert {t: sorted(rows(e, t, ["pid", "ref" if t == "persons" else "admitted"]))
                for t in before} == before
        # the dead run's staging tables (the joined and released persons) go with the next run
        api.anonymize(spec(adult_dir, output={"mode": "in_place"}), engine=e)
        with build(adult_dir / "adult.csv") as source:
            check_release(e, source, "persons", "visits")
        assert sorted(r[0] for r in e.fetch_script(
            "SELECT table_name FROM information_schema.tables")[1]) == ["persons", "visits"]


def test_printed_sql_gives_the_rows_mode_table_writes(two, adult_dir, tmp_path):
    api.anonymize(spec(adult_dir), engine=two)
    path = tmp_path / "release.sql"
    report = api.anonymize(spec(adult_dir, output={"mode": "sql", "path": str(path)}), engine=two)
    assert [r["relation"] for r in report.outputs["relations"]] == ["persons_anon", "visits_anon"]
    statements = [s for s in path.read_text().split(";\n") if s.strip()]
    assert len(statements) == 2
    for statement, written in zip(statements, ("persons_anon", "visits_anon")):
        assert sorted(two.fetch_script(statement)[1]) == sorted(two.fetch_script(
            f"SELECT * FROM {written}")[1])
    assert not [r for r in two.fetch_script("SELECT table_name FROM information_schema.tables")[1]
                if r[0].startswith("__sa_")]
    assert report.outputs["path"] == str(path)
    again = api.anonymize(spec(adult_dir, output={"mode": "sql"}), engine=two)
    assert "".join(again.outputs["sql"]) == path.read_text().replace(";\n\n", ";\n")
