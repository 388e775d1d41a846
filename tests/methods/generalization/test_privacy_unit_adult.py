"""Persons with many rows, on Adult: every person gets several generated visits. Row-level
k-anonymity then holds with k = 5 at every node (each person alone is a class of five rows or more)
while a person is still alone in its class; person-level anonymization fixes it. Both checked by
brute force over the persons of the released rows."""

from __future__ import annotations

from collections import defaultdict

import pytest

from sqlanon import api
from tests.conftest import adult_spec_dict

QIS = ["sex", "age", "race", "marital-status", "education"]
PERSONS = 1500


@pytest.fixture()
def visits(adult_engine):
    """Adult's first rows as persons (``pid``), each with 5 to 7 visits (``visit``)."""
    con = adult_engine.con
    con.execute(f"""
        CREATE TABLE persons AS
            SELECT row_number() OVER () AS pid, * FROM (SELECT * FROM adult LIMIT {PERSONS});
        CREATE TABLE visits AS SELECT p.*, v.visit FROM persons p
            JOIN range(0, 7) v(visit) ON v.visit < 5 + p.pid % 3""")
    return adult_engine


def spec_for(adult_dir, unit: bool, **transformation) -> dict:
    spec = adult_spec_dict(adult_dir, qis=QIS, privacy=[{"k_anonymity": {"k": 5}}])
    spec["source"] = {"table": "visits"}
    spec["attributes"]["pid"] = {"role": "insensitive"}
    for c in ("native-country", "workclass", "occupation", "salary-class", "visit"):
        spec["attributes"][c] = {"role": "insensitive"}
    spec["transformation"] = {"search": "optimal", "suppression_limit": 0.05, **transformation}
    spec["output"] = {"mode": "table", "name": "released", "replace": True}
    if unit:
        spec["privacy_unit"] = "pid"
    return spec


def persons_per_class(engine, relation: str = "released") -> dict[tuple, set]:
    cols = ", ".join(f'"{q}"' for q in QIS)
    out: dict[tuple, set] = defaultdict(set)
    for row in engine.con.execute(f'SELECT pid, {cols} FROM "{relation}"').fetchall():
        out[tuple(row[1:])].add(row[0])
    return out


def test_row_level_k_is_defeated_by_persons_with_many_rows(visits, adult_dir):
    # the attack: at the raw levels, rows come in classes of 5+ rows ...
    row_level = api.check(spec_for(adult_dir, False, levels={}, suppression_limit=0.0), engine=visits)
    assert row_level.anonymous and row_level.node.min_class_size >= 5
    # ... but a class of rows can be one person: the released table singles them out
    api.apply(spec_for(adult_dir, False, levels={}, suppression_limit=0.0), engine=visits)
    classes = persons_per_class(visits)
    alone = [c for c, ps in classes.items() if len(ps) == 1]
    assert alone, "some person is alone in a class of rows"
    # the person-level check sees it
    person_level = api.check(spec_for(adult_dir, True, levels={}, suppression_limit=0.0), engine=visits)
    assert not person_level.anonymous
    assert person_level.node.min_class_size_all == 1
    assert person_level.node.rows == PERSONS


def test_person_level_anonymization_holds_by_brute_force(visits, adult_dir):
    report = api.anonymize(spec_for(adult_dir, True), engine=visits)
    assert report.search["evaluated_in"] == "memory"
    unit = report.privacy_unit
    total_rows = visits.con.execute("SELECT count(*) FROM visits").fetchone()[0]
    assert unit["persons"] == PERSONS and unit["rows"] == total_rows
    classes = persons_per_class(visits)
    assert min(len(ps) for ps in classes.values()) >= 5
    # every released person keeps all its rows, in one class; suppressed persons vanish whole
    released = dict(visits.con.execute("SELECT pid, count(*) FROM released GROUP BY pid").fetchall())
    source = dict(visits.con.execute("SELECT pid, count(*) FROM visits GROUP BY pid").fetchall())
    assert all(source[p] == n for p, n in released.items())
    assert sum(len(ps) for ps in classes.values()) == len(released)
    suppressed = PERSONS - len(released)
    assert suppressed == unit["suppressed_persons"] <= int(0.05 * PERSONS)
    assert unit["suppressed_rows"] == total_rows - sum(released.values())
