"""Where the in-memory search's memory goes: Python's allocations at the optimal search's peak.

Data: Adult grown to ``--rows`` rows, the Parquet file of ``bench/spark_bench.py`` (grown there once,
``--data``), read by DuckDB (2 threads, ``--duckdb-memory``) as a view. Subject: that script's
``search`` (k = 5, 2 % suppression, Loss: the frequency table in DuckDB, the search in memory), run
once under :mod:`tracemalloc`. The script prints the search's time (slower under tracing), the traced
peak of the load and of the node checks, the arrays held after the node check that held the most
(allocations grouped by source line, the largest first) and the process's peak resident memory
(``ru_maxrss``: DuckDB's own memory included, which tracing does not see).

Measured (load average 4.0 to 4.4; the same script on the commit before the narrowing, 8845173, in
brackets):

* 10M rows (1,558,130 distinct combinations): traced peak of the node checks 284 MB (843 MB), 191
  bytes per combination (567), the same node (0, 3, 0, 0, 1, 1, 0, 0, 0); of the load 110 MB (359 MB);
  peak RSS 629 MB (1,181 MB).
* 100M rows (5,970,482 combinations): traced peak 961 MB (2,866 MB, load average 2.4 to 3.7), 169
  bytes per combination (503), the same node (0, 3, 0, 0, 0, 0, 0, 0, 0); of the load 434 MB
  (1,369 MB); peak RSS 1,344 MB (3,346 MB).

Before, the arrays held at the peak at 100M (MiB): the leaves under each frequency row's label per
attribute and level, kept by Loss (774), the level codes in int32 (615), the block keys in int32
(516), the leaf codes in int64 (410), the class numbers and sizes of the cached tables (190), the
row counts in int64 and float64 and the row ids (137). Now the codes take a byte each, block keys
two, Loss keeps its terms only while they take at most 64 MB and otherwise gathers them for each
check's suppressed rows, and the cache keeps only tables that can serve a roll-up. What remains at
100M: block keys and the cached tables' class numbers (327), the level codes (154), the cached
tables' sizes (78), the leaf codes (51), the counts (91).

    python -m bench.search_memory --rows 10000000
"""

from __future__ import annotations

import argparse
import resource
import time
import tracemalloc
from pathlib import Path
from typing import Any

from bench.spark_bench import SOURCE, parquet_file, subjects
from sqlanon.engines.duckdb import DuckDBEngine
from sqlanon.methods.generalization.search import fast

LINES = 12
"""Source lines printed, the largest first."""


class PeakWatch:
    """The traced memory after each node check: the snapshot of the check that held the most."""

    def __init__(self) -> None:
        self.held, self.node, self.load_peak = 0, None, 0
        self.snapshot: tracemalloc.Snapshot | None = None

    def after_check(self, node: Any) -> None:
        held, _ = tracemalloc.get_traced_memory()
        if held > self.held:
            self.held, self.node, self.snapshot = held, tuple(node), tracemalloc.take_snapshot()


def watched(watch: PeakWatch) -> None:
    """Wrap the in-memory evaluator's load and node check to record the traced memory."""
    load, evaluate = fast.FastEvaluator._load, fast.FastEvaluator.evaluate

    def traced_load(self: Any, ev: Any) -> None:
        tracemalloc.reset_peak()
        load(self, ev)
        watch.load_peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.reset_peak()

    def traced_evaluate(self: Any, node: Any, **options: Any) -> Any:
        result = evaluate(self, node, **options)
        watch.after_check(node)
        return result

    fast.FastEvaluator._load = traced_load  # type: ignore[method-assign]
    fast.FastEvaluator.evaluate = traced_evaluate  # type: ignore[method-assign]


def main() -> None:
    root = Path(__file__).resolve().parents[1]
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=int, default=10_000_000)
    p.add_argument("--data", default=str(root / "bench" / "results"))
    p.add_argument("--adult-dir", default=str(root.parent / "shared" / "data" / "adult"))
    p.add_argument("--duckdb-memory", default="4GB", help="DuckDB's memory_limit")
    a = p.parse_args()
    path = parquet_file(Path(a.data), a.rows, str(Path(a.adult_dir) / "adult.csv"))
    engine = DuckDBEngine(":memory:")
    engine.execute_script(f"SET threads = 2; SET memory_limit = '{a.duckdb_memory}'")
    engine.execute_script(f"CREATE VIEW {SOURCE} AS SELECT * FROM read_parquet('{path}')")
    search = subjects(engine, Path(a.adult_dir))["search"][1]
    watch = PeakWatch()
    watched(watch)
    tracemalloc.start()
    started = time.perf_counter()
    node = search()
    seconds = time.perf_counter() - started
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    mb = 2**20
    print(f"{a.rows:,} rows: search {seconds:.1f} s (traced), node {node}; traced peak of the load "
          f"{watch.load_peak / mb:,.0f} MB, of the node checks {peak / mb:,.0f} MB; peak RSS "
          f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:,.0f} MB")
    if watch.snapshot is not None:
        print(f"held after checking {watch.node}: {watch.held / mb:,.0f} MB, by line:")
        for stat in watch.snapshot.statistics("lineno")[:LINES]:
            print(f"  {stat.size / mb:8.1f} MB in {stat.count:4d} blocks  {stat.traceback[0]}")


if __name__ == "__main__":
    main()
