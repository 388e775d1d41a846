"""CASE map or lookup join? Times generalizing one column of N rows both ways, per domain size.

For each domain size d, a table of N rows with a text column drawn from d values is generalized to
level 1 of a two-level hierarchy (value -> value's group) by (a) a CASE map and (b) a LEFT JOIN on a
lookup table, each as `CREATE TEMP TABLE ... AS SELECT`. Prints the median of 5 runs per method and
the ratio CASE / join. sqlanon's `CASE_MAP_MAX_LEAVES` is set from this measurement.
"""

from __future__ import annotations

import argparse
import statistics
import time

import duckdb
from sqlglot import exp

from sqlanon.domain.hierarchy import TableHierarchy
from sqlanon.sql.nodes import col
from sqlanon.sql.render import render


def timed(con: duckdb.DuckDBPyConnection, sql: str, runs: int) -> float:
    times = []
    for _ in range(runs):
        con.execute("DROP TABLE IF EXISTS out")
        t = time.perf_counter()
        con.execute(sql)
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=int, default=10_000_000)
    p.add_argument("--runs", type=int, default=5)
    a = p.parse_args()
    con = duckdb.connect()
    print(f"rows={a.rows:,}  runs={a.runs}  (medians, seconds)")
    print(f"{'domain':>8} {'CASE':>8} {'join':>8} {'CASE/join':>10}")
    for d in (8, 32, 64, 128, 512, 4096):
        con.execute(f"CREATE OR REPLACE TABLE t AS SELECT 'v' || (range * 7919 % {d}) AS x "
                    f"FROM range({a.rows})")
        h = TableHierarchy([[f"v{i}", f"g{i // 4}", "*"] for i in range(d)])
        case_sql = "CREATE TEMP TABLE out AS " + render(
            exp.select(exp.alias_(h.expression(col("x"), 1), "g")).from_("t"), "duckdb")
        con.execute("CREATE OR REPLACE TABLE lk AS SELECT * FROM (VALUES "
                    + ", ".join(f"('v{i}', 'g{i // 4}')" for i in range(d)) + ") v(leaf, l1)")
        join_sql = "CREATE TEMP TABLE out AS SELECT lk.l1 AS g FROM t LEFT JOIN lk ON lk.leaf = t.x"
        tc, tj = timed(con, case_sql, a.runs), timed(con, join_sql, a.runs)
        print(f"{d:>8} {tc:>8.3f} {tj:>8.3f} {tc / tj:>10.2f}")


if __name__ == "__main__":
    main()
