"""`sqlanon dbt` on the real dbt: dbt-core with dbt-duckdb builds a dbt project on Adult's first rows.

The project (tests/dbt/project, copied to a temporary folder) reads Adult from a DuckDB file as the
source `raw.adult`; `sqlanon dbt model` writes the anonymized model `adult_anon` from a spec with a
search, and its gates; `sqlanon dbt install` adds sqlanon's dbt package. Beside it, `adult_raw` (the
raw rows) and `adult_broken` (the anonymized rows, damaged) carry the same gates, and `downstream`
reads `adult_broken`. One `dbt build` runs them all; the tests read its run_results.json and its log.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import duckdb
import pytest

from sqlanon import api
from sqlanon.cli.main import main
from sqlanon.outputs.dbt.files import header_values
from tests.conftest import ADULT
from tests.dbt.dbt_run import (
    QIS,
    ROWS,
    K,
    applied_spec_text,
    check_build,
    dbt,
    gate_message,
    generate,
    install_and_build,
    new_project,
    rare_values_ending,
    require_dbt,
    spec_text,
)

pytestmark = pytest.mark.dbt

SOURCE = "{table: adult, database: adult.duckdb}"
PROFILE = """sqlanon_adult:
  target: dev
  outputs:
    dev: {{type: duckdb, path: "{project}/adult.duckdb", threads: 1}}
"""


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> tuple[Path, subprocess.CompletedProcess[str]]:
    """The project generated, installed and built once; the build's result."""
    if not ADULT.exists():
        pytest.skip(f"real data not available at {ADULT}")
    require_dbt("duckdb")
    project = new_project(tmp_path_factory.mktemp("dbt"), PROFILE)
    with duckdb.connect(str(project / "adult.duckdb")) as con:
        con.execute("CREATE TABLE adult AS SELECT * FROM read_csv(?, delim=';', header=true, "
                    f"all_varchar=true) LIMIT {ROWS}", [str(ADULT / "adult.csv")])
    (project / "spec.yml").write_text(spec_text(ADULT, SOURCE))
    return project, install_and_build(project)


def test_the_generated_model_has_the_rows_of_apply(built):
    project, _ = built
    levels = header_values((project / "models" / "adult_anon.sql").read_text())[1]
    (project / "applied.yml").write_text(applied_spec_text(spec_text(ADULT, SOURCE), levels))
    api.apply(str(project / "applied.yml"))
    with duckdb.connect(str(project / "adult.duckdb")) as con:
        built_rows = con.execute("SELECT * FROM adult_anon ORDER BY ALL").fetchall()
        # the model writes the declared attributes (the columns are unknown when it is generated);
        # apply also copies the others
        applied = con.execute('SELECT sex, age, race, education, "salary-class" FROM adult_applied '
                              "ORDER BY ALL").fetchall()
        masked = con.execute("SELECT count(*) FROM adult_anon WHERE sex = '*'").fetchone()[0]
        view = con.execute("SELECT * FROM adult_anon_view ORDER BY ALL").fetchall()
    assert len(built_rows) == ROWS and 0 < masked <= 0.05 * ROWS
    assert built_rows == applied == view


def test_the_gates_pass_on_the_model_and_fail_on_raw_and_broken_rows(built):
    project, build = built
    check_build(project, build)


def test_the_gates_fail_on_the_raw_table_naming_the_worst_class(built):
    project, build = built
    with duckdb.connect(str(project / "adult.duckdb"), read_only=True) as con:
        sizes = con.execute('SELECT count(*) AS n FROM adult GROUP BY sex, age, race, education').fetchall()
    small = [n for (n,) in sizes if n < K]
    message = gate_message(build.stdout, "adult_raw", f"k_anonymity (k={K})")
    assert f": {len(small)} classes fail; the worst, (sex=" in message
    assert message.endswith(f"), has {min(small)} rows")
    distinct = gate_message(build.stdout, "adult_raw", "l_diversity (attribute=salary-class, l=2")
    assert "DistinctCount(salary-class)=1" in distinct
    entropy = gate_message(build.stdout, "adult_raw", "l_diversity (attribute=salary-class, l=1.5, "
                                                      "variant=entropy)")
    assert "; the worst, (sex=" in entropy and "age=" in entropy and "race=" not in entropy
    gate_message(build.stdout, "adult_raw", "t_closeness")


def test_the_gates_name_the_broken_model_and_its_worst_class(built):
    project, build = built
    with duckdb.connect(str(project / "adult.duckdb"), read_only=True) as con:
        kept = con.execute("SELECT count(*) FROM adult_broken WHERE sex <> '*'").fetchone()[0]
    message = gate_message(build.stdout, "adult_broken", "the suppression limit")
    assert f": {ROWS - kept} of {ROWS} source rows are suppressed, more than the limit 0.05 allows (150)" \
        in message
    assert message.endswith("(150)")
    assert gate_message(build.stdout, "adult_broken", f"k_anonymity (k={K})").endswith("has 1 rows")


def test_check_names_a_stale_model(built, capsys):
    project, _ = built
    model = project / "models" / "adult_anon.sql"
    assert generate(project, "--check") == 0
    spec = project / "spec.yml"
    spec.write_text(spec_text(ADULT, SOURCE, k=K + 1))
    try:
        assert generate(project, "--check") == 1
        assert f"stale: {model} was generated from another version of" in capsys.readouterr().err
    finally:
        spec.write_text(spec_text(ADULT, SOURCE))
    original = model.read_text()
    model.write_text(original.replace("FROM", "from", 1))
    try:
        assert generate(project, "--check") == 1
        assert f"stale: {model} differs from what `sqlanon dbt model spec.yml" in capsys.readouterr().err
    finally:
        model.write_text(original)


def test_refusals_at_build_time(built):
    """One more build: the anonymized model made incremental; a model whose levels leave more rows in
    failing classes than the suppression limit allows; a generic test whose arguments `sqlanon dbt
    gates` has not seen."""
    project, _ = built
    model = project / "models" / "adult_anon.sql"
    original = model.read_text()
    model.write_text(original.replace("materialized='table'", "materialized='incremental'"))
    over = project / "over.yml"
    over.write_text(applied_spec_text(spec_text(ADULT, SOURCE), dict.fromkeys(QIS, 0)))
    assert main(["dbt", "model", str(over), "--project", str(project), "--source", "raw.adult",
                 "--name", "adult_over"]) == 0
    copy = project / "models" / "adult_raw_copy.sql"
    copy.write_text("select * from {{ ref('adult_raw') }}\n")
    unseen = project / "models" / "unseen.yml"
    unseen.write_text("version: 2\nmodels:\n  - name: adult_raw_copy\n    data_tests:\n"
                      "      - sqlanon.k_anonymity: {arguments: {quasi_identifiers: [sex], k: 2}}\n")
    outliers = api.check(str(over)).as_dict()["outlier_rows"]
    try:
        run = dbt(project, "build", "--select", "adult_anon", "adult_raw_copy", "adult_over")
    finally:
        model.write_text(original)
        for path in (unseen, copy, over, *project.rglob("*adult_over*")):
            path.unlink()
    assert run.returncode == 1
    assert "Compilation Error in model adult_anon" in run.stdout
    assert ("sqlanon: adult_anon is an anonymized model and cannot be materialized incrementally: rows "
            "added to an existing table can leave earlier classes smaller") in run.stdout
    assert "Runtime Error in model adult_over" in run.stdout
    assert (f"sqlanon: not anonymous: {outliers} rows are in classes that fail the privacy models, more "
            f"than the suppression limit 0.05 allows of {ROWS} rows") in run.stdout
    assert ('sqlanon.k_anonymity on "adult"."main"."adult_raw_copy": no SQL was generated for the arguments '
            '{"k": 2, "quasi_identifiers": ["sex"]}; run `sqlanon dbt gates --project .`') in run.stdout


def test_a_view_with_a_rare_value_fails_naming_the_model_the_gate_and_the_rarest_value(built):
    """adult_rare_view adds the youngest raw row to the anonymized view: its values are rare among the
    generalized ones."""
    project, build = built
    with duckdb.connect(str(project / "adult.duckdb"), read_only=True) as con:
        ending = rare_values_ending(con, "adult_rare_view")
    assert gate_message(build.stdout, "adult_rare_view", f"no_rare_values (k={K})").endswith(ending)
