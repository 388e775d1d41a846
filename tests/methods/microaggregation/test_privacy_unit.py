"""Microaggregation of persons: a person with many rows is one record of its group, so every group
holds k persons, and all of a person's rows carry the group's values."""

from __future__ import annotations

from collections import defaultdict

import pytest

from sqlanon import api
from sqlanon.errors import SpecError


@pytest.fixture()
def visits(duck):
    # persons 1..12, with 1 to 4 visits each; person 4 and 8 have 4 visits of identical values
    duck.con.execute("""CREATE TABLE visits AS
        SELECT pid, 20 + pid * 3 AS age, 1000 * pid + 7 * (pid % 5) AS income, v AS visit
        FROM range(1, 13) p(pid), range(0, 4) r(v) WHERE v < 1 + pid % 4""")
    return duck


def spec(algorithm: str, unit: bool = True, **output) -> dict:
    s = {"source": {"table": "visits"},
         "attributes": {"pid": {"role": "insensitive"}, "visit": {"role": "insensitive"},
                        "age": {"role": "quasi_identifier"}, "income": {"role": "quasi_identifier"}},
         "transformation": {"method": "microaggregation", "algorithm": algorithm, "k": 3},
         "output": {"mode": "table", "name": "out", "replace": True, **output}}
    if unit:
        s["privacy_unit"] = "pid"
    return s


def persons_per_group(engine) -> dict[tuple, set]:
    groups: dict[tuple, set] = defaultdict(set)
    for pid, age, income in engine.con.execute("SELECT pid, age, income FROM out").fetchall():
        groups[(round(age, 6), round(income, 6))].add(pid)
    return groups


@pytest.mark.parametrize("algorithm", ["mdav", "individual_ranking"])
def test_groups_hold_k_persons(visits, algorithm):
    row_level = api.apply(spec(algorithm, unit=False), engine=visits)
    assert row_level.min_group_size >= 3
    assert min(len(p) for p in persons_per_group(visits).values()) == 1  # a person with 3+ rows alone
    report = api.apply(spec(algorithm), engine=visits)
    source = visits.con.execute("SELECT count(*) FROM visits").fetchone()[0]
    assert report.rows == 12 and report.min_group_size >= 3
    assert report.as_dict()["privacy_unit"] == {"column": "pid", "persons": 12, "rows": source}
    per_person = defaultdict(set)
    for pid, age, income in visits.con.execute("SELECT pid, age, income FROM out").fetchall():
        per_person[pid].add((age, income))
    assert all(len(v) == 1 for v in per_person.values())
    if algorithm == "mdav":
        assert min(len(p) for p in persons_per_group(visits).values()) >= 3
    assert visits.con.execute("SELECT count(*) FROM out").fetchone()[0] == source
    assert not [t for (t,) in visits.con.execute("SHOW TABLES").fetchall() if t.startswith("__sa")]


@pytest.mark.parametrize("algorithm", ["mdav", "projection"])
def test_views_and_printed_sql_release_the_same_rows(visits, algorithm, tmp_path):
    api.apply(spec(algorithm), engine=visits)
    expected = sorted(visits.con.execute("SELECT * FROM out").fetchall())
    api.apply(spec(algorithm, mode="view", name="out_view"), engine=visits)
    assert sorted(visits.con.execute("SELECT * FROM out_view").fetchall()) == expected
    path = tmp_path / "out.sql"
    api.apply(spec(algorithm, mode="sql", path=str(path), name="printed"), engine=visits)
    text = path.read_text()
    statement = text[text.index("SELECT"):].strip().rstrip(";")
    visits.con.execute(f"CREATE TABLE from_sql AS {statement}")
    assert sorted(visits.con.execute("SELECT * FROM from_sql").fetchall()) == expected


def test_a_declared_key_is_refused(visits):
    s = spec("mdav")
    s["transformation"]["key"] = ["visit"]
    with pytest.raises(SpecError, match="person column is the key"):
        api.apply(s, engine=visits)
