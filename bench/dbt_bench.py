"""A generated dbt model and its privacy gates on Adult grown to N rows, against bare DuckDB.

The dbt project (made in ``--workdir``) reads the grown table ``adult_big`` as the source
``raw.adult_big`` through dbt-duckdb; ``sqlanon dbt model`` writes the anonymized table model
``adult_anon`` and its gates from the spec of ``bench/check_bench.py`` (7 quasi-identifiers at fixed
levels, k-anonymity, recursive (4,3)-diversity, ordered t-closeness, 2 % suppression, masked).

Measured, dbt start-up excluded (dbt's own timing of each node in ``target/run_results.json``):

* **model**: ``dbt run --select adult_anon`` against the baseline **bare SELECT**, the SELECT dbt
  compiled for the model (``target/compiled``) run by DuckDB as ``CREATE OR REPLACE TABLE ... AS``;
* **gates in dbt**: the sum of the gate tests' times of ``dbt test --select adult_anon``, and **gates'
  SQL**: the same gates' SELECTs run by DuckDB one after the other, against the baseline **GROUP
  BY**: ``SELECT <QIs>, count(*) FROM adult_anon GROUP BY <QIs>``; ``no_rare_values`` (the fifth gate,
  of a view) is timed on the same rows apart;
* **one gate**: the gates as one test (the default of ``sqlanon dbt model``; here ``--gates-only
  --one-gate`` on a view of the model), in dbt (with dbt's compile phase, in which the gate's SELECT
  runs, and its execute phase apart) and its SQL, against the same GROUP BY; **one gate on values**,
  its SQL grouping the model by the values rather than by their hash codes; **one gate read once**,
  its SQL as a view's gate has it (the codes and dictionaries read one CTE of the model);
* **GROUP BY in dbt**: the same GROUP BY as a singular dbt test on the gate's view (``tests/``), in a
  ``dbt test`` of its own, as the gate is: both are then the first query of their dbt process, read
  the model cold, and carry dbt's work per test. "one gate in dbt / GROUP BY in dbt" compares like
  with like; "one gate in dbt / GROUP BY" (the warm, bare baseline) is kept as before.

The model's own gates are written with ``--separate-gates``.

Every subject and baseline runs in each round (one warm-up round first), each baseline on its own
DuckDB connection with the threads and memory dbt's connection has; the one gate's SQL and the GROUP
BY are also timed in CPU seconds of this process (DuckDB's threads included), which a shared machine
distorts less than elapsed time. The script prints every round (each gate's SELECT too), the medians
and the ratios of the medians, and writes them to ``<workdir>/dbt_bench.json``.

Measured (``python -m bench.dbt_bench --rows 10000000 --runs 3 --adult-dir ../shared/data/adult``,
532 classes), four runs in one hour on a machine shared with other work (load average 13 to 17, 12
to 17, 15 falling to 7, 3 to 7; elapsed times vary by up to 2× between rounds), ratios of the medians
of each run:

==================================================  ======  ======  ======  ======
subject                                             run 1   run 2   run 3   run 4
==================================================  ======  ======  ======  ======
GROUP BY in dbt (s)                                 1.82    1.28    0.95    0.74
GROUP BY, bare and warm (s)                         1.73    0.98    1.05    0.58
one gate in dbt (s)                                 3.15    2.51    2.23    1.23
one gate in dbt / GROUP BY in dbt                   1.73    1.96    2.35    1.65
one gate in dbt / GROUP BY                          1.82    2.56    2.11    2.11
one gate's SQL / GROUP BY, CPU                      —       1.99    1.85    1.99
one gate read once, SQL / GROUP BY, CPU             —       2.11    2.23    2.12
one gate on values, SQL / GROUP BY                  2.03    2.78    2.03    3.08
gates in dbt (the 4 separate) / GROUP BY            3.32    4.51    4.98    6.60
model / bare SELECT                                 1.39    1.05    1.08    0.98
==================================================  ======  ======  ======  ======

The GROUP BY took 0.33 s of CPU in every run, the one gate's SQL 0.62 to 0.66 s (read once: 0.70 to
0.75 s). The one gate's dbt test spends nearly all its time compiling (its SELECT runs then; run 4:
compile 1.18 s, execute 0.04 s). Run 1 predates the CPU timing. docs/dbt.md ("Cost") has the earlier
figures and where the time goes; ``bench/dbt_tuple_check.py`` times, on this script's DuckDB file, the
exact ways to do without the gate's dictionary of the quasi-identifier tuples (each several times the
``GROUP BY``; the dictionary about one).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path

import duckdb

from bench.check_bench import EDUCATION_ORDER, LEVELS, QIS
from bench.grow_adult import grow
from sqlanon.cli.main import main as sqlanon
from sqlanon.outputs.dbt.sql import (
    PRIVACY,
    RARE,
    RELATION,
    SOURCE,
    gate_problem,
    gates,
    placeholder_text,
    privacy_gate_sql,
)
from sqlanon.spec.load import load_spec
from sqlanon.sql.dialects import profile

THREADS = 2
MEMORY = "4GB"
ON_VALUES = "privacy on values"
READ_ONCE = "privacy read once"
BASELINE_TEST = "group_by_baseline"
GROW_SQL = "SELECT count(*) FROM information_schema.tables WHERE table_name = 'adult_big'"


def spec_yaml(adult_dir: Path) -> str:
    lines = ["source: {table: adult_big}", "attributes:"]
    for q in QIS:
        csv = adult_dir / f"adult_hierarchy_{q}.csv"
        lines.append(f"  {q}: {{role: quasi_identifier, hierarchy: {{csv: {csv}}}}}")
    lines += ["  occupation: {role: sensitive}",
              f"  education: {{role: sensitive, order: {json.dumps(EDUCATION_ORDER)}}}",
              "privacy:",
              "  - k_anonymity: {k: 5}",
              "  - l_diversity: {attribute: occupation, variant: recursive, c: 4, l: 3}",
              "  - t_closeness: {attribute: education, t: 0.2, distance: ordered}",
              f"transformation: {{levels: {json.dumps(LEVELS)}, suppression_limit: 0.02, suppressed: mask}}",
              "output: {name: adult_anon}"]
    return "\n".join(lines) + "\n"


def make_project(project: Path, database: Path, adult_dir: Path) -> None:
    (project / "models").mkdir(parents=True, exist_ok=True)
    (project / "dbt_project.yml").write_text(
        'name: dbt_bench\nversion: "1.0.0"\nconfig-version: 2\nprofile: dbt_bench\n'
        'model-paths: ["models"]\nmacro-paths: ["macros"]\n')
    (project / "profiles.yml").write_text(
        "dbt_bench:\n  target: dev\n  outputs:\n    dev:\n      type: duckdb\n"
        f"      path: {json.dumps(str(database))}\n      threads: 1\n"
        f"      settings: {{threads: {THREADS}, memory_limit: {MEMORY}}}\n")
    (project / "models" / "sources.yml").write_text(
        "version: 2\nsources:\n  - name: raw\n    schema: main\n    tables:\n      - name: adult_big\n")
    (project / "spec.yml").write_text(spec_yaml(adult_dir))
    # the one gate (--one-gate) on a view of the model (a model has one properties entry)
    (project / "models" / "adult_anon_gated.sql").write_text(
        "{{ config(materialized='view') }}\nselect * from {{ ref('adult_anon') }}\n")
    (project / "models" / "adult_anon_gated.yml").write_text(
        "version: 2\nmodels:\n  - name: adult_anon_gated\n    data_tests:\n"
        "      - sqlanon_adult_one_privacy:\n          arguments:\n"
        "            source_model: source('raw', 'adult_big')\n")
    # the baseline in dbt: the GROUP BY as a singular test on the same view (HAVING keeps it passing
    # without letting the aggregation be skipped)
    (project / "tests").mkdir(exist_ok=True)
    cols = ", ".join(f'"{q}"' for q in QIS)
    (project / "tests" / f"{BASELINE_TEST}.sql").write_text(
        f"select {cols}, count(*) as n from {{{{ ref('adult_anon_gated') }}}} group by {cols} "
        "having count(*) < 0\n")


def dbt(project: Path, *args: str) -> list[dict]:
    """Run dbt (a process of its own, offline); the results of its run_results.json."""
    env = {**os.environ, "DBT_SEND_ANONYMOUS_USAGE_STATS": "false"}
    command = [sys.executable, "-c", "import sys; from dbt.cli.main import cli; sys.exit(cli())", *args,
               "--project-dir", str(project), "--profiles-dir", str(project), "--no-version-check",
               "--no-use-colors"]
    done = subprocess.run(command, env=env, capture_output=True, text=True, cwd=project)
    if args[0] in ("run", "test") and done.returncode != 0:
        raise SystemExit(f"dbt {' '.join(args)} failed:\n{done.stdout[-3000:]}")
    if args[0] not in ("run", "test"):
        return []
    return json.loads((project / "target" / "run_results.json").read_text())["results"]


def connect(database: Path) -> duckdb.DuckDBPyConnection:
    return duckdb.connect(str(database), config={"threads": THREADS, "memory_limit": MEMORY})


def seconds_between(timing: dict) -> float:
    """The length of a phase of dbt's ``timing`` (compile, execute) of a node."""
    started, completed = (datetime.fromisoformat(timing[k].replace("Z", "+00:00"))
                          for k in ("started_at", "completed_at"))
    return (completed - started).total_seconds()


def timed(con: duckdb.DuckDBPyConnection, sql: str) -> tuple[float, float, list]:
    """Elapsed and CPU seconds (this process's, DuckDB's threads included) of ``sql``; its rows."""
    t, c = time.perf_counter(), time.process_time()
    rows = con.execute(sql).fetchall()
    return time.perf_counter() - t, time.process_time() - c, rows


def main() -> None:
    root = Path(__file__).resolve().parents[1]
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=int, default=10_000_000)
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--workdir", default=str(root / "bench" / "results" / "dbt_bench"))
    p.add_argument("--adult-dir", default=str(root.parent / "shared" / "data" / "adult"))
    a = p.parse_args()
    work = Path(a.workdir).resolve()
    project, database, adult_dir = work / "project", work / "adult_big.duckdb", Path(a.adult_dir)
    work.mkdir(parents=True, exist_ok=True)
    with connect(database) as con:
        have = con.execute(GROW_SQL).fetchone()
        if not (have and have[0]) or con.execute("SELECT count(*) FROM adult_big").fetchone() != (a.rows,):
            grow(con, str(adult_dir / "adult.csv"), a.rows)
    make_project(project, database, adult_dir)
    assert sqlanon(["dbt", "install", "--project", str(project)]) == 0
    assert sqlanon(["dbt", "model", str(project / "spec.yml"), "--project", str(project),
                    "--source", "raw.adult_big", "--dialect", "duckdb", "--separate-gates"]) == 0
    assert sqlanon(["dbt", "model", str(project / "spec.yml"), "--project", str(project),
                    "--name", "adult_one", "--gates-only", "--one-gate", "--dialect", "duckdb"]) == 0
    dbt(project, "deps")

    spec = load_spec(project / "spec.yml")
    relations = {placeholder_text(RELATION, "duckdb"): '"main"."adult_anon"',
                 placeholder_text(SOURCE, "duckdb"): '"main"."adult_big"'}
    texts = {g.name: g.sql["duckdb"] for g in [*gates(spec, ["duckdb"], view=True),
                                               *gates(spec, ["duckdb"], one=True)]}
    problem, _ = gate_problem(spec)
    limit = spec.transformation.suppression_limit
    texts[ON_VALUES] = privacy_gate_sql(problem, limit, profile("duckdb"), coded=False)
    texts[READ_ONCE] = privacy_gate_sql(problem, limit, profile("duckdb"), read_once=True)
    gate_sql: dict[str, str] = {}
    for name, sql in texts.items():
        for placeholder, relation in relations.items():
            sql = sql.replace(placeholder, relation)
        gate_sql[name] = sql
    cols = ", ".join(f'"{q}"' for q in QIS)
    group_by = f'SELECT {cols}, count(*) AS n FROM "main"."adult_anon" GROUP BY {cols}'

    rounds: list[dict[str, float]] = []
    for i in range(a.runs + 1):
        r: dict[str, float] = {}
        (model,) = [x for x in dbt(project, "run", "--select", "adult_anon")
                    if x["unique_id"].startswith("model.")]
        r["model"] = model["execution_time"]
        if i == 0:
            dbt(project, "run", "--select", "adult_anon_gated")
        compiled = next((project / "target" / "compiled").rglob("adult_anon.sql")).read_text()
        with connect(database) as con:
            t = time.perf_counter()
            con.execute(f"CREATE OR REPLACE TABLE bare_select AS {compiled}")
            r["bare SELECT"] = time.perf_counter() - t
            con.execute("DROP TABLE bare_select")
        tests = dbt(project, "test", "--select", "adult_anon")
        assert all(x["status"] == "pass" for x in tests), [(x["unique_id"], x["status"]) for x in tests]
        r["gates in dbt"] = sum(x["execution_time"] for x in tests)
        # the gate and the baseline in dbt, each the first query of its own `dbt test` (a cold read)
        (one,) = dbt(project, "test", "--select", "adult_anon_gated", "--exclude", BASELINE_TEST)
        assert one["status"] == "pass", one
        r["one gate in dbt"] = one["execution_time"]
        phases = {t["name"]: seconds_between(t) for t in one["timing"]}
        r["one gate in dbt: compile"], r["one gate in dbt: execute"] = phases["compile"], phases["execute"]
        (baseline,) = dbt(project, "test", "--select", BASELINE_TEST)
        assert baseline["status"] == "pass", baseline
        r["GROUP BY in dbt"] = baseline["execution_time"]
        with connect(database) as con:
            r["GROUP BY"], r["GROUP BY, CPU"], classes = timed(con, group_by)
            seconds = {}
            for name, sql in gate_sql.items():
                seconds[name], cpu, found = timed(con, sql)
                assert found == [], (name, found)  # every gate passes
                if name in (PRIVACY, READ_ONCE):
                    seconds[f"{name}, CPU"] = cpu
            one_gate = (RARE, PRIVACY, ON_VALUES, READ_ONCE)
            r["gates' SQL"] = sum(v for name, v in seconds.items()
                                  if name not in one_gate and not name.endswith("CPU"))
            r.update(seconds)
        if i == 0:
            print(f"warm-up: {len(classes):,} classes; " + ", ".join(f"{k} {v:.3f} s" for k, v in r.items()))
            continue
        rounds.append(r)
        print(f"run {i}: " + ", ".join(f"{k} {v:.3f} s" for k, v in r.items()))
    medians = {k: statistics.median(r[k] for r in rounds) for k in rounds[0]}
    ratios = {"model / bare SELECT": medians["model"] / medians["bare SELECT"],
              "gates' SQL / GROUP BY": medians["gates' SQL"] / medians["GROUP BY"],
              "gates in dbt / GROUP BY": medians["gates in dbt"] / medians["GROUP BY"],
              "one gate's SQL / GROUP BY": medians[PRIVACY] / medians["GROUP BY"],
              "one gate in dbt / GROUP BY": medians["one gate in dbt"] / medians["GROUP BY"],
              "one gate in dbt / GROUP BY in dbt": medians["one gate in dbt"] / medians["GROUP BY in dbt"],
              "one gate on values, SQL / GROUP BY": medians[ON_VALUES] / medians["GROUP BY"],
              "one gate read once, SQL / GROUP BY": medians[READ_ONCE] / medians["GROUP BY"],
              "one gate's SQL / GROUP BY, CPU": medians[f"{PRIVACY}, CPU"] / medians["GROUP BY, CPU"],
              "one gate read once, SQL / GROUP BY, CPU":
                  medians[f"{READ_ONCE}, CPU"] / medians["GROUP BY, CPU"],
              f"{RARE} / GROUP BY": medians[RARE] / medians["GROUP BY"]}
    print(f"rows {a.rows:,}; medians of {a.runs} runs: "
          + ", ".join(f"{k} {v:.3f} s" for k, v in medians.items()))
    print("ratios of the medians: " + ", ".join(f"{k} {v:.2f}" for k, v in ratios.items()))
    (work / "dbt_bench.json").write_text(json.dumps({"rows": a.rows, "runs": rounds, "medians": medians,
                                                     "ratios": ratios}, indent=2))


if __name__ == "__main__":
    main()
