"""Mondrian (``method: mondrian``) on UCI Adult and on Adult grown to millions of rows, on DuckDB.

``--reference``: the twelve published figures (``../shared/reference/mondrian.md``: k = 2..100, strict
and relaxed, inherited box widths) recomputed and compared (partitions, NCP % to 1e-12 relative,
discernibility, smallest partition).

``--adult``: strict k = 10 end to end, load included, ``--runs`` times, on each path (``auto``: in
memory at this size, and ``database``): the load (``adult.data`` read by pyarrow's CSV reader as the
figures were computed, into an in-memory DuckDB), the partitioning (``sqlanon.api.check``) and the
release (``sqlanon.api.apply``, the partitioning and the released table); medians. With
``--reference-repo DIR`` (a checkout of qiyuangong/Mondrian, run from a copy outside this project)
the reference implementation is timed in the same run, one run of it before each of ours (its read of
the file and ``mondrian()``, which returns the generalized rows); else against its quoted 0.16 s.

``--rows N``: the coded Adult grown to N rows (three blocks of each row from three Adult rows chosen by
Park–Miller steps, as ``bench/grow_adult.py`` grows the ARX file), strict Mondrian at ``--k``; prints
the rounds (the depth), the queries, the seconds, and the baseline measured in the same run on the same
connection: one ``GROUP BY`` scan of the table, of the eight quasi-identifiers (their frequency set, the
baseline of ``bench/check_bench.py``) and of ``age`` alone, so the ratio to depth × scan says what a
round costs in scans.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

from sqlanon import api
from sqlanon.engines.duckdb import DuckDBEngine
from sqlanon.methods.mondrian.result import MondrianReport
from sqlanon.spec import spec_from_dict

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.methods.mondrian.adult_uci import QIS, REFERENCE, load, read, spec_dict  # noqa: E402

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "adult-uci" / "adult.data"
PRIME = 2_147_483_647
BLOCKS = ((("age", "sex", "race"), 1, 0),
          (("workclass", "education_num", "marital_status"), 742_938_285, 1),
          (("occupation", "native_country"), 950_706_376, 2))
REFERENCE_SECONDS = 0.16


def reference() -> int:
    engine = DuckDBEngine()
    engine.create_table_from_arrow("adult_uci", load(DATA))
    bad = 0
    for k, mode, partitions, ncp, disc, smallest in REFERENCE:
        t = time.perf_counter()
        r = api.check(spec_from_dict(spec_dict(k, mode)), engine=engine)
        ok = (r.partitions == partitions and abs(r.metrics["ncp_percent"] - ncp) <= 1e-12 * ncp
              and r.metrics["discernibility"] == disc and r.smallest == smallest)
        bad += not ok
        print(f"k={k:<3} {mode:<7} partitions {r.partitions:>6} NCP {r.metrics['ncp_percent']:.15g} % "
              f"disc {int(r.metrics['discernibility']):>8} smallest {r.smallest:>3} rounds {r.rounds:>2} "
              f"{'same' if ok else 'DIFFERENT'} ({time.perf_counter() - t:.2f} s)")
    engine.close()
    return bad


def _median(times: list[float]) -> str:
    return f"{statistics.median(times):.3f} s"


def adult(runs: int, reference_repo: str | None, mode: str = "strict") -> None:
    references: list[float] = []
    for path in ("auto", "database"):
        loads, checks, applies = [], [], []
        for _ in range(runs):
            if reference_repo and path == "auto":  # alternated with ours, so both see the same load
                references.append(measure_reference(reference_repo, 1, mode))
            t = time.perf_counter()
            engine = DuckDBEngine()
            engine.create_table_from_arrow("adult_uci", read(DATA))
            loads.append(time.perf_counter() - t)
            d = spec_dict(10, mode, width="exact")
            d["transformation"]["path"] = path
            t = time.perf_counter()
            r = api.check(spec_from_dict(d), engine=engine)
            checks.append(time.perf_counter() - t)
            d["output"] = {"mode": "table", "name": "adult_mondrian"}
            t = time.perf_counter()
            api.apply(spec_from_dict(d), engine=engine)
            applies.append(time.perf_counter() - t)
            engine.close()
        reference_time = statistics.median(references) if references else REFERENCE_SECONDS
        if references and path == "auto":
            print(f"reference implementation, {mode} k=10 on Adult, end to end (read + mondrian()): runs "
                  f"{', '.join(f'{x:.3f}' for x in references)} s, median {reference_time:.3f} s")
        whole = [lo + a for lo, a in zip(loads, applies)]
        m = statistics.median(whole)
        print(f"{mode} k=10 on Adult, path {path}: load {_median(loads)}, partitioning (check) "
              f"{_median(checks)}, partitioning and released table (apply) {_median(applies)}; end to end "
              f"(load + apply) {m:.3f} s (runs {', '.join(f'{x:.3f}' for x in whole)}); {r.partitions} "
              f"partitions, {r.rounds} rounds, {r.queries} queries; reference implementation "
              f"{reference_time:.3f} s (ratio {m / reference_time:.2f})")


REFERENCE_SCRIPT = """
import statistics, sys, time
sys.setrecursionlimit(100000)
from utils.read_adult_data import read_data
from mondrian import mondrian
runs, relax = int(sys.argv[1]), sys.argv[2] == "relaxed"
whole, own = [], []
for _ in range(runs):
    t = time.perf_counter()
    data, _ = read_data()
    result, (ncp, rtime) = mondrian(data, 10, relax)
    whole.append(time.perf_counter() - t)
    own.append(rtime)
print(statistics.median(whole), statistics.median(own), ncp)
"""


def measure_reference(repo: str, runs: int, mode: str) -> float:
    """The reference implementation's median time, read and ``mondrian()`` (it reads
    ``data/adult.data`` below its directory, so it runs there)."""
    import subprocess

    got = subprocess.run([sys.executable, "-c", REFERENCE_SCRIPT, str(runs), mode], cwd=repo, check=True,
                         capture_output=True, text=True).stdout.split()
    return float(got[-3])


def grow(engine: DuckDBEngine, rows: int) -> None:
    con = engine.con
    con.register("adult_src_arrow", load(DATA))
    con.execute("CREATE OR REPLACE TEMP TABLE adult_src AS SELECT row_number() OVER () - 1 AS rid, * "
                "FROM adult_src_arrow")
    n = con.execute("SELECT count(*) FROM adult_src").fetchone()[0]
    selects, joins = [], []
    for i, (cols, mult, off) in enumerate(BLOCKS):
        selects += [f'b{i}."{c}"' for c in cols]
        joins.append(f"JOIN adult_src b{i} ON b{i}.rid = ((r.range * {mult} + {off}) % {PRIME}) % {n}")
    con.execute(f"CREATE OR REPLACE TABLE adult_big AS SELECT {', '.join(selects)} FROM range({int(rows)}) r "
                f"{' '.join(joins)} ORDER BY r.range")


def grown(rows: int, k: int, runs: int, path: str = "auto") -> None:
    engine = DuckDBEngine()
    t = time.perf_counter()
    grow(engine, rows)
    print(f"grown to {rows:,} rows in {time.perf_counter() - t:.1f} s")
    d = spec_dict(k, "strict", width="exact", table="adult_big")
    d["transformation"]["path"] = path
    del d["attributes"]["income"]
    spec = spec_from_dict(d)
    columns = ", ".join(f'"{q}"' for q in QIS)

    def timed(action) -> tuple[float, float, object]:
        wall, cpu = time.perf_counter(), time.process_time()
        out = action()
        return time.perf_counter() - wall, time.process_time() - cpu, out

    def frequency_set() -> None:
        engine.con.execute(f"CREATE OR REPLACE TEMP TABLE freq AS SELECT {columns}, count(*) AS n "
                           f"FROM adult_big GROUP BY {columns}")

    def by_age() -> None:
        engine.con.execute("SELECT age, count(*) FROM adult_big GROUP BY age").fetchall()

    wide, narrow, runs_s = [], [], []
    for _ in range(runs):  # baselines before and after each run, on the same connection
        wide.append(timed(frequency_set)[:2])
        narrow.append(timed(by_age)[:2])
        wall, cpu, r = timed(lambda: api.check(spec, engine=engine))
        runs_s.append((wall, cpu))
        wide.append(timed(frequency_set)[:2])
        narrow.append(timed(by_age)[:2])
    assert isinstance(r, MondrianReport)
    run = statistics.median(w for w, _ in runs_s)
    run_cpu = statistics.median(c for _, c in runs_s)
    print(f"strict k={k} on {rows:,} rows, path {path}: {r.partitions:,} partitions, depth {r.rounds} "
          f"rounds, {r.queries} queries; runs {', '.join(f'{w:.1f}' for w, _ in runs_s)} s, "
          f"median {run:.1f} s (CPU {run_cpu:.1f} s)")
    for what, times in ((f"GROUP BY of the {len(QIS)} quasi-identifiers (the frequency set)", wide),
                        ("GROUP BY age alone", narrow)):
        scan, scan_cpu = statistics.median(w for w, _ in times), statistics.median(c for _, c in times)
        print(f"  {what}: {scan:.3f} s (CPU {scan_cpu:.3f} s); ratio to depth x that scan "
              f"{run / (r.rounds * scan):.2f} (CPU {run_cpu / (r.rounds * scan_cpu):.2f})")
    engine.close()


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--reference", action="store_true")
    p.add_argument("--adult", action="store_true")
    p.add_argument("--rows", type=int, default=0)
    p.add_argument("--k", type=int, default=10)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--mode", choices=("strict", "relaxed"), default="strict")
    p.add_argument("--path", choices=("auto", "memory", "database"), default="auto",
                   help="the path of the --rows run")
    p.add_argument("--reference-repo", help="a copy of qiyuangong/Mondrian to time in the same run")
    a = p.parse_args()
    bad = reference() if a.reference else 0
    if a.adult:
        adult(a.runs, a.reference_repo, a.mode)
    if a.rows:
        grown(a.rows, a.k, a.runs, a.path)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
