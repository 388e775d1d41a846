"""Optimal search on Adult grown to 10M or 100M rows (9 QIs, k = 5, 2 % suppression, Loss), whole.

The table is grown by ``bench/grow_adult.py`` (scheme ``quads``) into a DuckDB file, built once and
reused (``--db``: a directory, default a temporary one removed afterwards). DuckDB runs with 2 threads
and the given memory limit.

Baseline, measured in the same run on the same connection: one
``CREATE TEMP TABLE … AS SELECT <9 QIs>, count(*) FROM adult_big GROUP BY <9 QIs>``. The subject is
the whole optimal search as ``anonymize`` runs it: build the frequency table in the engine
(:class:`~sqlanon.methods.generalization.evaluator.Evaluator`), load it into memory
(:class:`~sqlanon.methods.generalization.search.fast.FastNodeEvaluator`), search
(:func:`~sqlanon.methods.generalization.search.search`). Runs alternate (baseline, search, …) after one
warm-up each; the script prints every run with its phases, where the search's time goes (node checks grouped
from every row of the frequency table or rolled up from a cached finer node, the strategy's own work), the
medians, the ratio to the baseline and the process's peak resident memory (``ru_maxrss``). The goal is a ratio
≤ 3 and a peak ≤ 8 GB.
"""

from __future__ import annotations

import argparse
import resource
import shutil
import statistics
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import duckdb

from bench.grow_adult import QIS, distinct_combinations, grow
from sqlanon.domain.hierarchy import IntervalHierarchy, read_arx_csv
from sqlanon.domain.models.k_anonymity import KAnonymity
from sqlanon.engines.duckdb import DuckDBEngine
from sqlanon.methods.generalization.evaluator import Evaluator, Problem
from sqlanon.methods.generalization.search import lattice_of
from sqlanon.methods.generalization.search.fast import FastNodeEvaluator
from sqlanon.methods.generalization.search.limits import search_within
from sqlanon.sql.nodes import table

K, LIMIT, METRIC = 5, 0.02, "loss"


def peak_gb() -> float:
    """The process's peak resident set so far (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20


@dataclass
class CheckTimes:
    """Wall time of node checks, split by how the node's classes were formed."""

    full: list[float] = field(default_factory=list)
    rolled: list[float] = field(default_factory=list)


def timed_checks(nodes: FastNodeEvaluator) -> CheckTimes:
    """Record every :meth:`FastEvaluator.evaluate` call's time (the instance's method is wrapped)."""
    fe, times = nodes.fast, CheckTimes()
    inner = fe.evaluate

    def evaluate(node, **kw):
        before, t = fe.rolled_up, time.perf_counter()
        r = inner(node, **kw)
        (times.rolled if fe.rolled_up > before else times.full).append(time.perf_counter() - t)
        return r

    fe.evaluate = evaluate
    return times


def run_search(problem: Problem, time_limit: float | None) -> dict:
    t0 = time.perf_counter()
    with Evaluator(problem) as ev:
        t1 = time.perf_counter()
        nodes = FastNodeEvaluator(ev, LIMIT, METRIC)
        t2 = time.perf_counter()
        times = timed_checks(nodes)
        result = search_within(lattice_of(problem), nodes, "optimal", time_limit=time_limit)
        t3 = time.perf_counter()
        fe = nodes.fast
        return {"freq": t1 - t0, "load": t2 - t1, "search": t3 - t2, "total": t3 - t0,
                "node": list(result.node) if result.node else None, "metric": result.metric,
                "complete": result.complete, "checked": result.checked, "tagged": result.tagged,
                "pruned": result.pruned, "rolled": len(times.rolled), "full": len(times.full),
                "full_s": sum(times.full), "rolled_s": sum(times.rolled),
                "freq_rows": fe.rows, "rows": fe.n, "peak_gb": peak_gb()}


def open_table(db: Path, adult_csv: str, rows: int, memory_limit: str) -> duckdb.DuckDBPyConnection:
    path = db / f"adult_quads_{rows}.duckdb"
    con = duckdb.connect(str(path))
    con.execute("SET threads = 2")
    con.execute(f"SET memory_limit = '{memory_limit}'")
    con.execute(f"SET temp_directory = '{db / 'spill'}'")
    have = con.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = 'adult_big'"
                       ).fetchone()[0]
    if not have or con.execute("SELECT count(*) FROM adult_big").fetchone()[0] != rows:
        t = time.perf_counter()
        grow(con, adult_csv, rows, scheme="quads")
        print(f"grew {rows:,} rows into {path} in {time.perf_counter() - t:.0f} s")
        n, distinct = distinct_combinations(con)
        print(f"{n:,} rows, {distinct:,} distinct QI combinations (one per {n / distinct:.1f} rows)")
    return con


def bench(con: duckdb.DuckDBPyConnection, db: Path, adult_dir: Path, runs: int,
          time_limit: float | None, age_intervals: bool = False) -> None:
    engine = DuckDBEngine(connection=con, database=str(db))
    hs = {q: read_arx_csv(adult_dir / f"adult_hierarchy_{q}.csv") for q in QIS}
    if age_intervals:  # a hierarchy built over the data's values (ARX's file has 4 levels too)
        hs["age"] = IntervalHierarchy((5, 10, 20, 40))
    problem = Problem(engine, table("adult_big"), QIS, hs, [], [KAnonymity(K)])
    cols = ", ".join(f'"{q}"' for q in QIS)
    baseline_sql = (f"CREATE OR REPLACE TEMP TABLE scan AS SELECT {cols}, count(*) AS n "
                    f"FROM adult_big GROUP BY {cols}")
    setting = con.execute("SELECT current_setting('memory_limit')").fetchone()[0]
    print(f"DuckDB threads 2, memory_limit {setting}; k = {K}, suppression {LIMIT:.0%}, {METRIC}")
    scans, searches = [], []
    for i in range(runs + 1):
        t = time.perf_counter()
        con.execute(baseline_sql)
        scan = time.perf_counter() - t
        con.execute("DROP TABLE scan")
        r = run_search(problem, time_limit)
        tag = "warm-up" if i == 0 else f"run {i}"
        checks = r["full_s"] + r["rolled_s"]
        print(f"{tag}: GROUP BY {scan:.2f} s | search total {r['total']:.2f} s = frequency table "
              f"{r['freq']:.2f} + load {r['load']:.2f} + search {r['search']:.2f} "
              f"(ratio {r['total'] / scan:.2f})\n"
              f"  node {r['node']} loss {r['metric']!r}{'' if r['complete'] else ' (time limit)'}; "
              f"{r['freq_rows']:,} frequency rows for {r['rows']:,} rows; checked {r['checked']} "
              f"(tagged {r['tagged']}, pruned {r['pruned']}): {r['full']} grouped from every row "
              f"{r['full_s']:.2f} s ({1000 * r['full_s'] / max(r['full'], 1):.1f} ms each), "
              f"{r['rolled']} rolled up {r['rolled_s']:.2f} s "
              f"({1000 * r['rolled_s'] / max(r['rolled'], 1):.1f} ms each), strategy "
              f"{r['search'] - checks:.2f} s; peak RSS {r['peak_gb']:.2f} GB")
        if i:
            scans.append(scan)
            searches.append(r)
    med = {key: statistics.median(r[key] for r in searches) for key in ("freq", "load", "search", "total")}
    s = statistics.median(scans)
    print(f"median of {runs}: GROUP BY {s:.2f} s; search total {med['total']:.2f} s (frequency table "
          f"{med['freq']:.2f}, load {med['load']:.2f}, search {med['search']:.2f}); ratio "
          f"{med['total'] / s:.2f} (goal ≤ 3); peak RSS {peak_gb():.2f} GB (goal ≤ 8)")


def main() -> None:
    root = Path(__file__).resolve().parents[1]
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=int, action="append", help="table size (repeatable; default 10M)")
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--db", help="directory keeping the grown tables between runs (default: a "
                                "temporary directory, removed afterwards)")
    p.add_argument("--memory-limit", default="6GB", help="DuckDB's memory_limit")
    p.add_argument("--time-limit", type=float, help="stop each search after this many seconds")
    p.add_argument("--adult-dir", default=str(root.parent / "shared" / "data" / "adult"))
    p.add_argument("--age-intervals", action="store_true",
                   help="age by intervals of width 5, 10, 20, 40 (a table built over the data's values)")
    p.add_argument("--load-by-keys", action="store_true",
                   help="read rule-based hierarchies' values as text keys (the load before leaf codes "
                        "were used for them)")
    a = p.parse_args()
    if a.load_by_keys:
        from sqlanon.methods.generalization.search import fast_load

        fast_load.CODED_BUILT_MAX_LEAVES = 0
    db = Path(a.db) if a.db else Path(tempfile.mkdtemp(prefix="sqlanon-bench-"))
    db.mkdir(parents=True, exist_ok=True)
    try:
        for rows in a.rows or [10_000_000]:
            print(f"== {rows:,} rows")
            con = open_table(db, str(Path(a.adult_dir) / "adult.csv"), rows, a.memory_limit)
            try:
                bench(con, db, Path(a.adult_dir), a.runs, a.time_limit, a.age_intervals)
            finally:
                con.close()
    finally:
        if not a.db:
            shutil.rmtree(db, ignore_errors=True)


if __name__ == "__main__":
    main()
