"""`sqlanon dbt` without running dbt: what it reads from the project, what it writes, and its one-line
errors. The files it writes are built by dbt in test_dbt_build.py."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from sqlanon.cli.main import main
from sqlanon.outputs.dbt.generic import package_tests_text
from sqlanon.outputs.dbt.project import package_folder
from tests.outputs.people import people_spec

PROFILES = {"people": {"target": "dev", "outputs": {"dev": {"type": "duckdb", "path": "x.duckdb"},
                                                    "pg": {"type": "postgres"},
                                                    "odd": {"type": "oracle"}}}}


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    (tmp_path / "dbt_project.yml").write_text(yaml.safe_dump(
        {"name": "people", "profile": "people", "config-version": 2, "model-paths": ["dbt_models"]}))
    (tmp_path / "profiles.yml").write_text(yaml.safe_dump(PROFILES))
    (tmp_path / "spec.yml").write_text(yaml.safe_dump(people_spec(output={"name": "people_anon"})))
    return tmp_path


def run(project: Path, *args: str) -> int:
    return main(["dbt", "model", str(project / "spec.yml"), "--project", str(project),
                 "--profiles-dir", str(project), *args])


def test_the_model_is_compiled_for_the_profiles_adapter(project):
    assert run(project) == 0
    model = (project / "dbt_models" / "people_anon.sql").read_text()
    assert model.splitlines()[0].endswith("spec.yml for duckdb: do not edit; regenerate with")
    assert "{{ config(materialized='table') }}" in model and "{{ ref('people') }}" in model
    assert "sqlanon: not anonymous" in model and not model.rstrip().endswith(";")
    assert run(project, "--target", "pg", "--ref", "stg_people", "--materialized", "view",
               "--separate-gates") == 0
    model = (project / "dbt_models" / "people_anon.sql").read_text()
    assert "for postgres" in model.splitlines()[0] and "{{ ref('stg_people') }}" in model
    assert "materialized='view'" in model and "sqlanon: not anonymous" not in model
    gates = (project / "macros" / "sqlanon_people_anon_gates.sql").read_text()
    for prefix in ("default", "duckdb", "postgres"):
        assert f"{{% macro {prefix}__sqlanon_people_anon_k_anonymity_sql(model) %}}" in gates
    properties = yaml.safe_load((project / "dbt_models" / "people_anon.yml").read_text())
    assert properties["models"][0]["data_tests"] == [  # a view's gates add the rare-value gate
        "sqlanon_people_anon_k_anonymity",
        {"sqlanon_people_anon_suppression_limit": {"arguments": {"source_model": "ref('stg_people')"}}},
        "sqlanon_people_anon_no_rare_values"]
    assert "{% test sqlanon_people_anon_no_rare_values(model) %}" in gates
    assert "fails no_rare_values (k=" in gates


def test_one_gate_wires_one_test_for_every_model_and_the_limit(project):
    assert run(project, "--one-gate") == 0
    properties = yaml.safe_load((project / "dbt_models" / "people_anon.yml").read_text())
    assert properties["models"][0]["data_tests"] == [
        {"sqlanon_people_anon_privacy": {"arguments": {"source_model": "ref('people')"}}}]
    gates = (project / "macros" / "sqlanon_people_anon_gates.sql").read_text()
    assert "{% test sqlanon_people_anon_privacy(model, source_model) %}" in gates
    assert "sqlanon_people_anon_k_anonymity" not in gates
    assert "--one-gate" in gates.splitlines()[1] and run(project, "--one-gate", "--check") == 0


def test_the_one_gate_is_the_default_and_separate_gates_are_asked_for(project, capsys):
    assert run(project) == 0
    properties = yaml.safe_load((project / "dbt_models" / "people_anon.yml").read_text())
    assert properties["models"][0]["data_tests"] == [
        {"sqlanon_people_anon_privacy": {"arguments": {"source_model": "ref('people')"}}}]
    assert run(project, "--separate-gates") == 0
    properties = yaml.safe_load((project / "dbt_models" / "people_anon.yml").read_text())
    assert properties["models"][0]["data_tests"] == [
        "sqlanon_people_anon_k_anonymity",
        {"sqlanon_people_anon_suppression_limit": {"arguments": {"source_model": "ref('people')"}}}]
    gates = (project / "macros" / "sqlanon_people_anon_gates.sql").read_text()
    assert "sqlanon_people_anon_privacy" not in gates
    assert gates.splitlines()[1].endswith("--separate-gates #}")
    assert run(project, "--separate-gates", "--check") == 0 and run(project, "--check") == 1
    assert run(project, "--one-gate", "--separate-gates") == 2
    assert "not allowed with argument" in capsys.readouterr().err


def test_gates_only_writes_the_gates_for_a_model_of_ones_own(project):
    assert run(project, "--gates-only", "--name", "patients", "--ref", "stg_people", "--separate-gates") == 0
    assert sorted(p.name for p in project.rglob("*.sql")) == ["sqlanon_patients_gates.sql"]
    gates = (project / "macros" / "sqlanon_patients_gates.sql").read_text()
    assert "{% test sqlanon_patients_k_anonymity(model) %}" in gates
    assert "--gates-only --name patients --ref stg_people" in gates.splitlines()[1]
    assert run(project, "--gates-only", "--name", "patients", "--ref", "stg_people", "--separate-gates",
               "--check") == 0


def test_check_fails_on_a_missing_file_and_passes_after_writing(project, capsys):
    assert run(project, "--check") == 1
    err = capsys.readouterr().err
    assert "people_anon.sql differs from what `sqlanon dbt model spec.yml --project ." in err
    assert run(project) == 0
    assert run(project, "--check") == 0


@pytest.mark.parametrize(("args", "message"), [
    (["--target", "odd"], "profiles.yml: people.outputs.odd.type: adapter type 'oracle' has no sqlanon "
                          "dialect"),
    (["--target", "nowhere"], "profile 'people' has no output 'nowhere'"),
    (["--source", "people"], "--source takes SOURCE.TABLE, got 'people'"),
    (["--name", "people-anon"], "'people-anon' is not a dbt model name"),
    (["--ref", "x') }}{{ y"], "is not a dbt name this command writes"),
    (["--materialized", "incremental"], "argument --materialized: invalid choice: 'incremental'"),
])
def test_bad_input_is_one_line_naming_it(project, capsys, args, message):
    assert run(project, *args) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_a_folder_without_a_dbt_project_is_named(tmp_path, capsys):
    assert main(["dbt", "install", "--project", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert f"{tmp_path / 'dbt_project.yml'}: not found: give the folder of a dbt project" in err


def test_install_adds_the_package_once(project):
    (project / "packages.yml").write_text(yaml.safe_dump({"packages": [{"package": "dbt-labs/dbt_utils",
                                                                       "version": "1.3.0"}]}))
    assert main(["dbt", "install", "--project", str(project)]) == 0
    assert main(["dbt", "install", "--project", str(project)]) == 0
    packages = yaml.safe_load((project / "packages.yml").read_text())["packages"]
    assert packages[0] == {"package": "dbt-labs/dbt_utils", "version": "1.3.0"}
    (local,) = packages[1:]
    assert yaml.safe_load((Path(local["local"]) / "dbt_project.yml").read_text())["name"] == "sqlanon"


def test_the_packages_generic_tests_are_those_of_the_privacy_models():
    """macros/generic_tests.sql is generated from the models' parameters; regenerate it after adding one."""
    assert (package_folder() / "macros" / "generic_tests.sql").read_text() == package_tests_text()


def write_tests(project: Path, tests: list) -> None:
    (project / "dbt_models").mkdir(exist_ok=True)
    (project / "dbt_models" / "gated.yml").write_text(yaml.safe_dump(
        {"version": 2, "models": [{"name": "people", "data_tests": tests}]}))


def test_gates_compiles_each_distinct_use_once_and_check_sees_a_change(project, capsys):
    k = {"sqlanon.k_anonymity": {"arguments": {"quasi_identifiers": ["age", "zip"], "k": 2}}}
    old_style = {"sqlanon.k_anonymity": {"quasi_identifiers": ["age", "zip"], "k": 2}}
    write_tests(project, [k, old_style, "not_null", {"accepted_values": {"values": [1]}}])
    assert main(["dbt", "gates", "--project", str(project), "--profiles-dir", str(project)]) == 0
    assert "(1 sqlanon test)" in capsys.readouterr().out
    macros = (project / "macros" / "sqlanon_generic_gates.sql").read_text()
    assert macros.count("{% macro sqlanon_gate_") == 1 and "{% macro postgres__sqlanon_gate_" in macros
    assert main(["dbt", "gates", "--project", str(project), "--profiles-dir", str(project), "--check"]) == 0
    write_tests(project, [k, {"sqlanon.k_anonymity": {"arguments": {"quasi_identifiers": ["age"], "k": 3}}}])
    assert main(["dbt", "gates", "--project", str(project), "--profiles-dir", str(project), "--check"]) == 1
    err = capsys.readouterr().err
    assert "sqlanon_generic_gates.sql differs from what `sqlanon dbt gates --project .`" in err


@pytest.mark.parametrize(("test", "message"), [
    ({"sqlanon.k_anonymity": {"arguments": {"quasi_identifiers": "age", "k": 2}}},
     "gated.yml: sqlanon.k_anonymity.quasi_identifiers: must be a list of column names"),
    ({"sqlanon.k_anonymity": {"arguments": {"quasi_identifiers": ["age"], "kk": 2}}},
     "unknown parameter 'kk' for k_anonymity"),
    ({"sqlanon.suppression_limit": {"arguments": {"quasi_identifiers": ["age"], "share": 2}}},
     "sqlanon.suppression_limit.share: share must be a number in [0, 1], got 2"),
    ({"sqlanon.t_closeness": {"arguments": {"quasi_identifiers": ["age"], "attribute": "disease", "t": 0.2,
                                            "distance": "hierarchical"}}},
     "the hierarchical distance needs the attribute's hierarchy"),
    ({"sqlanon.no_rare_values": {"arguments": {"quasi_identifiers": ["age"], "k": 0}}},
     "sqlanon.no_rare_values.k: k must be a whole number >= 1, got 0"),
    ({"sqlanon.no_rare_values": {"arguments": {"quasi_identifiers": ["age"], "k": 2, "l": 2}}},
     "unknown parameter 'l' for no_rare_values"),
])
def test_bad_arguments_are_one_line_naming_the_file(project, capsys, test, message):
    write_tests(project, [test])
    assert main(["dbt", "gates", "--project", str(project), "--profiles-dir", str(project)]) == 2
    err = capsys.readouterr().err
    assert message in err and "gated.yml" in err and err.count("\n") == 1


MICRO = {"source": {"table": "people"}, "attributes": {"age": "quasi_identifier"},
         "transformation": {"method": "microaggregation", "algorithm": "mdav", "k": 3}}
DP = {"source": {"table": "people"}, "attributes": {"age": {"role": "sensitive"}},
      "transformation": {"method": "noise", "mechanism": "dp_microaggregation", "attributes": ["age"],
                         "k": 5, "epsilon": 1, "bounds": {"age": [0, 120]}, "dataset": "people",
                         "budget_epsilon": 2}}


def test_a_method_sql_cannot_express_gets_a_python_model(project):
    (project / "spec.yml").write_text(yaml.safe_dump(MICRO))
    assert run(project, "--name", "people_micro", "--source", "raw.people") == 0
    model = (project / "dbt_models" / "people_micro.py").read_text()
    assert model.splitlines()[0] == ("# Generated by sqlanon from the spec spec.yml: do not edit; "
                                     "regenerate with")
    assert "return apply(session, SPEC, dbt.source('raw', 'people'))" in model
    assert 'SPEC = "spec.yml"' in model and "release_key" not in model
    assert not (project / "dbt_models" / "people_micro.sql").exists()
    compile(model, "people_micro.py", "exec")
    assert run(project, "--name", "people_micro", "--source", "raw.people", "--check") == 0
    (project / "spec.yml").write_text(yaml.safe_dump({**MICRO, "transformation": {
        **MICRO["transformation"], "k": 4}}))
    assert run(project, "--name", "people_micro", "--source", "raw.people", "--check") == 1


def test_a_charged_dp_release_model_reads_the_run_key(project):
    (project / "spec.yml").write_text(yaml.safe_dump(DP))
    assert run(project, "--name", "people_dp") == 0
    model = (project / "dbt_models" / "people_dp.py").read_text()
    assert 'key = release_key(dbt.this, dbt.config.get("sqlanon_run_key"))' in model
    assert "return apply(session, SPEC, dbt.ref('people'), release_key=key)" in model
    compile(model, "people_dp.py", "exec")


@pytest.mark.parametrize(("args", "message"), [
    (("--target", "pg"), "runs on dbt-duckdb only (the profile's adapter is postgres)"),
    (("--materialized", "view"), "is materialized as a table: leave out --materialized"),
])
def test_a_python_model_sqlanon_cannot_run_is_refused(project, capsys, args, message):
    (project / "spec.yml").write_text(yaml.safe_dump(MICRO))
    assert run(project, *args) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1
    assert not (project / "dbt_models").exists() or not any((project / "dbt_models").iterdir())
