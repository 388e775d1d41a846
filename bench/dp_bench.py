"""DP microdata and DP queries in DuckDB, each against a plain statement over the same table.

Data: ``../shared/data/mdav/synthetic_normal_100k_x5_seed42.csv`` (100,000 rows, five standard normal
columns x1..x5), repeated ``--copies`` times (copy c adds c/1000 to every value, so rows stay
distinct). Public bounds: [-6, 6] for every column (a declared domain, not the data's range).

Microdata: ``dp_microaggregate`` (k = 5, ε = 1, all five columns, no utility report) with
``individual_ranking`` and ``insensitive``; baseline ``CREATE TABLE copy AS SELECT x1..x5 FROM
data`` (the plain copy of the released columns). Queries: ``dp_query`` for a count, a sum and a
mean, each against the plain aggregate statement over the same table (the ledger's transaction and
the noise are the difference).
Runs alternate baseline and subject after one warm-up each; the script prints every run, the medians
and the ratios.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
import warnings
from pathlib import Path

from sqlanon.engines.duckdb import DuckDBEngine
from sqlanon.methods.dp.aggregates import Count, Mean, Sum
from sqlanon.methods.dp.microdata import dp_microaggregate
from sqlanon.methods.dp.queries import dp_query
from sqlanon.methods.rng import ReproducibleNoiseWarning

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "mdav" \
    / "synthetic_normal_100k_x5_seed42.csv"
COLUMNS = [f"x{i}" for i in range(1, 6)]


def make_table(engine: DuckDBEngine, copies: int) -> int:
    cols = ", ".join(f"x{i} + c / 1000.0 AS x{i}" for i in range(1, 6))
    engine.con.execute(f"CREATE OR REPLACE TABLE data AS SELECT {cols} FROM read_csv(?, header = true) "
                       f"CROSS JOIN range({int(copies)}) AS r(c)", [str(DATA)])
    return engine.row_count("data")


def timed(fn) -> float:  # type: ignore[no-untyped-def]
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def compare(name: str, baseline, subject, runs: int) -> dict:  # type: ignore[no-untyped-def]
    baseline()
    subject()
    times: dict[str, list[float]] = {"baseline": [], "subject": []}
    for i in range(runs):
        times["baseline"].append(timed(baseline))
        times["subject"].append(timed(subject))
        print(f"{name} run {i + 1}: baseline {times['baseline'][-1]:.3f} s, "
              f"subject {times['subject'][-1]:.3f} s", flush=True)
    med = {k: statistics.median(v) for k, v in times.items()}
    return {"median_s": {k: round(v, 4) for k, v in med.items()},
            "ratio": round(med["subject"] / med["baseline"], 2)}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--copies", type=int, default=1)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--threads", type=int, default=2)
    a = p.parse_args()
    warnings.simplefilter("ignore", ReproducibleNoiseWarning)

    engine = DuckDBEngine()
    engine.con.execute(f"SET threads = {int(a.threads)}")
    rows = make_table(engine, a.copies)
    bounds = {c: (-6.0, 6.0) for c in COLUMNS}
    copy_sql = f"CREATE OR REPLACE TABLE copy AS SELECT {', '.join(COLUMNS)} FROM data"
    results: dict[str, dict] = {}
    for method in ("individual_ranking", "insensitive"):
        results[f"microdata_{method}"] = compare(
            method, lambda: engine.con.execute(copy_sql),
            lambda m=method: dp_microaggregate(engine, "data", "data_dp", k=5, epsilon=1.0,
                                               bounds=bounds, method=m, replace=True,
                                               quality=False), a.runs)
    engine.con.execute("DROP TABLE IF EXISTS sqlanon_privacy_budget")
    engine.con.execute("DROP TABLE IF EXISTS sqlanon_privacy_ledger")
    budget = 1e9
    for label, aggregate in (("count", Count()), ("sum", Sum("x1", -6, 6)), ("mean", Mean("x1", -6, 6))):
        plain = aggregate.query("data")
        results[f"query_{label}"] = compare(
            label, lambda q=plain: engine.fetch(q),
            lambda g=aggregate: dp_query(engine, "data", g, epsilon=0.01, budget_epsilon=budget),
            a.runs)
    print(json.dumps({"rows": rows, "threads": a.threads, "k": 5, **results}))


if __name__ == "__main__":
    main()
