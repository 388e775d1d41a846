"""`sqlanon dbt` on the real dbt: dbt-core with dbt-duckdb builds a dbt project on Adult's first rows.

The project (tests/dbt/project, copied to a temporary folder) reads Adult from a DuckDB file as the
source `raw.adult`; `sqlanon dbt model` writes the anonymized model `adult_anon` from a spec with a
search, and its gates; `sqlanon dbt install` adds sqlanon's dbt package. Beside it, `adult_raw` (the
raw rows) and `adult_broken` (the anonymized rows, damaged) carry the same gates, and `downstream`
reads `adult_broken`. One `dbt build` runs them all; the tests read its run_results.json and its log.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from sqlanon import api
from sqlanon.cli.main import main
from sqlanon.outputs.dbt.files import header_values
from tests.conftest import ADULT

pytestmark = pytest.mark.dbt

ROWS = 3000
TEMPLATE = Path(__file__).parent / "project"
QIS = ["sex", "age", "race", "education"]
K = 5


def spec_text(adult_dir: Path, k: int = K) -> str:
    def qi(name: str) -> str:
        return (f"  {name}: {{role: quasi_identifier, hierarchy: "
                f"{{csv: {adult_dir / f'adult_hierarchy_{name}.csv'}}}}}\n")

    return ("source: {table: adult, database: adult.duckdb}\n"
            "attributes:\n" + "".join(qi(q) for q in QIS) + "  salary-class: {role: sensitive}\n"
            "privacy:\n"
            f"  - k_anonymity: {{k: {k}}}\n"
            "  - l_diversity: {attribute: salary-class, l: 2}\n"
            "  - t_closeness: {attribute: salary-class, t: 0.3}\n"
            "transformation: {search: optimal, suppression_limit: 0.05, suppressed: mask}\n"
            "output: {name: adult_anon}\n")


def dbt(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """dbt from this interpreter's environment, offline: no usage statistics, no version check."""
    env = {**os.environ, "DBT_SEND_ANONYMOUS_USAGE_STATS": "false",
           "SQLANON_DBT_DATABASE": str(project / "adult.duckdb")}
    command = [str(Path(sys.executable).parent / "dbt"), *args, "--project-dir", str(project),
               "--profiles-dir", str(project), "--no-version-check", "--no-use-colors"]
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)


def statuses(project: Path) -> dict[str, str]:
    """Node name (a test's name with its model) -> status, from dbt's run_results.json."""
    results = json.loads((project / "target" / "run_results.json").read_text())["results"]
    return {r["unique_id"].split(".")[2]: r["status"] for r in results}


def generate(project: Path, *extra: str) -> int:
    return main(["dbt", "model", str(project / "spec.yml"), "--project", str(project),
                 "--source", "raw.adult", *extra])


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> tuple[Path, subprocess.CompletedProcess[str]]:
    """The project generated, installed and built once; the build's result."""
    if not ADULT.exists():
        pytest.skip(f"real data not available at {ADULT}")
    pytest.importorskip("dbt.adapters.duckdb", reason="dbt-duckdb is not installed (the dbt extra)")
    project = tmp_path_factory.mktemp("dbt") / "project"
    shutil.copytree(TEMPLATE, project)
    with duckdb.connect(str(project / "adult.duckdb")) as con:
        con.execute("CREATE TABLE adult AS SELECT * FROM read_csv(?, delim=';', header=true, "
                    f"all_varchar=true) LIMIT {ROWS}", [str(ADULT / "adult.csv")])
    (project / "spec.yml").write_text(spec_text(ADULT))
    assert main(["dbt", "install", "--project", str(project)]) == 0
    assert generate(project) == 0
    deps = dbt(project, "deps")
    assert deps.returncode == 0, deps.stdout + deps.stderr
    return project, dbt(project, "build")


def gate_message(log: str, model: str, privacy: str) -> str:
    found = re.findall(rf"sqlanon: privacy gate failed: model {model} fails {re.escape(privacy)}.*", log)
    assert len(found) == 1, log
    return found[0]


def test_the_generated_model_has_the_rows_of_apply(built):
    project, _ = built
    levels = header_values((project / "models" / "adult_anon.sql").read_text())[1]
    spec = spec_text(ADULT).replace("search: optimal, ", "levels: " + json.dumps(levels) + ", ")
    spec = spec.replace("output: {name: adult_anon}", "output: {name: adult_applied}")
    (project / "applied.yml").write_text(spec)
    api.apply(str(project / "applied.yml"))
    with duckdb.connect(str(project / "adult.duckdb")) as con:
        built_rows = con.execute("SELECT * FROM adult_anon ORDER BY ALL").fetchall()
        # the model writes the declared attributes (the columns are unknown when it is generated);
        # apply also copies the others
        applied = con.execute('SELECT sex, age, race, education, "salary-class" FROM adult_applied '
                              "ORDER BY ALL").fetchall()
        masked = con.execute("SELECT count(*) FROM adult_anon WHERE sex = '*'").fetchone()[0]
    assert len(built_rows) == ROWS and 0 < masked <= 0.05 * ROWS
    assert built_rows == applied


def test_every_gate_passes_on_the_generated_model(built):
    project, _ = built
    status = statuses(project)
    assert status["adult_anon"] == "success"
    gates = {name: s for name, s in status.items() if name.endswith("_adult_anon_")
             or name.startswith("sqlanon_adult_anon_suppression_limit_adult_anon_")}
    assert sorted(gates.values()) == ["pass"] * 4, gates


def test_the_gates_fail_on_the_raw_table_naming_the_worst_class(built):
    project, build = built
    status = statuses(project)
    for gate in ("k_anonymity", "l_diversity", "t_closeness"):
        assert status[f"sqlanon_adult_anon_{gate}_adult_raw_"] == "fail"
    with duckdb.connect(str(project / "adult.duckdb"), read_only=True) as con:
        sizes = con.execute('SELECT count(*) AS n FROM adult GROUP BY sex, age, race, education').fetchall()
    small = [n for (n,) in sizes if n < K]
    message = gate_message(build.stdout, "adult_raw", f"k_anonymity (k={K})")
    assert f": {len(small)} classes fail; the worst, (sex=" in message
    assert message.endswith(f"), has {min(small)} rows")
    assert "DistinctCount(salary-class)=1" in gate_message(build.stdout, "adult_raw", "l_diversity")
    gate_message(build.stdout, "adult_raw", "t_closeness")


def test_a_broken_model_fails_its_gates_and_stops_downstream(built):
    project, build = built
    status = statuses(project)
    for gate in ("k_anonymity", "l_diversity", "suppression_limit"):
        assert status[next(n for n in status if n.startswith(f"sqlanon_adult_anon_{gate}_adult_broken_"))] \
            == "fail"
    assert status["downstream"] == "skipped"
    assert build.returncode == 1
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
    spec.write_text(spec_text(ADULT, k=K + 1))
    try:
        assert generate(project, "--check") == 1
        assert f"stale: {model} was generated from another version of" in capsys.readouterr().err
    finally:
        spec.write_text(spec_text(ADULT))
    original = model.read_text()
    model.write_text(original.replace("FROM", "from", 1))
    try:
        assert generate(project, "--check") == 1
        assert f"stale: {model} differs from what `sqlanon dbt model spec.yml" in capsys.readouterr().err
    finally:
        model.write_text(original)


def test_an_incremental_anonymized_model_is_refused(built):
    project, _ = built
    model = project / "models" / "adult_anon.sql"
    original = model.read_text()
    model.write_text(original.replace("materialized='table'", "materialized='incremental'"))
    try:
        run = dbt(project, "build", "--select", "adult_anon")
    finally:
        model.write_text(original)
    assert run.returncode == 1
    assert "Compilation Error in model adult_anon" in run.stdout
    assert ("sqlanon: adult_anon is an anonymized model and cannot be materialized incrementally: rows "
            "added to an existing table can leave earlier classes smaller") in run.stdout
