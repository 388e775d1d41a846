"""Noise on 5 numeric columns of N rows against a plain ``CREATE TABLE ... AS SELECT`` copy of them.

The table ``big`` (5 DOUBLE columns, no key) is generated deterministically inside DuckDB from
``hash(i)``. Each round runs, in turn:

* ``copy``: the baseline, ``CREATE TABLE copy AS SELECT c1, ..., c5 FROM big``;
* one series per ``--mechanism`` (comma-separated, default ``uncorrelated``): ``sqlanon.api.apply``
  with ``transformation: {method: noise, mechanism: ...}`` on all 5 columns, ``metrics=()`` (no
  utility report), output a new table. The noise is drawn in numpy and joined by position to row
  blocks of 2^20 row ids, written in parallel (``sqlanon.engines.duckdb_blocks``);
* with ``--sql-random``, also ``sql_random``: the alternative sqlanon does not use, Gaussian noise of
  the same variances from DuckDB's ``random()`` (Box–Muller) inside the same CREATE TABLE AS;
* with ``--floor``, also ``zeros_joined``: the same positional CREATE TABLE AS with an Arrow stream
  of zeros, nothing drawn: what joining per-row values costs by itself.

One untimed round of every series runs first (``--warmup``). Outputs are dropped (and the database
checkpointed, untimed) between runs. The script prints every
run's wall seconds, the medians and their ratio to the baseline's median, and the process's peak
resident memory. The database is a temporary DuckDB file with an 8 GB memory limit (so 100M rows
spill to disk instead of filling memory) unless ``--database`` / ``--memory-limit`` say otherwise.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import tempfile
import time
import warnings
from dataclasses import replace
from pathlib import Path

import numpy as np
import pyarrow as pa

from sqlanon import api
from sqlanon.engines.duckdb import DuckDBEngine
from sqlanon.methods.rng import ReproducibleNoiseWarning
from sqlanon.spec import spec_from_dict

COLUMNS = [f"c{i}" for i in range(1, 6)]


def build(engine: DuckDBEngine, rows: int) -> None:
    values = ", ".join(f"((hash(i * 5 + {j}) % 1000003) / 1000.0) AS {c}"
                       for j, c in enumerate(COLUMNS))
    engine.execute_script(f"CREATE OR REPLACE TABLE big AS SELECT {values} FROM range({int(rows)}) r(i)")


def mechanism_options(mechanism: str) -> dict:
    if mechanism in ("uncorrelated", "correlated"):
        return {"alpha": 0.5}
    if mechanism == "laplace":
        return {"epsilon": 1.0, "sensitivity": 1.0, "bounds": {c: [0, 1000.003] for c in COLUMNS}}
    if mechanism == "gaussian":
        return {"epsilon": 1.0, "delta": 1e-6, "sensitivity": 1.0}
    if mechanism in ("staircase",):
        return {"epsilon": 1.0, "sensitivity": 1.0}
    raise SystemExit("--mechanism takes uncorrelated, correlated, laplace, gaussian, staircase")


def timed(run) -> float:
    start = time.perf_counter()
    run()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--warmup", type=int, default=1, help="untimed full-size rounds first")
    parser.add_argument("--mechanism", default="uncorrelated",
                        help="comma-separated: uncorrelated, correlated, laplace, gaussian, staircase")
    parser.add_argument("--sql-random", action="store_true",
                        help="also time Gaussian noise from the engine's random() (not used by sqlanon)")
    parser.add_argument("--floor", action="store_true",
                        help="also time the positional join of an Arrow stream of zeros")
    parser.add_argument("--database", default=None,
                        help="DuckDB file (default: a temporary file, removed at the end)")
    parser.add_argument("--threads", type=int, default=None, help="DuckDB threads (default: DuckDB's)")
    parser.add_argument("--memory-limit", default="8GB",
                        help="DuckDB memory_limit (default 8GB; DuckDB spills beyond it)")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="sqlanon_noise_bench_") as tmp:
        database = args.database or str(Path(tmp) / "bench.duckdb")
        engine = DuckDBEngine(database)
        if args.threads:
            engine.execute_script(f"SET threads = {int(args.threads)}")
        if args.memory_limit:
            engine.con.execute(f"SET memory_limit = '{args.memory_limit.replace(chr(39), '')}'")
        start = time.perf_counter()
        build(engine, args.rows)
        print(f"rows {args.rows:,}, 5 DOUBLE columns, built in {time.perf_counter() - start:.1f} s; "
              f"database {database if args.database else 'temporary file'}")
        mechanisms = [m.strip() for m in args.mechanism.split(",") if m.strip()]
        specs = {m: spec_from_dict({
            "source": {"table": "big"},
            "attributes": {c: {"role": "sensitive"} for c in COLUMNS},
            "transformation": {"method": "noise", "mechanism": m, "attributes": COLUMNS,
                               **mechanism_options(m)},
            "output": {"mode": "table", "name": "noisy"}}) for m in mechanisms}
        sds = [float(v) for v in engine.con.execute(
            "SELECT " + ", ".join(f"stddev_samp({c})" for c in COLUMNS) + " FROM big").fetchone()]
        random_sql = ", ".join(
            f"{c} + {0.5 ** 0.5 * sd!r} * sqrt(-2 * ln(1 - random())) * cos(2 * pi() * random()) AS {c}"
            for c, sd in zip(COLUMNS, sds))

        def copy() -> None:
            engine.execute_script("CREATE TABLE copy AS SELECT " + ", ".join(COLUMNS) + " FROM big")

        def noise(spec) -> None:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ReproducibleNoiseWarning)
                api.apply(spec, engine=engine, metrics=())

        def sql_random() -> None:
            engine.execute_script(f"CREATE TABLE sqlrandom AS SELECT {random_sql} FROM big")

        zeros = np.zeros(1 << 20)
        zero_schema = pa.schema([(f"z{i}", pa.float64()) for i in range(len(COLUMNS))])

        def zeros_joined() -> None:
            def batches():
                done = 0
                while done < args.rows:
                    size = min(1 << 20, args.rows - done)
                    yield pa.RecordBatch.from_arrays([zeros[:size]] * len(COLUMNS), schema=zero_schema)
                    done += size

            engine.con.register("zero_stream", pa.RecordBatchReader.from_batches(zero_schema, batches()))
            engine.execute_script("CREATE TABLE zeros_joined AS SELECT " + ", ".join(
                f"b.{c} + z.z{i} AS {c}" for i, c in enumerate(COLUMNS))
                + " FROM big AS b POSITIONAL JOIN zero_stream AS z")
            engine.con.unregister("zero_stream")

        series = {"copy": (copy, "copy")}
        for m, spec in specs.items():
            series[m] = (lambda spec=spec: noise(spec), "noisy")
        if args.sql_random:
            series["sql_random"] = (sql_random, "sqlrandom")
        if args.floor:
            series["zeros_joined"] = (zeros_joined, "zeros_joined")
        # first calls import modules (pyarrow, numpy paths): warm up on a small table, untimed
        engine.execute_script("CREATE TABLE warm AS SELECT * FROM big LIMIT 1000")
        for spec in specs.values():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ReproducibleNoiseWarning)
                api.apply(replace(spec, source=replace(spec.source, table="warm")), engine=engine,
                          metrics=())
            engine.execute_script("DROP TABLE noisy")
        times: dict[str, list[float]] = {name: [] for name in series}
        # one untimed round at full size first: the first large statement of a process pays for
        # growing the engine's memory (1.7-2x the later runs at 100M rows)
        for round_ in range(args.warmup + args.runs):
            for name, (run, table) in series.items():
                took = timed(run)
                if round_ >= args.warmup:
                    times[name].append(took)
                engine.execute_script(f"DROP TABLE {table}")
                engine.execute_script("CHECKPOINT")  # untimed: no run pays for the previous one's drop
        base = statistics.median(times["copy"])
        for name, values in times.items():
            median = statistics.median(values)
            print(f"{name:>13}: runs " + ", ".join(f"{t:.2f}" for t in values)
                  + f" s; median {median:.2f} s; ratio to copy {median / base:.2f}")
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2 ** 20
        print(f"peak resident memory of the process: {peak:.1f} GB")
        engine.close()


if __name__ == "__main__":
    main()
