"""``check --against`` on generalized releases: class pairs whose persons in both releases are fewer
than k, and persons whose candidate values shrink below l, against a brute-force oracle."""

from __future__ import annotations

import pytest

from sqlanon import api
from sqlanon.errors import SpecError
from tests.methods.republication.oracle import candidates

# id, age, disease: the previous release put ids 1-4 and 5-8 together; ages now fall in two decades
# that split both classes
PEOPLE = [(1, 21, "flu"), (2, 22, "cold"), (3, 35, "flu"), (4, 36, "flu"),
          (5, 23, "cold"), (6, 24, "hiv"), (7, 37, "hiv"), (8, 38, "hiv")]
PREVIOUS = {1: "A", 2: "A", 3: "A", 4: "A", 5: "B", 6: "B", 7: "B", 8: "B"}


def spec(k: int, l: int | None = None) -> dict:  # noqa: E741 -- the model's l
    privacy = [{"k_anonymity": {"k": k}}]
    if l is not None:
        privacy.append({"l_diversity": {"attribute": "disease", "l": l}})
    return {"source": {"table": "people"},
            "attributes": {"id": "insensitive", "disease": "sensitive",
                           "age": {"role": "quasi_identifier", "type": "integer",
                                   "hierarchy": {"intervals": {"widths": [10, 100]}}}},
            "privacy": privacy, "transformation": {"levels": {"age": 1}},
            "publishing": {"key": "id"}}


@pytest.fixture()
def engine(duck):
    duck.con.execute("CREATE TABLE people (id INTEGER, age INTEGER, disease VARCHAR)")
    duck.con.executemany("INSERT INTO people VALUES (?, ?, ?)", PEOPLE)
    duck.con.execute("CREATE TABLE previous (id INTEGER, age VARCHAR, disease VARCHAR)")
    duck.con.executemany("INSERT INTO previous VALUES (?, ?, ?)",
                         [(i, PREVIOUS[i], d) for i, _, d in PEOPLE])
    return duck


def oracle() -> dict:
    decade = {i: a // 10 for i, a, _ in PEOPLE}
    value = {i: d for i, _, d in PEOPLE}
    first = {i: (PREVIOUS[i], value[i]) for i in value}
    second = {i: (decade[i], value[i]) for i in value}
    found = candidates([(first, []), (second, [])])
    pairs: dict = {}
    for i in value:
        pairs.setdefault((PREVIOUS[i], decade[i]), []).append(len(found[i]))
    return pairs


def test_pairs_below_k_and_values_pinned_down_match_the_oracle(engine):
    pairs = oracle()
    report = api.check(spec(k=3), engine=engine, against="previous")
    assert report.class_pairs == len(pairs) == 4
    assert report.persons_in_both == 8
    assert report.shrunk_pairs == sum(len(n) < 3 for n in pairs.values())
    assert report.reduced_pairs == sum(min(n) < 2 for n in pairs.values())
    assert report.pinned_persons == sum(c == 1 for n in pairs.values() for c in n) > 0
    assert not report.anonymous
    assert {f["previous_class"] for f in report.flagged} == {"age=A", "age=B"}
    assert all("disease" not in str(f) for f in report.flagged)
    # with k = 2 and l = 2 only the pinned-down pairs remain
    report = api.check(spec(k=2, l=2), engine=engine, against="previous")
    assert report.shrunk_pairs == 0
    assert report.reduced_pairs == sum(min(n) < 2 for n in pairs.values()) > 0


def test_the_same_release_again_passes(engine):
    engine.con.execute("CREATE TABLE again AS SELECT id, CASE WHEN age < 30 THEN '[20, 30[' "
                       "ELSE '[30, 40[' END AS age, disease FROM people")
    report = api.check(spec(k=2), engine=engine, against="again")
    assert report.anonymous and report.persons_in_both == 8 and report.class_pairs == 2


def test_missing_key_and_previous_release_are_one_line_errors(engine):
    no_key = {**spec(k=2), "publishing": None}
    del no_key["publishing"]
    with pytest.raises(SpecError, match="publishing.key"):
        api.check(no_key, engine=engine, against="previous")
    with pytest.raises(SpecError, match="'nowhere' is not a table"):
        api.check(spec(k=2), engine=engine, against="nowhere")
    engine.con.execute("CREATE TABLE keyless AS SELECT age, disease FROM previous")
    with pytest.raises(SpecError, match="has no column 'id'"):
        api.check(spec(k=2), engine=engine, against="keyless")
    hidden = spec(k=2)
    hidden["attributes"]["id"] = "identifier"  # dropped from the release
    with pytest.raises(SpecError, match="leaves out the key 'id'"):
        api.check(hidden, engine=engine, against="previous")


def test_the_privacy_unit_is_the_key_when_publishing_names_none(engine):
    by_key = api.check(spec(k=3), engine=engine, against="previous")
    by_unit = spec(k=3)
    del by_unit["publishing"]
    by_unit["privacy_unit"] = "id"
    report = api.check(by_unit, engine=engine, against="previous")
    assert report.as_dict() == by_key.as_dict()
    two = {**spec(k=3), "privacy_unit": "pid"}
    two["attributes"] = {**two["attributes"], "pid": "insensitive"}
    with pytest.raises(SpecError, match="publishing.key: names 'id' but the privacy unit is 'pid'"):
        api.check(two, engine=engine, against="previous")
