"""DuckDB's statements over small tables on one thread against its default, for ``Engine.sized_for``.

A run that opens its own DuckDB connection over a source of at most one row group (122,880 rows)
sets ``threads = 1`` (sqlanon/engines/duckdb.py). This measures why: per table size, the median of
``--runs`` of each statement, with ``threads`` at 1 and at 2 (this machine's default), alternating,
each statement in a transaction rolled back:

* ``CREATE TABLE AS`` of the whole table, stored in the file (as an output is written);
* ``CREATE TEMPORARY TABLE AS`` of it (as the check's scan is kept);
* a ``GROUP BY`` of five columns into a temporary table, and the same read into NumPy arrays (as the
  search's load reads its frequency table).

The tables are the large-hierarchy table of ``bench/large_hierarchy.py`` (an id, ZIP code, age, sex,
race, marital status, education, hours, region, income) at each size, in a DuckDB file.

Last measured (``python -m bench.duckdb_threads``, idle machine, 2 cores): see bench/README.md,
"Threads on a small source".
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import duckdb

from bench.large_hierarchy import people_sql

SIZES = (10_000, 100_000, 122_880, 245_760, 1_000_000)

STATEMENTS = {
    "CREATE TABLE AS": "CREATE TABLE o AS SELECT * FROM {t}",
    "CREATE TEMPORARY TABLE AS": "CREATE TEMPORARY TABLE o AS SELECT * FROM {t}",
    "GROUP BY into a temporary table": "CREATE TEMPORARY TABLE o AS SELECT age, sex, race, marital, "
                                       "education, count(*) AS n FROM {t} GROUP BY ALL",
    "GROUP BY read into NumPy": "SELECT age, sex, race, marital, education, count(*) AS n FROM {t} "
                                "GROUP BY ALL",
}


def source(con: duckdb.DuckDBPyConnection, rows: int) -> str:
    name = f"src_{rows}"
    con.execute(people_sql(rows, 100_000, name))
    return name


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)))
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    folder = Path(tempfile.mkdtemp(prefix="sqlanon-threads-"))
    con = duckdb.connect(str(folder / "threads.duckdb"))
    default = int(con.execute("SELECT current_setting('threads')").fetchall()[0][0])
    tables = {rows: source(con, rows) for rows in sizes}
    con.execute("CHECKPOINT")
    seconds: dict[tuple[str, int, int], list[float]] = {}
    for _ in range(args.runs):
        for rows, name in tables.items():
            for statement, text in STATEMENTS.items():
                for threads in (1, default):
                    con.execute(f"SET threads = {threads}")
                    con.execute("BEGIN TRANSACTION")
                    start = time.perf_counter()
                    result = con.execute(text.format(t=name))
                    if statement.endswith("NumPy"):
                        result.fetchnumpy()
                    seconds.setdefault((statement, rows, threads), []).append(time.perf_counter() - start)
                    con.execute("ROLLBACK")
    print(f"runs={args.runs} (medians, ms); threads 1 against {default} (the default here); in {folder}")
    for statement in STATEMENTS:
        cells = []
        for rows in sizes:
            one, many = (statistics.median(seconds[statement, rows, t]) * 1000 for t in (1, default))
            cells.append(f"{rows:,} rows {one:.1f} / {many:.1f} ({one / many:.2f})")
        print(f"{statement}: " + "; ".join(cells))


if __name__ == "__main__":
    main()
