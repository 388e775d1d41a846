"""sdcMicro's risk measures on Adult grown to N rows, against one GROUP BY of the quasi-identifiers.

Baseline, measured in the same run on the same table: one plain
``CREATE TEMP TABLE ... AS SELECT <QIs>, count(*) FROM adult_big GROUP BY <QIs>`` (the 9 QIs).
Measured, on the same DuckDB connection (``sqlanon.domain.risk``):

* ``individual``: individual and global risk without weights;
* ``weighted``: the same with a sampling-weight column (8 × age, a positive number per record);
* ``per-record``: the weighted risk and its per-record table (every row with risk, fk and Fk);
* ``suda2 ≤ 3``: SUDA2 with MSUs of at most 3 QIs; ``suda2``: every size (sdcMicro's default).

Runs alternate (baseline, then each measure) after one warm-up; the script prints every run, the
medians and each median's ratio to the baseline's. The table is grown by ``bench/grow_adult.py``
(scheme ``pairs``) and kept in the database file between runs.

Measured (``python -m bench.sdc_risk_bench --rows 1000000 --runs 3``; DuckDB, 2 cores shared with
other work; 1,000,000 rows, 216,390 distinct combinations, 73,148 sample uniques), medians and ratios
to the GROUP BY's 0.60 s:

    individual   0.50 s   0.83
    weighted     0.94 s   1.56
    per-record   1.65 s   2.73   (writing the 1M-row table joined to its class figures)
    suda2 ≤ 3    0.62 s   1.02
    suda2        1.90 s   3.14   (every QI subset still holding a record without an MSU)

At 10,000,000 rows (``--rows 10000000 --skip per-record suda2``; 797,941 distinct combinations,
219,684 sample uniques; the machine busier), against the GROUP BY's 7.18 s:

    individual   6.33 s   0.88
    weighted     9.11 s   1.27
    suda2 ≤ 3   15.47 s   2.15

After the MSU search began counting each subset without record counts and looking up only the
combinations still without an MSU (``--rows 10000000 --runs 3 --skip individual weighted
per-record``; load average 14 on 2 cores, so all times are several times the idle ones), against the
GROUP BY's 9.81 s:

    suda2 ≤ 3   16.05 s   1.64
    suda2       31.30 s   3.19

The same command later that day, before and after the MSU search began keeping only the numbers of
the QI subsets still holding a possible MSU (the search alone, same run: 1.1-1.7x faster, e.g.
4.1 s against 7.0 s at load 4); the two runs are at different loads, so compare ratios within a run:

    before (load average 10-12; GROUP BY 6.71 s)   suda2 ≤ 3  10.60 s  1.58   suda2  17.29 s  2.57
    after  (load average 5;     GROUP BY 3.33 s)   suda2 ≤ 3   4.79 s  1.44   suda2   9.86 s  2.96

The ratio grows as the load falls: the GROUP BY uses both cores, the MSU search one (two threads
counting a level's subsets were slower than one). At 1,000,000 rows and load 22, after: GROUP BY
1.22 s, suda2 ≤ 3 2.74 s (2.25), suda2 6.26 s (5.13).

The same command after the MSU search began running top-down (from the set of all QIs, each subset's
table of distinct values built from a parent's) for every size and for MSUs of up to 3 QIs, right
after the level-wise search's run on the same table (the code before, same load):

    level-wise (load average 15-17; GROUP BY 9.46 s)   suda2 ≤ 3  15.27 s  1.61   suda2  25.90 s  2.74
    top-down   (load average 13-16; GROUP BY 8.60 s)   suda2 ≤ 3  12.62 s  1.47   suda2  13.79 s  1.60
    and with the class table's codes column-major (load 15-19; GROUP BY 10.20 s)
                                                       suda2 ≤ 3  14.28 s  1.40   suda2  15.50 s  1.52

At 1,000,000 rows then (load 19-20): GROUP BY 1.16 s, suda2 ≤ 3 2.08 s (1.79), suda2 2.41 s (2.08).
Idle, the level-wise search had given 1.80 and 5.25 against a 1.04 s GROUP BY; the top-down search
was not measured on an idle machine.

The individual and global risk cost one GROUP BY and its transfer; SUDA2's MSU search works on the
distinct combinations, not the rows.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from pathlib import Path

import duckdb

from bench.grow_adult import QIS, distinct_combinations, ensure_grown
from sqlanon.domain.risk.individual import individual_risk
from sqlanon.domain.risk.suda2 import suda2
from sqlanon.engines.duckdb import DuckDBEngine


def main() -> None:
    root = Path(__file__).resolve().parents[1]
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=int, default=1_000_000)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--database", default=str(root / "bench" / "results" / "adult_sdc.duckdb"))
    p.add_argument("--adult-dir", default=str(root.parent / "shared" / "data" / "adult"))
    p.add_argument("--skip", nargs="*", default=[], help="measures not to run")
    a = p.parse_args()
    Path(a.database).parent.mkdir(parents=True, exist_ok=True)
    con = duckdb.connect(a.database)
    if ensure_grown(con, str(Path(a.adult_dir) / "adult.csv"), a.rows):
        con.execute("CREATE OR REPLACE TABLE adult_big_w AS SELECT *, 8.0 * CAST(age AS DOUBLE) AS w "
                    "FROM adult_big")
    rows, distinct = distinct_combinations(con)
    print(f"{rows:,} rows, {distinct:,} distinct combinations of the {len(QIS)} QIs")
    engine = DuckDBEngine(connection=con, database=a.database)
    cols = ", ".join(f'"{q}"' for q in QIS)
    baseline_sql = (f"CREATE OR REPLACE TEMP TABLE scan AS SELECT {cols}, count(*) AS n "
                    f"FROM adult_big GROUP BY {cols}")

    def baseline() -> None:
        con.execute(baseline_sql)

    measures: dict[str, Callable[[], object]] = {
        "individual": lambda: individual_risk(engine, "adult_big", QIS),
        "weighted": lambda: individual_risk(engine, "adult_big_w", QIS, "w"),
        "per-record": lambda: individual_risk(engine, "adult_big_w", QIS, "w", output="risk_out"),
        "suda2 ≤ 3": lambda: suda2(engine, "adult_big", QIS, max_size=3),
        "suda2": lambda: suda2(engine, "adult_big", QIS),
    }
    measures = {k: v for k, v in measures.items() if k not in a.skip}

    def timed(f: Callable[[], object]) -> float:
        t = time.perf_counter()
        f()
        return time.perf_counter() - t

    timed(baseline)
    for f in measures.values():
        timed(f)
    times: dict[str, list[float]] = {"GROUP BY": [], **{k: [] for k in measures}}
    for i in range(a.runs):
        times["GROUP BY"].append(timed(baseline))
        for k, f in measures.items():
            times[k].append(timed(f))
        print(f"run {i + 1}: " + "   ".join(f"{k} {v[-1]:.3f} s" for k, v in times.items()))
    base = statistics.median(times["GROUP BY"])
    print(f"rows {a.rows:,}; median GROUP BY {base:.3f} s")
    for k in measures:
        m = statistics.median(times[k])
        print(f"  {k:<11} median {m:.3f} s   ratio to GROUP BY {m / base:.2f}")
    r = individual_risk(engine, "adult_big_w", QIS, "w").as_dict()
    s = suda2(engine, "adult_big", QIS, max_size=3).as_dict()
    print({k: r[k] for k in ("classes", "expected_reidentifications", "global_risk", "threshold")})
    print({k: s[k] for k in ("sample_uniques", "records_with_msu", "msus_by_size")})


if __name__ == "__main__":
    main()
