"""``sqlanon apply`` of a fixed node on Adult grown to 10 million rows, against one GROUP BY of its QIs.

Data: ``bench/grow_adult.py`` (scheme ``pairs``) in a DuckDB file, made once and kept (``--database``).
``--creditcard24`` instead: creditcard (30,000 rows) with all 24 attributes as quasi-identifiers, each
at level 1 of its hierarchy file, suppression limit 1 (table ``cc`` of the ``--database`` file).
The command is ``sqlanon apply spec.yaml --json`` as a subprocess: the 9 quasi-identifiers with
Adult's ARX hierarchies, k = 5, 2 % suppression, the levels of Adult's 2 % optimum
``[0,3,0,2,2,1,1,2,0]``, the default metrics, output mode ``table``. Baseline, measured in the same
run on the same file: one ``GROUP BY`` of the 9 quasi-identifiers into a temporary table. Runs
alternate (baseline, apply[, apply of ``--against DIR``]); the script prints every run and the medians.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import duckdb
import yaml

from bench.end_to_end import ADULT_QIS, DATA, HERE, environment, quoted, timed_process
from bench.grow_adult import ensure_grown

LEVELS = dict(zip(ADULT_QIS, [0, 3, 0, 2, 2, 1, 1, 2, 0]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--database", type=Path, default=Path(tempfile.gettempdir()) / "adult_big.duckdb")
    parser.add_argument("--against", metavar="DIR", help="also time the sqlanon tree in DIR, alternately")
    parser.add_argument("--creditcard24", action="store_true",
                        help="creditcard, all 24 attributes quasi-identifiers at level 1")
    args = parser.parse_args()
    con = duckdb.connect(str(args.database))
    if args.creditcard24:
        source, levels, limit = "cc", None, 1.0
        con.execute("CREATE OR REPLACE TABLE cc AS SELECT * FROM read_csv(?, delim=';', header=true, "
                    "all_varchar=true)", [str(DATA / "creditcard" / "creditcard_int.csv")])
        qis = [r[0] for r in con.execute('DESCRIBE "cc"').fetchall()]
        hierarchy = {q: DATA / "creditcard" / f"creditcard_int_hierarchy_{q}.csv" for q in qis}
        levels = dict.fromkeys(qis, 1)
    else:
        source, qis, levels, limit = "adult_big", ADULT_QIS, LEVELS, 0.02
        ensure_grown(con, str(DATA / "adult" / "adult.csv"), args.rows)
        hierarchy = {q: DATA / "adult" / f"adult_hierarchy_{q}.csv" for q in qis}
    columns = [r[0] for r in con.execute(f'DESCRIBE "{source}"').fetchall()]
    rows = con.execute(f'SELECT count(*) FROM "{source}"').fetchone()[0]
    con.close()
    attributes: dict[str, object] = {c: "insensitive" for c in columns}
    for q in qis:
        attributes[q] = {"role": "quasi_identifier", "hierarchy": {"csv": str(hierarchy[q])}}
    folder = Path(tempfile.mkdtemp(prefix="sqlanon-apply-big-"))
    spec = {"source": {"database": str(args.database), "table": source}, "attributes": attributes,
            "privacy": {"k_anonymity": {"k": 5}},
            "transformation": {"levels": levels, "suppression_limit": limit},
            "output": {"mode": "table", "name": f"{source}_anon", "replace": True}}
    path = folder / "spec.yaml"
    path.write_text(yaml.safe_dump(spec), encoding="utf-8")
    command = [sys.executable, "-m", "sqlanon", "apply", str(path), "--json"]
    trees = {"this tree": environment(folder, HERE)}
    if args.against:
        trees[args.against] = environment(folder, Path(args.against).resolve())
    for env in trees.values():
        Path(env["PYTHONPYCACHEPREFIX"]).mkdir(parents=True)
    times: dict[str, list[float]] = {"GROUP BY": [], **{k: [] for k in trees}}
    cpu: dict[str, list[float]] = {k: [] for k in trees}
    reports = {}
    for _ in range(args.runs):
        con = duckdb.connect(str(args.database))
        t = time.perf_counter()
        con.execute(f'CREATE TEMP TABLE g AS SELECT {quoted(qis)}, count(*) AS n FROM "{source}" '
                    f"GROUP BY {quoted(qis)}")
        times["GROUP BY"].append(time.perf_counter() - t)
        con.close()
        for name, env in trees.items():
            seconds, _, out, _, used = timed_process(command, env, folder)
            times[name].append(seconds)
            cpu[name].append(used)
            reports[name] = {k: v for k, v in json.loads(out).items() if k in ("metrics", "outputs")}
    if len({json.dumps(r, sort_keys=True) for r in reports.values()}) > 1:
        raise SystemExit(f"the trees' reports differ: {reports}")
    print(f"{source}: rows={rows:,} runs={args.runs} levels={list(levels.values())}")
    base = statistics.median(times["GROUP BY"])
    for name, ts in times.items():
        extra = f", CPU {statistics.median(cpu[name]):.2f} s" if name in cpu else ""
        ratio = f", {statistics.median(ts) / base:.2f} x GROUP BY" if name in cpu else ""
        print(f"  {name:<10} " + ", ".join(f"{t:.2f}" for t in ts)
              + f" s; median {statistics.median(ts):.2f} s{extra}{ratio}")


if __name__ == "__main__":
    main()
