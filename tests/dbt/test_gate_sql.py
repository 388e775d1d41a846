"""The gates' SQL (what `sqlanon dbt model` writes into the gates' macros) against `sqlanon check`:
on the raw rows each gate counts the classes that the check counts as violating its model, for every
l-diversity variant, every t-closeness distance and the other models that compile to SQL; on the
anonymized rows every gate passes. Run on DuckDB directly (the dbt builds are in test_dbt_build.py)."""

from __future__ import annotations

import dataclasses
import re

import pytest

from sqlanon import api
from sqlanon.outputs.dbt.sql import (
    RELATION,
    SOURCE,
    UNDECIDED,
    classes_by_code,
    gate_problem,
    gates,
    placeholder_text,
    privacy_gate_sql,
    uses_codes,
)
from sqlanon.spec import spec_from_dict
from sqlanon.sql.dialects import profile
from tests.conftest import adult_spec_dict

QIS = ["sex", "age", "race"]
MODELS = [
    {"k_anonymity": {"k": 5}},
    {"l_diversity": {"attribute": "salary-class", "l": 2}},
    {"l_diversity": {"attribute": "salary-class", "l": 1.3, "variant": "entropy"}},
    {"l_diversity": {"attribute": "salary-class", "l": 2, "variant": "recursive", "c": 9}},
    {"t_closeness": {"attribute": "salary-class", "t": 0.2}},
    {"t_closeness": {"attribute": "salary-class", "t": 0.2, "distance": "ordered"}},
    {"t_closeness": {"attribute": "salary-class", "t": 0.2, "distance": "hierarchical"}},
]
OTHER_MODELS = [
    {"p_sensitive_k_anonymity": {"attribute": "salary-class", "k": 5, "p": 2}},
    {"alpha_k_anonymity": {"attribute": "salary-class", "alpha": 0.9, "k": 5}},
    {"delta_disclosure": {"attribute": "salary-class", "delta": 1.5}},
    {"beta_likeness": {"attribute": "salary-class", "beta": 2}},
    {"beta_likeness": {"attribute": "salary-class", "beta": 2, "variant": "enhanced"}},
    {"average_risk": {"threshold": 0.1}},
]


def spec_dict(adult_dir, privacy, **transformation):
    d = adult_spec_dict(adult_dir, qis=QIS, sensitive=["salary-class"], privacy=privacy)
    d["attributes"]["salary-class"].update(
        order=["<=50K", ">50K"], hierarchy={"csv": str(adult_dir / "adult_hierarchy_salary-class.csv")})
    d["transformation"].update(transformation)
    return d


def run_gate(engine, sql: str, relation: str, source: str = "adult") -> list[tuple]:
    sql = sql.replace(placeholder_text(RELATION, "duckdb"), f'"{relation}"')
    return engine.con.execute(sql.replace(placeholder_text(SOURCE, "duckdb"), f'"{source}"')).fetchall()


def model_id(model: dict) -> str:
    return "-".join(str(v) for v in next(iter(model.values())).values())


@pytest.mark.parametrize("model", MODELS + OTHER_MODELS, ids=model_id)
def test_a_gate_counts_the_classes_check_finds_violating(adult_engine, adult_dir, model):
    spec = spec_dict(adult_dir, [model])
    (report,) = api.check(spec, engine=adult_engine).as_dict()["privacy"].values()
    gate = gates(spec_from_dict(spec), ["duckdb"])[0]
    rows = run_gate(adult_engine, gate.sql["duckdb"], "adult")
    # the one gate grouping on hash codes says the same (no row is masked, so no suppressed row)
    problem, _ = gate_problem(spec_from_dict(spec))
    coded = privacy_gate_sql(problem, 0.0, profile("duckdb"), coded=True)
    assert run_gate(adult_engine, coded, "adult") == [row[:1] for row in rows]
    if report["holds"]:
        assert rows == []
        return
    (message, *_), = rows
    assert re.search(rf"^fails {re.escape(gate.description)}: (\d+) classes fail", message).group(1) \
        == str(report["violating_classes"])


def test_every_gate_passes_on_the_anonymized_rows(adult_engine, adult_dir):
    spec = spec_dict(adult_dir, MODELS, search="optimal", suppression_limit=0.1, suppressed="mask")
    spec["output"] = {"name": "adult_anon"}
    report = api.anonymize(spec, engine=adult_engine)
    assert 0 < report.as_dict()["suppressed_rows"]  # masked: every QI is *, exempt from the models
    spec["transformation"] = {**spec_dict(adult_dir, [])["transformation"], "suppression_limit": 0.1,
                              "suppressed": "mask", "levels": report.node.levels}
    found = {g.name: run_gate(adult_engine, g.sql["duckdb"], "adult_anon")
             for g in gates(spec_from_dict(spec), ["duckdb"], view=True)}
    assert len(found) == len(MODELS) + 2  # the suppression limit; a view's no_rare_values
    assert found == dict.fromkeys(found, [])


@pytest.mark.parametrize("k", [5, 40])
def test_the_rare_value_gate_counts_each_quasi_identifiers_values_on_its_own(adult_engine, adult_dir, k):
    """On the raw rows: every value of each QI in fewer than k rows fails, the rarest named first
    (then by the QIs' order and the value); '*' and NULL cells are suppressed, so exempt."""
    spec = spec_dict(adult_dir, [{"k_anonymity": {"k": k}}])
    (gate,) = [g for g in gates(spec_from_dict(spec), ["duckdb"], view=True) if g.name == "no_rare_values"]
    adult_engine.con.execute("CREATE OR REPLACE TEMP TABLE adult_cells AS SELECT * REPLACE ("
                             "CASE WHEN age = '90' THEN '*' WHEN age = '88' THEN NULL ELSE age END AS age) "
                             "FROM adult")
    rare = sorted((n, i, q, v) for i, q in enumerate(QIS) for v, n in adult_engine.con.execute(
        f'SELECT "{q}", count(*) FROM adult GROUP BY "{q}"').fetchall()
        if n < k and not (q == "age" and v in ("90", "88")))
    assert rare  # ages 85 and 86 at k=5 (88, rarer, is blanked)
    rows = run_gate(adult_engine, gate.sql["duckdb"], "adult_cells")
    (message, q, v, n), = rows
    assert (n, q, v) == (rare[0][0], rare[0][2], rare[0][3])
    assert message == (f"fails no_rare_values (k={k}): {len(rare)} values of the quasi-identifiers are in "
                       f"fewer than {k} rows; the worst, {q}={v}, is in {n} rows")


def test_the_one_gate_says_what_each_models_gate_says(adult_engine, adult_dir):
    """--one-gate: one statement for every model and the suppression limit; on the raw rows it returns
    the message of each failing model's own gate, and on the anonymized rows nothing."""
    spec = spec_from_dict(spec_dict(adult_dir, MODELS, suppression_limit=0.1, suppressed="mask"))
    separate = [run_gate(adult_engine, g.sql["duckdb"], "adult") for g in gates(spec, ["duckdb"])]
    expected = sorted(rows[0][0] for rows in separate if rows)
    assert len(expected) >= 5  # most models fail on the raw rows
    (one,) = gates(spec, ["duckdb"], one=True)
    assert one.name == "privacy" and one.needs_source
    assert sorted(m for (m,) in run_gate(adult_engine, one.sql["duckdb"], "adult")) == expected


def test_the_one_gate_counts_suppressed_rows_as_the_suppression_gate(adult_engine, adult_dir):
    spec = spec_from_dict(spec_dict(adult_dir, [{"k_anonymity": {"k": 5}}], suppression_limit=0.01,
                                    suppressed="mask"))
    adult_engine.con.execute("CREATE OR REPLACE TEMP TABLE adult_masked AS SELECT * REPLACE ("
                             "CASE WHEN age < '20' THEN '*' ELSE sex END AS sex, "
                             "CASE WHEN age < '20' THEN '*' ELSE race END AS race, "
                             "CASE WHEN age < '20' THEN '*' ELSE age END AS age) FROM adult")
    (limit,) = [g for g in gates(spec, ["duckdb"]) if g.name == "suppression_limit"]
    ((message, *_),) = run_gate(adult_engine, limit.sql["duckdb"], "adult_masked")
    assert message.startswith("fails the suppression limit: ")
    (one,) = gates(spec, ["duckdb"], one=True)
    assert message in [m for (m,) in run_gate(adult_engine, one.sql["duckdb"], "adult_masked")]


def two_attribute_spec(adult_dir, **transformation):
    """Models reading two sensitive attributes: the one gate then groups on hash codes (DuckDB)."""
    d = spec_dict(adult_dir, [*MODELS, {"l_diversity": {"attribute": "occupation", "l": 3}},
                              {"t_closeness": {"attribute": "occupation", "t": 0.3}}], **transformation)
    d["attributes"]["occupation"] = {"role": "sensitive"}
    return d


def test_the_one_gate_on_hash_codes_says_what_each_models_gate_says(adult_engine, adult_dir):
    """With two sensitive attributes the one gate's frequency table is built from hash codes of the
    quasi-identifier tuples and of the sensitive values: the same messages as the models' own gates
    and as the one gate grouping on the values."""
    spec = spec_from_dict(two_attribute_spec(adult_dir, suppression_limit=0.1, suppressed="mask"))
    problem, _ = gate_problem(spec)
    assert uses_codes(problem, profile("duckdb")) and not uses_codes(problem, profile("postgres"))
    separate = [run_gate(adult_engine, g.sql["duckdb"], "adult") for g in gates(spec, ["duckdb"])]
    expected = sorted(rows[0][0] for rows in separate if rows)
    assert len(expected) >= 7
    (one,) = gates(spec, ["duckdb"], one=True)
    assert '"__sa_codes"' in one.sql["duckdb"] and '"__sa_decoded"' in one.sql["duckdb"]
    assert sorted(m for (m,) in run_gate(adult_engine, one.sql["duckdb"], "adult")) == expected
    # a table is read by each GROUP BY of the codes and dictionaries; a view once, into one CTE
    assert '"__sa_rows" AS (' not in one.sql["duckdb"]
    (view_one,) = [g for g in gates(spec, ["duckdb"], one=True, view=True) if g.name == "privacy"]
    assert '"__sa_rows" AS (' in view_one.sql["duckdb"]
    assert sorted(m for (m,) in run_gate(adult_engine, view_one.sql["duckdb"], "adult")) == expected
    # the classes keyed by the decoded quasi-identifiers rather than by their tuple code
    on_tuples = privacy_gate_sql(problem, 0.1, profile("duckdb"), coded=True, by_code=False)
    assert '"__sa_codes"' in on_tuples and '"__sa_decoded"' not in on_tuples
    assert sorted(m for (m,) in run_gate(adult_engine, on_tuples, "adult")) == expected
    on_values = privacy_gate_sql(problem, 0.1, profile("duckdb"), coded=False)
    assert '"__sa_codes"' not in on_values
    assert sorted(m for (m,) in run_gate(adult_engine, on_values, "adult")) == expected


def test_the_one_gate_on_hash_codes_passes_the_anonymized_rows_and_fails_when_codes_collide(
        adult_engine, adult_dir):
    """On the anonymized rows the coded one gate passes; with a hash that gives different tuples the
    same code it fails saying so, rather than check the merged classes."""
    d = two_attribute_spec(adult_dir, search="optimal", suppression_limit=0.1, suppressed="mask")
    d["output"] = {"name": "adult_anon2"}
    report = api.anonymize(d, engine=adult_engine)
    d["transformation"] = {**spec_dict(adult_dir, [])["transformation"], "suppression_limit": 0.1,
                           "suppressed": "mask", "levels": report.node.levels}
    problem, _ = gate_problem(spec_from_dict(d))
    duckdb = profile("duckdb")
    assert run_gate(adult_engine, privacy_gate_sql(problem, 0.1, duckdb), "adult_anon2") == []
    adult_engine.con.execute("CREATE OR REPLACE MACRO weak_hash(a, b := 0, c := 0) AS hash(a, b, c) % 2")
    weak = dataclasses.replace(duckdb, equality_hash="weak_hash",
                               anonymous_functions=duckdb.anonymous_functions | {"weak_hash"})
    for by_code in (True, False):
        found = run_gate(adult_engine, privacy_gate_sql(problem, 0.1, weak, by_code=by_code), "adult_anon2")
        assert found == [(UNDECIDED,)]


def test_classes_are_keyed_by_their_code_unless_a_statistic_reads_the_values(adult_dir):
    """A population table's classes are counted by generalizing its quasi-identifiers' values, so with
    k-map over a population the coded one gate keeps the decoded values as the class keys."""
    plain, _ = gate_problem(spec_from_dict(two_attribute_spec(adult_dir)))
    assert classes_by_code(plain)
    d = two_attribute_spec(adult_dir)
    d["privacy"].append({"k_map": {"k": 3, "population": "adult"}})
    with_population, _ = gate_problem(spec_from_dict(d))
    assert not classes_by_code(with_population)
    assert '"__sa_decoded"' not in privacy_gate_sql(with_population, 0.1, profile("duckdb"))
