"""Individual-ranking microaggregation of 5 numeric attributes in DuckDB, against its window sorts alone.

The table has ``--rows`` rows: ``id`` (0..n-1) and five DOUBLE attributes from a Park–Miller step of
the id, ``x_j = ((id * A_j) mod (2^31 - 1)) / 1000`` with five multipliers (deterministic, no hash
function), plus ``x4`` reduced modulo 1000 so that it has many ties.

Baseline, measured in the same run on the same table: the same five sorts without the aggregation,
``CREATE TEMP TABLE ... AS SELECT id, x0..x4, ROW_NUMBER() OVER (ORDER BY x_j, id) ...``. The measured
query is ``CREATE TEMP TABLE ... AS <individual_ranking(k = 3, key = id)>``. Runs alternate (baseline,
ranking, ...) after one warm-up each; the script prints every run, the medians and their ratio. The
source table lives in a DuckDB file in a temporary directory, which also takes what DuckDB spills; each
output is dropped after its run (untimed).
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import duckdb
from sqlglot import exp

from sqlanon.methods.microaggregation.algorithms.sql_ranking import individual_ranking
from sqlanon.sql.nodes import alias, col, table
from sqlanon.sql.render import render

MULTIPLIERS = (48271, 16807, 69621, 39373, 950706376)
ATTRIBUTES = [f"x{j}" for j in range(len(MULTIPLIERS))]


def make_table(con: duckdb.DuckDBPyConnection, rows: int) -> None:
    parts = [f"((range * {m}) % 2147483647) / 1000.0" for m in MULTIPLIERS]
    parts[-1] = f"((range * {MULTIPLIERS[-1]}) % 2147483647) % 1000"
    cols = ", ".join(f"CAST({p} AS DOUBLE) AS x{j}" for j, p in enumerate(parts))
    con.execute(f"CREATE OR REPLACE TABLE data AS SELECT range AS id, {cols} FROM range({int(rows)})")


def sorts_only() -> exp.Select:
    windows = [alias(exp.Window(this=exp.RowNumber(),
                                order=exp.Order(expressions=[exp.Ordered(this=col(a)),
                                                             exp.Ordered(this=col("id"))])), f"rn_{a}")
               for a in ATTRIBUTES]
    return exp.select(col("id"), *map(col, ATTRIBUTES), *windows).from_(table("data"))


def timed(con: duckdb.DuckDBPyConnection, sql: str) -> float:
    """Seconds to run ``sql`` (a CREATE TABLE AS); the table is dropped afterwards, untimed."""
    t = time.perf_counter()
    con.execute(sql)
    seconds = time.perf_counter() - t
    con.execute("DROP TABLE IF EXISTS out_sorts")
    con.execute("DROP TABLE IF EXISTS out_ranking")
    return seconds


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=int, default=10_000_000)
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--k", type=int, default=3)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--statistic", default="mean", choices=["mean", "median"])
    a = p.parse_args()

    work = Path(tempfile.mkdtemp(prefix="sqlanon-ranking-"))
    try:
        run(a, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def run(a: argparse.Namespace, work: Path) -> None:
    # a database file and a spill folder in a temporary directory: at 100M rows the table and the
    # sorts outgrow memory, and DuckDB would otherwise spill into the working directory
    con = duckdb.connect(str(work / "ranking.duckdb"))
    con.execute(f"SET threads = {int(a.threads)}")
    con.execute(f"SET temp_directory = '{work / 'spill'}'")
    make_table(con, a.rows)
    base = "CREATE OR REPLACE TEMP TABLE out_sorts AS " + render(sorts_only(), "duckdb")
    query = individual_ranking("data", ["id", *ATTRIBUTES], ATTRIBUTES, a.k, key=["id"],
                               statistic=a.statistic)
    ranking = "CREATE OR REPLACE TEMP TABLE out_ranking AS " + render(query, "duckdb")
    timed(con, base)
    timed(con, ranking)
    runs: dict[str, list[float]] = {"sorts": [], "ranking": []}
    for i in range(a.runs):
        runs["sorts"].append(timed(con, base))
        runs["ranking"].append(timed(con, ranking))
        print(f"run {i + 1}: sorts {runs['sorts'][-1]:.2f} s, ranking {runs['ranking'][-1]:.2f} s",
              flush=True)
    med = {name: statistics.median(t) for name, t in runs.items()}
    print(json.dumps({"rows": a.rows, "k": a.k, "statistic": a.statistic, "threads": a.threads,
                      "median_s": {n: round(v, 3) for n, v in med.items()},
                      "ratio": round(med["ranking"] / med["sorts"], 3)}))


if __name__ == "__main__":
    main()
