"""m-invariance with a privacy unit: a person with several rows is one record of each release, its
quasi-identifiers by the unit's rules and its one sensitive value; a person whose rows hold two
sensitive values is refused, naming it."""

from __future__ import annotations

import pytest

from sqlanon import api
from sqlanon.errors import SpecError


def spec(output: str, **unit) -> dict:
    return {"source": {"table": "visits"},
            "privacy_unit": {"column": "pid", **unit},
            "attributes": {"pid": "identifier", "age": "quasi_identifier", "d": "sensitive"},
            "publishing": {"mode": "m_invariance", "m": 2, "state": "s"},
            "output": {"mode": "table", "name": output}}


def persons(duck, where: str = "") -> None:
    """Persons 0..39, each with 1 to 3 visits at growing ages and one diagnosis."""
    duck.con.execute(f"""CREATE OR REPLACE TABLE visits AS
        SELECT p AS pid, 20 + p + v AS age, ['flu', 'cold', 'ulcer', 'asthma'][1 + p % 4] AS d
        FROM range(40) t(p), range(3) u(v) WHERE v <= p % 3 {where}""")


def test_a_person_is_one_record_of_each_release(duck):
    persons(duck)
    first = api.apply(spec("r1", attributes={"age": "min"}), engine=duck)
    assert first.rows == 40 and first.m_unique
    published = duck.con.execute("SELECT count(*), sum(counterfeits) FROM r1").fetchone()
    assert published[0] == 40 + first.counterfeits
    # each person's group shows its youngest age: the group's range holds it
    groups = dict(duck.con.execute('SELECT "key", group_id FROM s__releases').fetchall())
    shown = dict(duck.con.execute("SELECT DISTINCT group_id, age FROM r1").fetchall())
    for pid, age in duck.con.execute("SELECT pid, min(age) FROM visits GROUP BY pid").fetchall():
        text = shown[groups[str(pid)]]
        low, high = (int(x) for x in text.strip("[]").split(", ")) if "," in text else (int(text),) * 2
        assert low <= age <= high
    persons(duck, "AND p NOT IN (3, 8, 21)")
    duck.con.execute("INSERT INTO visits VALUES (50, 33, 'flu'), (50, 34, 'flu'), (51, 40, 'cold')")
    second = api.apply(spec("r2", attributes={"age": "min"}), engine=duck)
    assert second.rows == 39 and second.invariant and second.persons_kept == 37
    signatures = {}
    for number, key, group in duck.con.execute('SELECT "release", "key", group_id FROM s__releases'
                                               ).fetchall():
        values = {v for (v,) in duck.con.execute(f"SELECT d FROM r{number} WHERE group_id = ?",
                                                  [group]).fetchall()}
        assert signatures.setdefault(key, values) == values  # the same signature in both releases


def test_a_person_with_two_sensitive_values_is_refused(duck):
    persons(duck)
    duck.con.execute("INSERT INTO visits VALUES (7, 40, 'ulcer'), (12, 41, 'cold')")
    with pytest.raises(SpecError, match=r"privacy_unit\.attributes\.d: 'd' differs between the rows of "
                                        r"person\(s\) 12, 7 \(pid\)"):
        api.apply(spec("r1", attributes={"age": "min"}), engine=duck)
    with pytest.raises(SpecError, match=r"privacy_unit\.attributes\.age: 'age' differs"):
        api.apply(spec("r1"), engine=duck)  # age is constant by default, and it is not
    first = api.apply(spec("r1", attributes={"age": "min", "d": "first"}, order_by="age"), engine=duck)
    assert first.rows == 40
    assert duck.con.execute("SELECT count(*) FROM s__releases WHERE value = 'ulcer'").fetchone()[0] == 10


def test_the_key_is_the_privacy_unit(duck):
    persons(duck)
    duck.con.execute("ALTER TABLE visits ADD COLUMN other INTEGER")
    attributes = {**spec("r1")["attributes"], "other": "identifier"}
    with pytest.raises(SpecError, match=r"publishing\.key: names 'other' but the privacy unit is 'pid'"):
        api.apply({**spec("r1"), "attributes": attributes,
                   "publishing": {"mode": "m_invariance", "m": 2, "state": "s", "key": "other"}}, engine=duck)
    assert api.apply(spec("r1", attributes={"age": "max"}), engine=duck).rows == 40
