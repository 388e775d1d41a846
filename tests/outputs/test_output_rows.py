"""The output's rows: generalization, suppression (remove / mask), identifier actions, refusals."""

from __future__ import annotations

import hashlib

import pytest

from sqlanon import api
from sqlanon.errors import InfeasibleError, SpecError
from sqlanon.spec import spec_from_dict
from tests.outputs.people import KEPT, MASKED, ROWS, canon, people_spec, sorted_rows

SALT = "pepper-7f3a-9c2e41"


def apply(engine, **changes):
    return api.apply(spec_from_dict(people_spec(**changes)), engine=engine)


def test_removes_outlier_classes_and_drops_identifiers(people):
    report = apply(people)
    assert report.outputs["relation"] == "people_anon"
    assert report.outputs["rows"] == 7
    assert report.outputs["dropped_columns"] == ["name"]
    names, _ = people.fetch_script("SELECT * FROM people_anon")
    assert names == ["id", "age", "zip", "sex", "disease"]  # source order, identifier removed
    assert sorted_rows(people, "people_anon") == canon(KEPT)


def test_masks_outlier_classes(people):
    report = apply(people, transformation={"suppressed": "mask"})
    assert report.outputs["rows"] == 10
    assert sorted_rows(people, "people_anon") == canon(KEPT + MASKED)


def test_masking_a_level_zero_numeric_qi_gives_text(people):
    # age kept at level 0 (an INTEGER column): the ten ages are all different, so every class has
    # one row and fails 2-anonymity; with a 100% limit every row is masked, age becoming the text '*'.
    apply(people, transformation={"levels": {"age": 0, "zip": 3, "sex": 1}, "suppression_limit": 1.0,
                                  "suppressed": "mask"})
    assert sorted_rows(people, "people_anon", ["id", "age", "zip", "sex"]) == canon(
        [(i, "*", "*", "*") for i in range(1, 11)])


def test_refuses_when_outliers_exceed_the_limit(people):
    with pytest.raises(InfeasibleError, match=r"3 rows are in classes that fail .* allows at most 2 "
                                              r"of 10 rows"):
        apply(people, transformation={"suppression_limit": 0.2})
    assert not people.relation_exists("people_anon")


def test_hash_is_salted_sha256_of_the_value(people):
    spec = people_spec()
    spec["attributes"]["name"] = {"role": "identifier", "action": "hash", "salt": SALT}
    api.apply(spec_from_dict(spec), engine=people)
    got = dict(people.fetch_script("SELECT id, name FROM people_anon")[1])
    expected = {r[0]: hashlib.sha256((SALT + r[1]).encode("utf-8")).hexdigest() for r in ROWS}
    assert got == {i: expected[i] for i in (1, 2, 3, 4, 5, 7, 10)}


def test_pseudonyms_rank_the_salted_hashes(people):
    spec = people_spec(transformation={"suppressed": "mask"})
    spec["attributes"]["name"] = {"role": "identifier", "action": "pseudonymize", "salt": SALT}
    people.execute_script("INSERT INTO people VALUES (11, 'Ann', 29, '47601', 'F', 'flu'), "
                   "(12, NULL, 31, '47601', 'F', 'flu')")
    api.apply(spec_from_dict(spec), engine=people)
    got = dict(people.fetch_script("SELECT id, name FROM people_anon")[1])
    names = {r[0]: r[1] for r in ROWS} | {11: "Ann"}
    digests = sorted({hashlib.sha256((SALT + n).encode()).hexdigest() for n in names.values()})
    rank = {d: i for i, d in enumerate(digests, start=1)}
    expected = {i: rank[hashlib.sha256((SALT + n).encode()).hexdigest()] for i, n in names.items()}
    assert got == expected | {12: None}
    assert got[1] == got[11]  # the same name, the same pseudonym


def test_mask_replaces_every_character(people):
    spec = people_spec()
    spec["attributes"]["name"] = {"role": "identifier", "action": "mask"}
    api.apply(spec_from_dict(spec), engine=people)
    got = dict(people.fetch_script("SELECT id, name FROM people_anon")[1])
    assert got == {1: "***", 2: "***", 3: "***", 4: "***", 5: "***", 7: "***", 10: "*" * 11}


@pytest.mark.parametrize("action", ["hash", "pseudonymize"])
def test_refuses_an_unsalted_hash(people, action):
    spec = people_spec()
    spec["attributes"]["name"] = {"role": "identifier", "action": action}
    with pytest.raises(SpecError, match=rf"attributes\.name\.salt: action '{action}' needs a salt"):
        api.apply(spec_from_dict(spec), engine=people)
    assert not people.relation_exists("people_anon")


def test_classes_failing_l_diversity_are_suppressed(people):
    # (<40, 476**, F) holds flu and cold; with disease of O'Brien set to flu it holds only flu and
    # fails distinct 2-diversity although it is 2-anonymous: 1 Ann and 10 O'Brien go too (5 rows).
    people.execute_script("UPDATE people SET disease = 'flu' WHERE id = 10")
    report = apply(people, privacy=[{"k_anonymity": {"k": 2}},
                                    {"l_diversity": {"attribute": "disease", "l": 2}}],
                   transformation={"suppression_limit": 0.5})
    assert report.outputs["rows"] == 5
    assert sorted_rows(people, "people_anon", ["id"]) == [(2,), (3,), (4,), (5,), (7,)]


def test_undeclared_columns_are_copied_with_a_warning(people):
    spec = people_spec()
    del spec["attributes"]["id"]
    report = api.apply(spec_from_dict(spec), engine=people)
    assert report.outputs["warnings"] == [(
        "columns not declared in the spec were copied unchanged: id (declare them, e.g. as "
        "identifier to drop them, or as insensitive)")]
    assert sorted_rows(people, "people_anon", ["id"]) == [(1,), (10,), (2,), (3,), (4,), (5,), (7,)]


def test_mode_none_writes_nothing(people):
    report = apply(people, output={"mode": "none"})
    assert report.outputs == {"mode": "none"}
    assert not people.relation_exists("people_anon")


def test_refuses_generalization_levels_under_another_method(people):
    with pytest.raises(SpecError, match="transformation.levels: levels apply to method generalization"):
        apply(people, transformation={"method": "microaggregation"})
    assert not people.relation_exists("people_anon")
