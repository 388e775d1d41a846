"""`sqlanon dbt` without running dbt: what it reads from the project, what it writes, and its one-line
errors. The files it writes are built by dbt in test_dbt_build.py."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from sqlanon.cli.main import main
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
    assert run(project, "--target", "pg", "--ref", "stg_people", "--materialized", "view") == 0
    model = (project / "dbt_models" / "people_anon.sql").read_text()
    assert "for postgres" in model.splitlines()[0] and "{{ ref('stg_people') }}" in model
    assert "materialized='view'" in model and "sqlanon: not anonymous" not in model
    gates = (project / "macros" / "sqlanon_people_anon_gates.sql").read_text()
    for prefix in ("default", "duckdb", "postgres"):
        assert f"{{% macro {prefix}__sqlanon_people_anon_k_anonymity_sql(model) %}}" in gates
    properties = yaml.safe_load((project / "dbt_models" / "people_anon.yml").read_text())
    assert properties["models"][0]["data_tests"] == [
        "sqlanon_people_anon_k_anonymity",
        {"sqlanon_people_anon_suppression_limit": {"arguments": {"source_model": "ref('stg_people')"}}}]


def test_gates_only_writes_the_gates_for_a_model_of_ones_own(project):
    assert run(project, "--gates-only", "--name", "patients", "--ref", "stg_people") == 0
    assert sorted(p.name for p in project.rglob("*.sql")) == ["sqlanon_patients_gates.sql"]
    gates = (project / "macros" / "sqlanon_patients_gates.sql").read_text()
    assert "{% test sqlanon_patients_k_anonymity(model) %}" in gates
    assert "--gates-only --name patients --ref stg_people" in gates.splitlines()[1]
    assert run(project, "--gates-only", "--name", "patients", "--ref", "stg_people", "--check") == 0


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
