"""dbt Python models on the real dbt: dbt-core with dbt-duckdb runs `def model(dbt, session)` models
that call `sqlanon.dbt` on the adapter's own connection (tests/dbt/python_project).

One `dbt build` builds a generalization with a search, a microaggregation, a noise release, a DP
microdata release and a DP histogram, the last two charged to one ledger dataset, and a model after
them that fails on purpose; a retry of the failed run (same run key) builds them again, with one
more DP release that asks for more than the budget has left and fails.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from decimal import Decimal
from pathlib import Path

import duckdb
import pytest

from sqlanon import api
from tests.conftest import ADULT
from tests.dbt.dbt_run import ROWS, dbt, require_dbt, spec_text, statuses

pytestmark = pytest.mark.dbt

TEMPLATE = Path(__file__).parent / "python_project"
PROFILE = """sqlanon_python:
  target: dev
  outputs:
    dev: {{type: duckdb, path: "{project}/warehouse.duckdb", threads: 1}}
"""
SPECS = {
    "micro.yml": "attributes:\n  age_years: quasi_identifier\n  sex: insensitive\n"
                 "transformation: {method: microaggregation, algorithm: mdav, k: 5}\n",
    "noise.yml": "attributes:\n  age_years: sensitive\n"
                 "transformation: {method: noise, mechanism: laplace, attributes: [age_years], epsilon: 1,\n"
                 "                 sensitivity: {age_years: 1}, bounds: {age_years: [0, 120]},\n"
                 "                 linkage: false}\n",
    "dp.yml": "attributes:\n  age_years: sensitive\n"
              "transformation: {method: noise, mechanism: dp_microaggregation, attributes: [age_years],\n"
              "                 k: 10, epsilon: 1, bounds: {age_years: [0, 120]}, dataset: adult,\n"
              "                 budget_epsilon: 2, linkage: false}\n",
}
PROBE = "SELECT age_years FROM adult_dp ORDER BY ALL"


def build(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return dbt(project, "build", *args, cwd=project)


def ledger(project: Path) -> tuple[Decimal, list[tuple[str, str]]]:
    with duckdb.connect(str(project / "warehouse.duckdb"), read_only=True) as con:
        spent = con.execute("SELECT epsilon_spent FROM sqlanon_privacy_budget WHERE dataset = 'adult'"
                            ).fetchone()[0]
        entries = con.execute("SELECT release_key, CAST(epsilon_charged AS VARCHAR) FROM "
                              "sqlanon_privacy_ledger ORDER BY spent_at").fetchall()
    return spent, entries


def rows(project: Path, query: str) -> list[tuple]:
    with duckdb.connect(str(project / "warehouse.duckdb"), read_only=True) as con:
        return con.execute(query).fetchall()


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict:
    """The three runs, each with the warehouse's state after it."""
    if not ADULT.exists():
        pytest.skip(f"real data not available at {ADULT}")
    require_dbt("duckdb")
    project = tmp_path_factory.mktemp("dbt_python") / "project"
    shutil.copytree(TEMPLATE, project)
    (project / "profiles.yml").write_text(PROFILE.format(project=project))
    (project / "specs").mkdir()
    (project / "specs" / "search.yml").write_text(spec_text(ADULT, "{table: adult}"))
    for name, text in SPECS.items():
        (project / "specs" / name).write_text(text)
    with duckdb.connect(str(project / "warehouse.duckdb")) as con:
        con.execute("CREATE TABLE adult AS SELECT * FROM read_csv(?, delim=';', header=true, "
                    f"all_varchar=true) LIMIT {ROWS}", [str(ADULT / "adult.csv")])
    out: dict = {"project": project}
    first = build(project, "--exclude", "adult_dp_more",
                  "--vars", json.dumps({"sqlanon_run_key": "r1", "fail_after_release": True}))
    out["first"] = (first, statuses(project), ledger(project), rows(project, PROBE),
                    rows(project, "SELECT * FROM adult_dp_counts ORDER BY ALL"))
    # the retry of the run, with one more release that the budget cannot hold
    retry = build(project, "--select", "adult_dp", "adult_dp_counts", "after_release", "adult_dp_more",
                  "--vars", json.dumps({"sqlanon_run_key": "r1"}))
    out["retry"] = (retry, statuses(project), ledger(project), rows(project, PROBE),
                    rows(project, "SELECT * FROM adult_dp_counts ORDER BY ALL"))
    return out


def test_python_models_build_with_sqlanon_on_the_adapter_connection(runs):
    project = runs["project"]
    build_result, status, *_ = runs["first"]
    log = build_result.stdout
    for name in ("adult_search", "adult_micro", "adult_noise", "adult_dp", "adult_dp_counts"):
        assert status[name] == "success", log
    assert status["after_release"] == "error" and build_result.returncode == 1, log
    # the search's model equals what sqlanon anonymize writes from the same spec outside dbt
    spec = project / "direct.yml"
    spec.write_text(spec_text(ADULT, f"{{table: adult, database: {project / 'warehouse.duckdb'}}}")
                    .replace("output: {name: adult_anon}", "output: {name: adult_direct}"))
    api.anonymize(str(spec))
    columns = "sex, age, race, education, \"salary-class\""
    searched = rows(project, f"SELECT {columns} FROM adult_search ORDER BY ALL")
    direct = rows(project, f"SELECT {columns} FROM adult_direct ORDER BY ALL")
    assert len(searched) == ROWS and searched == direct
    # microaggregation: every released age is shared by at least k = 5 rows, and means are kept
    groups = rows(project, "SELECT age_years, count(*) FROM adult_micro GROUP BY ALL")
    assert sum(n for _, n in groups) == ROWS and min(n for _, n in groups) >= 5
    (micro_mean, typed_mean), = rows(project, "SELECT (SELECT avg(age_years) FROM adult_micro), "
                                              "(SELECT avg(age_years) FROM adult_typed)")
    assert micro_mean == pytest.approx(typed_mean)
    # noise: every row kept, the ages perturbed
    (n, changed), = rows(project, "SELECT count(*), count(*) FILTER (n.age_years <> t.age_years) FROM "
                                  "adult_noise n POSITIONAL JOIN adult_typed t")
    assert n == ROWS and changed > ROWS / 2
    # no table of a run is left in the warehouse but the stored releases
    names = {r[0] for r in rows(project, "SELECT table_name FROM information_schema.tables")}
    assert not [t for t in names if t.startswith("__sqlanon")]
    assert len([t for t in names if t.startswith("sqlanon_release_")]) == 2


def test_a_run_charges_its_dp_releases_once(runs):
    _, _, (spent, entries), released, counts = runs["first"]
    # the microdata release (epsilon 1, substitution) and the histogram (0.25 under add/remove,
    # charged 0.5 on the substitution budget), each under the model's relation and the run key
    assert spent == Decimal("1.5")
    assert sorted((key.split("@")[1], float(e)) for key, e in entries) == [("r1", 0.5), ("r1", 1.0)]
    assert {key.split("@")[0] for key, _ in entries} == {'"warehouse"."main"."adult_dp"',
                                                          '"warehouse"."main"."adult_dp_counts"'}
    assert len(released) == ROWS and [k for k, _ in counts] == ["Female", "Male"]


def test_a_retry_of_a_failed_run_is_not_charged_again_and_gives_the_same_release(runs):
    _, _, first_ledger, first_released, first_counts = runs["first"]
    build_result, status, retry_ledger, released, counts = runs["retry"]
    assert status["adult_dp"] == status["adult_dp_counts"] == "success", build_result.stdout
    assert status["after_release"] == "success"
    assert retry_ledger == first_ledger
    assert released == first_released and counts == first_counts


def test_a_release_beyond_the_budget_fails_the_build(runs):
    build_result, status, retry_ledger, *_ = runs["retry"]
    assert build_result.returncode == 1 and status["adult_dp_more"] == "error"
    assert "would exceed the budget of dataset 'adult'" in build_result.stdout
    assert "Nothing was spent" in build_result.stdout
    assert retry_ledger == runs["first"][2]
    assert "adult_dp_more" not in {r[0] for r in rows(runs["project"],
                                                       "SELECT table_name FROM information_schema.tables")}
