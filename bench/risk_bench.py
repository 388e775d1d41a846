"""All risk figures of Adult grown to N rows against one GROUP BY of its quasi-identifiers.

Baseline, measured in the same run on the same table: one plain
``CREATE TEMP TABLE ... AS SELECT <QIs>, count(*) FROM adult_big GROUP BY <QIs>``.
The risk analysis is :func:`sqlanon.domain.metrics.risk_analysis.analyze` on the 9 quasi-identifiers
at level 0 with the USA population, then the same histogram's estimates for sampling fractions 0.01
and 0.1: ARX's sample figures and Zayatz, Pitman, SNB and Dankar's rule each time (one query for
the histogram, every estimator on it). Runs alternate (baseline, analysis, ...) after one warm-up
each; the script prints every run, the medians and the ratio of the medians (goal ≤ 2).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

import duckdb

from bench.grow_adult import QIS, ensure_grown
from sqlanon.domain.metrics.risk_analysis import analyze
from sqlanon.domain.risk.analysis import of_histogram
from sqlanon.domain.risk.population import USA
from sqlanon.engines.duckdb import DuckDBEngine
from sqlanon.sql.nodes import table


def main() -> None:
    root = Path(__file__).resolve().parents[1]
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=int, default=10_000_000)
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--database", default=str(root / "bench" / "results" / "adult_big.duckdb"))
    p.add_argument("--adult-dir", default=str(root.parent / "shared" / "data" / "adult"))
    a = p.parse_args()
    Path(a.database).parent.mkdir(parents=True, exist_ok=True)
    con = duckdb.connect(a.database)
    ensure_grown(con, str(Path(a.adult_dir) / "adult.csv"), a.rows)
    engine = DuckDBEngine(connection=con, database=a.database)
    cols = ", ".join(f'"{q}"' for q in QIS)
    baseline_sql = (f"CREATE OR REPLACE TEMP TABLE scan AS SELECT {cols}, count(*) AS n "
                    f"FROM adult_big GROUP BY {cols}")

    def baseline() -> float:
        t = time.perf_counter()
        con.execute(baseline_sql)
        return time.perf_counter() - t

    def risk() -> tuple[float, float, dict]:
        t = time.perf_counter()
        usa = analyze(engine, table("adult_big"), QIS, population=USA)
        read = time.perf_counter() - t
        out = {"usa": usa.as_dict()}
        for f in (0.01, 0.1):
            out[f"f={f}"] = of_histogram(usa.histogram, population=round(a.rows / f)).as_dict()
        return time.perf_counter() - t, read, out

    baseline()
    risk()
    bs, rs, reads = [], [], []
    report: dict = {}
    for i in range(a.runs):
        bs.append(baseline())
        r, read, report = risk()
        rs.append(r)
        reads.append(read)
        print(f"run {i + 1}: GROUP BY scan {bs[-1]:.3f} s   risk figures {rs[-1]:.3f} s "
              f"(histogram and USA estimates {read:.3f} s)")
    mb, mr = statistics.median(bs), statistics.median(rs)
    print(f"rows {a.rows:,}; median GROUP BY scan {mb:.3f} s; median risk figures {mr:.3f} s; "
          f"ratio risk/scan {mr / mb:.2f}")
    summary = {k: {"classes": v["sample"]["classes"], "average_risk": v["sample"]["average_risk"],
                   **{e: v["population"][e]["fraction"] for e in ("zayatz", "pitman", "snb", "dankar")},
                   "dankar_model": v["population"]["dankar_model"]} for k, v in report.items()}
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
