"""The dbt project the dbt tests build (tests/dbt/project, copied to a temporary folder) and how they
run dbt: from this interpreter's environment, offline (no usage statistics, no version check)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from sqlanon.cli.main import main

ROWS = 3000
"""Adult's first rows the project reads."""
TEMPLATE = Path(__file__).parent / "project"
QIS = ["sex", "age", "race", "education"]
K = 5


def spec_text(adult_dir: Path, source: str, k: int = K) -> str:
    """The spec of `adult_anon`: a search, three privacy models, masked suppression."""

    def qi(name: str) -> str:
        return (f"  {name}: {{role: quasi_identifier, hierarchy: "
                f"{{csv: {adult_dir / f'adult_hierarchy_{name}.csv'}}}}}\n")

    return (f"source: {source}\n"
            "attributes:\n" + "".join(qi(q) for q in QIS) + "  salary-class: {role: sensitive}\n"
            "privacy:\n"
            f"  - k_anonymity: {{k: {k}}}\n"
            "  - l_diversity: {attribute: salary-class, l: 2}\n"
            "  - t_closeness: {attribute: salary-class, t: 0.3}\n"
            "transformation: {search: optimal, suppression_limit: 0.05, suppressed: mask}\n"
            "output: {name: adult_anon}\n")


def applied_spec_text(spec: str, levels: dict[str, int]) -> str:
    """``spec`` with the levels a generated model recorded, writing `adult_applied`."""
    spec = spec.replace("search: optimal, ", "levels: " + json.dumps(levels) + ", ")
    return spec.replace("output: {name: adult_anon}", "output: {name: adult_applied}")


def require_dbt(adapter: str) -> None:
    pytest.importorskip(f"dbt.adapters.{adapter}",
                        reason=f"dbt-{adapter} is not installed (sqlanon's dbt extra)")


def new_project(folder: Path, profile: str) -> Path:
    project = folder / "project"
    shutil.copytree(TEMPLATE, project)
    (project / "profiles.yml").write_text(profile.format(project=project))
    return project


def dbt(project: Path, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DBT_SEND_ANONYMOUS_USAGE_STATS": "false"}
    # dbt's console script, run by this interpreter wherever pip put the script
    command = [sys.executable, "-c", "import sys; from dbt.cli.main import cli; sys.exit(cli())", *args,
               "--project-dir", str(project),
               "--profiles-dir", str(project), "--no-version-check", "--no-use-colors"]
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=300, cwd=cwd)


def generate(project: Path, *extra: str) -> int:
    """`sqlanon dbt model` of the project's spec, reading the source `raw.adult`; a gate per privacy
    model (the project's YAML puts them on other models) unless ``extra`` asks for the one gate."""
    form = [] if "--one-gate" in extra else ["--separate-gates"]
    return main(["dbt", "model", str(project / "spec.yml"), "--project", str(project),
                 "--source", "raw.adult", *extra, *form])


def install_and_build(project: Path) -> subprocess.CompletedProcess[str]:
    """sqlanon's package installed, the model generated (and again as a view, and its gates as one
    test `sqlanon_adult_one_privacy`), the generic tests' SQL compiled, `dbt deps`, then `dbt build`."""
    assert main(["dbt", "install", "--project", str(project)]) == 0
    assert generate(project) == 0
    assert generate(project, "--name", "adult_anon_view", "--materialized", "view") == 0
    assert generate(project, "--name", "adult_one", "--gates-only", "--one-gate") == 0
    assert main(["dbt", "gates", "--project", str(project), "--profiles-dir", str(project)]) == 0
    deps = dbt(project, "deps")
    assert deps.returncode == 0, deps.stdout + deps.stderr
    return dbt(project, "build")


def statuses(project: Path) -> dict[str, str]:
    """Node name (a test's name ends with its model's) -> status, from dbt's run_results.json."""
    results = json.loads((project / "target" / "run_results.json").read_text())["results"]
    return {r["unique_id"].split(".")[2]: r["status"] for r in results}


def gate_status(status: dict[str, str], gate: str, model: str) -> str:
    return status[next(n for n in status if n.startswith(f"sqlanon_adult_anon_{gate}_{model}_"))]


def gate_message(log: str, model: str, privacy: str) -> str:
    found = re.findall(rf"sqlanon: privacy gate failed: model {model} fails {re.escape(privacy)}.*", log)
    assert len(set(found)) == 1, log  # a spec's gate and a generic test may say the same
    return found[0]


def check_build(project: Path, build: subprocess.CompletedProcess[str]) -> None:
    """What every adapter's build must show: the model built, its gates passing, the gates failing on
    the raw rows and on the broken model, and the model downstream of the broken one skipped."""
    status = statuses(project)
    assert status["adult_anon"] == "success", build.stdout
    assert status["adult_anon_view"] == "success", build.stdout
    for gate in ("k_anonymity", "l_diversity", "t_closeness", "suppression_limit"):
        assert gate_status(status, gate, "adult_anon") == "pass"
    view_gates = {}
    for node, result in status.items():
        gate, _, model = node.removeprefix("sqlanon_adult_anon_view_").partition("_adult_")
        if node.startswith("sqlanon_adult_anon_view_") and model.startswith("anon_view"):
            view_gates[gate] = result
    # a view re-reads its live source: its gates add no_rare_values
    assert view_gates == dict.fromkeys(["k_anonymity", "l_diversity", "t_closeness", "suppression_limit",
                                        "no_rare_values"], "pass")
    assert gate_status(status, "view_no_rare_values", "adult_rare_view") == "fail"
    for gate in ("k_anonymity", "l_diversity", "t_closeness"):
        assert gate_status(status, gate, "adult_raw") == "fail"
    for gate in ("k_anonymity", "l_diversity", "suppression_limit"):
        assert gate_status(status, gate, "adult_broken") == "fail"
    generic = {n: s for n, s in status.items() if n.startswith(("sqlanon_k_anonymity", "sqlanon_l_diversity",
                                                                   "sqlanon_t_closeness",
                                                                   "sqlanon_suppression_limit",
                                                                   "sqlanon_no_rare_values"))}
    assert sorted((n.split("_adult_")[1].split("_")[0], s) for n, s in generic.items()) == \
        [("rare", "fail"), ("raw", "fail"), ("raw", "fail")] + [("released", "pass")] * 5
    one = {n.split("_adult_")[2].split("_")[0]: s for n, s in status.items()
           if n.startswith("sqlanon_adult_one_privacy_")}
    assert one == {"raw": "fail", "released": "pass"}
    assert status["downstream"] == "skipped"
    assert build.returncode == 1


def rare_values_ending(con, relation: str) -> str:
    """How the no_rare_values message on ``relation`` ends, counted by DuckDB on its own: each QI's
    values that are neither '*' nor NULL and are in fewer than K rows, the rarest first."""
    counts = [(n, i, q, v) for i, q in enumerate(QIS) for v, n in con.execute(
        f'SELECT "{q}", count(*) FROM "{relation}" WHERE "{q}" IS NOT NULL AND "{q}" <> \'*\' '
        f'GROUP BY "{q}"').fetchall()]
    rare = sorted(c for c in counts if c[0] < K)
    assert rare  # the relation holds a rare value
    n, _, q, v = rare[0]
    return (f": {len(rare)} values of the quasi-identifiers are in fewer than {K} rows; the worst, {q}={v}, "
            f"is in {n} rows")
