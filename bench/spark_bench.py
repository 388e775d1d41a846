"""sqlanon on Spark (local mode) against Spark's own baselines, and the same work on DuckDB, in one run.

Data: Adult grown to ``--rows`` rows (``bench/grow_adult.py``, scheme ``quads``: the 9 attributes of
Adult) plus five DOUBLE columns ``x0``..``x4`` from a Park–Miller step of the row number (as
``bench/ranking_bench.py``; ``x4`` has many ties), written once as a Parquet file (``--data``, kept for
later runs) a million rows at a time, so that growing 100M rows takes the memory of a million (some
10 minutes on 2 busy cores; growing them as one sorted DuckDB table took 16 GB, or crawled when
DuckDB was limited to 5 GB). Both engines read that file where it is: Spark as a temporary view of the
file, DuckDB as a view over ``read_parquet``.

Each engine runs four subjects, each against its baseline, alternating (baseline, subject, ...) after
one untimed warm-up of each (``--no-warm-up``: none; at 100M rows a warm-up costs as much as a run):

* ``search``: the optimal search (k = 5, 2 % suppression, Loss): the frequency table in the engine, the
  search in memory. Baseline: one ``GROUP BY`` of the 9 QIs, read by the driver as Arrow (as the search
  reads it).
* ``check``: ``check`` of k = 5 + recursive (4,3)-diversity of occupation + ordered 0.2-closeness of
  education at fixed levels (``bench/check_bench.py``'s spec). Baseline: the same ``GROUP BY``.
* ``ranking``: ``apply`` of individual ranking (k = 3) of x0..x4, written as a table. Baseline: the five
  window sorts alone (``ROW_NUMBER() OVER (ORDER BY x_j, id)``) written as a table.
* ``noise``: ``apply`` of uncorrelated noise on x0..x4 (seeded), written as a table with every
  column of the source. Baseline: ``CREATE TABLE AS SELECT *`` (a plain copy of the same columns).
* ``ranking_across_tasks`` (Spark only, no goal): ``ranking`` with the rows numbered across tasks
  (``one_task_sort_rows=0``) instead of sorted in one task, against the same baseline.

Every written table is dropped before the run that writes it (inside the timing, for both). Search and
check share their baseline, timed with the first of them to run (the other's ratio reuses its times).

Goals (the Spark column): search ≤ 3×, check ≤ 2×, ranking ≤ 2×, noise ≤ 2× their baselines. The script
prints every run, the medians, the ratios, the CPU seconds of each timed run (user and system time of
this process and of Spark's JVM, which vary less than wall time on a shared machine), the peak
resident memory of Spark's JVM (``VmHWM``; in
local mode the JVM is the driver and the executors at once) and of this process, the Python driver
(``ru_maxrss``), after the Spark runs and again at the end (DuckDB runs inside this process). A subject an
engine refuses is reported with the refusal.

Last measured (10M rows, ``--runs 3 --only noise --engines spark``, on 2 cores shared with other
work, load average 7 to 9, another Spark job running beside it): noise 77.2 s against a 41.8 s
copy, 1.85× (runs 73.0, 78.6, 77.2 s against 42.9, 40.0, 41.8 s), after the statements reading the
mapped rows took the Arrow UDF's row path (columnar input off) and batches of 65,536 ids; with the
row path alone, in a run just before (load average 3 to 8): 43.9 s against 20.6 s, 2.13×. Before
both, on an idle machine: 34.5 s against 13.5 s, 2.56×. Earlier (load average 13 to 16): noise
184.2 s against a 70.9 s copy, 2.60× (its former ``mapInArrow``
form, in a run just before: 168.5 s against 74.3 s, 2.27×; within the runs' spread). Side by side in
one session on the first million rows: 2.38× against 2.76×. Individual ranking (10M rows, ``--runs 1
--only ranking --engines spark``, load average 5 to 8, beside another 10M Spark benchmark and a Spark
test run): 259.5 s against the bare window sort's 164.0 s, 1.58× (CPU seconds 174.0 against 89.7,
1.94×), the JVM's peak 1,678 MB; before, with the rows numbered by range partitions, 4.55× on the
first million rows and 4.2× at 10M. docs/spark.md has the details.

One-task sort against numbering across tasks (10M rows, ``--runs 1 --no-warm-up --only
ranking,ranking_across_tasks --engines spark``, run with ``nice -n 10`` beside two other
Spark jobs, load average 6 to 8): the bare window sort 445.3 s, the ranking 519.5 s
(1.17; CPU seconds 202.1 against 105.2, 1.92), numbered across tasks 606.4 s (1.36); the JVM's
peak 1,706 MB, the driver's 210 MB. From Spark's event log, the executors' CPU time: 78 s, 144 s
(88 s of it the one sorting task) and 223 s.

Spark runs as ``local[N]`` (``--master``, default ``local[2]``) with ``spark.sql.shuffle.partitions``
(``--partitions``, default 8) and Spark's other defaults (1 GB of driver memory); DuckDB with the
same number of threads and a ``memory_limit`` of 6 GB (``--duckdb-memory``). ``--only`` runs the subjects
named, in the order named.

100M rows, idle (``--runs 1 --no-warm-up --master 'local[2,3]' --spark-conf spark.driver.memory=3g
--only search,check,noise --engines spark``, load average about 2): search 101.1 s against an 80.7 s
baseline (1.25), check 55.8 s (0.69), noise 164.7 s against a 107.9 s copy (1.53); peak resident
memory of the Python driver 3,315 MB and of the JVM 3,504 MB. With the default 1 GB heap the
baseline's text ``GROUP BY`` fails (``TaskResultLost``) in every attempt. After the search's
in-memory arrays were narrowed (``--only search``, the command otherwise the same, load average 4.6
to 7.8, two other Spark applications beside it): the Python driver's peak 1,408 MB (goal < 2 GB),
the JVM's 3,352 MB; search 425.0 s against a 521.4 s baseline (0.82; CPU seconds 189.4 against
199.7), the same node; ``bench/search_memory.py`` shows where the search's memory goes.

Individual ranking at 100M rows (the same settings plus ``--spark-conf spark.eventLog.enabled=true``,
``--only ranking``), on a busy machine: the bare window sort 1,813 s (load average 2.0 to 10.6;
from the event log, as the run stopped before printing), 1,753 s of it its one sorting task, which
spilled 48.4 GB to disk; the ranking, timed alone in a new process afterwards (load average 3.3 to
9.1), 1,872.4 s: 1.03 times; CPU seconds 1,778 (the executors' 1,442 against the sort's 930,
1.55); the JVM's peak 3,706 MB, the driver's 212 MB.
In one run (``--only ranking``, the same settings, from a copy of the code that did not change
under it): the sort 1,362.9 s (a test run of the whole suite beside it for its first 19 minutes, load
average 3.5 to 8.9), the ranking 1,248.2 s (load average 1.6 to 2.6): 0.92 times; CPU seconds 976.1
against 1,723.7, 1.77 times; the JVM's peak 3,734 MB, the driver's 216 MB.

Earlier, 100M rows (one run, no warm-up, load average 8 to 19, Spark and DuckDB in two processes side by side;
docs/spark.md, "Measured on one machine"): Spark's baseline took 13 min 21 s in one run and failed in
the next after 13 min 32 s (``TaskResultLost``: the driver's fetch of a task's result from its own
block manager ran out of the 1 GB heap); the search was still in its ``GROUP BY`` after 13 min (the
leaf-code joins shuffled the source into the two partitions of ``sex``; since fixed, not yet timed at
100M: at 10M, after the fix, 32.3 s against 28.0 s, 1.15); check, noise and ranking were not reached.
Peak resident memory: the Python driver 855 MB, the JVM 1,551 MB. DuckDB (its first two timings at
the lowest priority): search 11 min 53 s, check 84.5 s, noise 11 min 51 s against its copy's
8 min 37 s (1.38); the process's peak 6.4 GB.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import duckdb
from sqlglot import exp

from bench.check_bench import spec as check_spec
from bench.grow_adult import QIS, grown_rows, load_source
from sqlanon import api
from sqlanon.domain.hierarchy import read_arx_csv
from sqlanon.domain.models.k_anonymity import KAnonymity
from sqlanon.engines.base import Engine
from sqlanon.engines.duckdb import DuckDBEngine
from sqlanon.errors import SqlanonError
from sqlanon.methods.generalization.evaluator import Evaluator, Problem
from sqlanon.methods.generalization.search import lattice_of
from sqlanon.methods.generalization.search.fast import FastNodeEvaluator
from sqlanon.methods.generalization.search.limits import search_within
from sqlanon.methods.rng import ReproducibleNoiseWarning
from sqlanon.spec import spec_from_dict
from sqlanon.sql.nodes import alias, col, table

MULTIPLIERS = (48271, 16807, 69621, 39373, 950706376)
NUMERIC = [f"x{j}" for j in range(len(MULTIPLIERS))]
SOURCE = "adult_big"


def quoted(names: list[str]) -> str:
    return ", ".join('"' + n.replace('"', '""') + '"' for n in names)


CHUNK = 1_000_000
"""Rows grown and written at a time (one Parquet row group each): memory stays that of one chunk."""


def parquet_file(folder: Path, rows: int, adult_csv: str) -> Path:
    """The grown table as Parquet, made once per row count: row r of the grown table with its id r,
    written chunk by chunk in order of r."""
    import pyarrow.parquet as pq

    path = folder / f"adult_quads_{rows}.parquet"
    if path.exists():
        return path
    folder.mkdir(parents=True, exist_ok=True)
    con = duckdb.connect()
    con.execute("SET enable_progress_bar = false").fetchall()
    started = time.perf_counter()
    n = load_source(con, adult_csv)
    parts = [f"((id * {m}) % 2147483647) / 1000.0" for m in MULTIPLIERS]
    parts[-1] = f"((id * {MULTIPLIERS[-1]}) % 2147483647) % 1000"
    numeric = ", ".join(f"CAST({p} AS DOUBLE) AS x{j}" for j, p in enumerate(parts))
    partial = path.with_suffix(".partial")
    writer = None
    for start in range(0, rows, CHUNK):
        chunk = con.sql(f"SELECT id, {quoted(QIS)}, {numeric} FROM "
                        f"({grown_rows(n, start, min(start + CHUNK, rows), 'quads', 'id')}) AS g "
                        f"ORDER BY id").to_arrow_table()
        if writer is None:
            writer = pq.ParquetWriter(partial, chunk.schema)
        writer.write_table(chunk, row_group_size=CHUNK)
    if writer is not None:
        writer.close()
    con.close()
    partial.rename(path)
    print(f"wrote {rows:,} rows to {path} in {time.perf_counter() - started:.0f} s")
    return path


def jvm_peak_mb() -> float | None:
    """The peak resident memory of the Java process this one started (Spark's JVM), if any."""
    me = str(os.getpid())
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
            if stat.rsplit(")", 1)[1].split()[1] != me:
                continue
            status = Path(f"/proc/{pid}/status").read_text()
        except OSError:
            continue
        if "java" in Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace"):
            for line in status.splitlines():
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    return None


def driver_peak_mb() -> float:
    """The peak resident memory of this process so far (DuckDB runs inside it)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def subjects(engine: Engine, adult_dir: Path) -> dict[str, tuple[Callable[[], Any], Callable[[], Any]]]:
    """Each subject as (baseline, subject), both run on ``engine``; baselines are sqlglot trees
    rendered by the engine (Spark reads ``"x"`` as a string, not a column)."""
    qis = [col(q) for q in QIS]
    group_by = exp.select(*qis, alias(exp.Count(this=exp.Star()), "n")).from_(table(SOURCE)).group_by(
        *[q.copy() for q in qis])
    hierarchies = {q: read_arx_csv(adult_dir / f"adult_hierarchy_{q}.csv") for q in QIS}

    def fetched(query: exp.Select) -> Callable[[], Any]:
        return lambda: engine.fetch_arrow(query).num_rows

    def written(name: str, query: exp.Select) -> Callable[[], Any]:
        def run() -> None:
            engine.drop(name)
            engine.create_table_as(name, query)
        return run

    def search() -> Any:
        problem = Problem(engine, table(SOURCE), QIS, hierarchies, [], [KAnonymity(5)])
        with Evaluator(problem) as ev:
            return search_within(lattice_of(problem), FastNodeEvaluator(ev, 0.02, "loss"), "optimal").node

    checking = spec_from_dict({**check_spec(adult_dir), "source": {"table": SOURCE}})

    def check() -> Any:
        return api.check(checking, engine=engine, metrics=()).as_dict()["classes"]

    ranking = spec_from_dict({
        "source": {"table": SOURCE},
        "attributes": {"id": "insensitive", **{x: {"role": "quasi_identifier"} for x in NUMERIC}},
        "transformation": {"method": "microaggregation", "algorithm": "individual_ranking", "k": 3,
                           "key": "id"},
        "output": {"mode": "table", "name": "ranked"}})
    windows = [alias(exp.Window(this=exp.RowNumber(), order=exp.Order(expressions=[
        exp.Ordered(this=col(x)), exp.Ordered(this=col("id"))])), f"r{j}") for j, x in enumerate(NUMERIC)]
    noise = spec_from_dict({
        "source": {"table": SOURCE},
        "attributes": {x: {"role": "sensitive"} for x in NUMERIC},
        "transformation": {"method": "noise", "mechanism": "uncorrelated", "attributes": NUMERIC,
                           "alpha": 0.5, "seed": 1},
        "output": {"mode": "table", "name": "noisy"}})

    def applied(spec: Any) -> Callable[[], Any]:
        def run() -> None:
            engine.drop(spec.output.name)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ReproducibleNoiseWarning)
                api.apply(spec, engine=engine, metrics=())
        return run

    def across_tasks(run: Callable[[], Any]) -> Callable[[], Any]:
        """``run`` with the engine told to number every table's rows across tasks."""
        def numbered() -> None:
            kept, engine.one_task_sort_rows = engine.one_task_sort_rows, 0
            try:
                run()
            finally:
                engine.one_task_sort_rows = kept
        return numbered

    frequencies = fetched(group_by)  # one baseline for both: timed once per run (see bench)
    sorted_copy = written("sorted_copy", exp.select(col("id"), *map(col, NUMERIC), *windows).from_(
        table(SOURCE)))
    made = {
        "search": (frequencies, search),
        "check": (frequencies, check),
        "ranking": (sorted_copy, applied(ranking)),
        "noise": (written("plain_copy", exp.select(exp.Star()).from_(table(SOURCE))), applied(noise)),
    }
    if engine.capabilities.distributed_numbering:
        made["ranking_across_tasks"] = (sorted_copy, across_tasks(applied(ranking)))
    return made


def cpu_seconds() -> float:
    """User and system CPU time so far of this process (and DuckDB in it) and of Spark's JVM (a
    child of it): on a machine shared with other work, the CPU a run takes varies less than its wall
    time."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    total = usage.ru_utime + usage.ru_stime
    me, tick = str(os.getpid()), os.sysconf("SC_CLK_TCK")
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            stat = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if stat[1] == me:
            total += (int(stat[11]) + int(stat[12])) / tick
    return total


CPU: dict[str, list[float]] = {}
"""The CPU seconds of every timed run, by the label printed with them."""


def timed(run: Callable[[], Any], label: str = "") -> tuple[float, Any]:
    started, cpu = time.perf_counter(), cpu_seconds()
    out = run()
    if label:
        CPU.setdefault(label, []).append(cpu_seconds() - cpu)
    return time.perf_counter() - started, out


GOALS = {"search": 3.0, "check": 2.0, "ranking": 2.0, "noise": 2.0, "ranking_across_tasks": None}
"""Each subject's goal (the most times its baseline), if it has one."""


def bench(name: str, engine: Engine, adult_dir: Path, runs: int, only: list[str], warm_up: bool = True
          ) -> None:
    made = subjects(engine, adult_dir)
    baselines: dict[int, list[float]] = {}
    """The times of each baseline already timed in this run, by its identity: search and check share
    theirs, which on large tables is minutes per run."""
    timed_as: dict[int, str] = {}
    """The label each baseline's CPU seconds were recorded under, by its identity."""
    for subject in only or list(made):
        if subject not in made:
            print(f"{name} {subject}: not run (the engine cannot number rows across tasks)", flush=True)
            continue
        baseline, run = made[subject]
        known = bool(baselines.get(id(baseline)))
        bs = baselines.setdefault(id(baseline), [])
        label = timed_as.setdefault(id(baseline), f"{name} {subject} baseline")
        ss: list[float] = []
        try:
            if warm_up:
                if not known:
                    timed(baseline)
                timed(run)
            for _ in range(runs):
                if not known:
                    bs.append(timed(baseline, label)[0])
                seconds, result = timed(run, f"{name} {subject}")
                ss.append(seconds)
        except SqlanonError as e:
            print(f"{name} {subject}: refused or failed after {len(ss)} timed run(s): {e}", flush=True)
            continue
        mb, ms = statistics.median(bs), statistics.median(ss)
        print(f"{name} {subject}: baseline " + ("(timed above) " if known else "")
              + ", ".join(f"{t:.2f}" for t in bs)
              + " s; subject " + ", ".join(f"{t:.2f}" for t in ss)
              + f" s; medians {mb:.2f} / {ms:.2f} s; ratio {ms / mb:.2f} "
              + (f"(goal <= {goal:g})" if (goal := GOALS[subject]) else "(no goal)")
              + (f"; result {result}" if subject in ("search", "check") else ""), flush=True)
        cb, cs = CPU.get(label, []), CPU[f"{name} {subject}"]
        if cb:
            print(f"{name} {subject}: CPU seconds (this process and the JVM) baseline "
                  + ", ".join(f"{t:.1f}" for t in cb) + "; subject " + ", ".join(f"{t:.1f}" for t in cs)
                  + f"; ratio of the medians {statistics.median(cs) / statistics.median(cb):.2f}",
                  flush=True)


def main() -> None:
    root = Path(__file__).resolve().parents[1]
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=int, default=10_000_000)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--master", default="local[2]")
    p.add_argument("--partitions", type=int, default=8)
    p.add_argument("--data", default=str(root / "bench" / "results"))
    p.add_argument("--adult-dir", default=str(root.parent / "shared" / "data" / "adult"))
    p.add_argument("--engines", default="spark,duckdb")
    p.add_argument("--only", default="",
                   help="comma-separated subjects (search, check, ranking, noise, ranking_across_tasks), "
                        "run in that order")
    p.add_argument("--duckdb-memory", default="6GB", help="DuckDB's memory_limit (it spills past it)")
    p.add_argument("--spark-log-level", default="ERROR",
                   help="Spark's log level (WARN shows why a task failed, e.g. a result it could not fetch)")
    p.add_argument("--spark-conf", action="append", default=[], metavar="KEY=VALUE",
                   help="a setting of the Spark session, e.g. spark.driver.memory=3g (repeatable)")
    p.add_argument("--no-warm-up", action="store_true",
                   help="time the first runs (on large tables a warm-up run costs as much as a run)")
    a = p.parse_args()
    adult_dir = Path(a.adult_dir)
    path = parquet_file(Path(a.data), a.rows, str(adult_dir / "adult.csv"))
    only = [s for s in a.only.split(",") if s]
    if set(only) - set(GOALS):
        p.error(f"--only: unknown subject(s) {', '.join(sorted(set(only) - set(GOALS)))}")
    cores = a.master[a.master.find("[") + 1:-1] if "[" in a.master else "2"
    print(f"rows {a.rows:,} in {path}; runs {a.runs} (medians); {a.master}, "
          f"spark.sql.shuffle.partitions={a.partitions}; DuckDB threads {cores}", flush=True)
    for name in a.engines.split(","):
        if name == "spark":
            from sqlanon.engines.spark import SparkEngine
            from sqlanon.engines.spark_sessions import local_session

            warehouse = tempfile.mkdtemp(prefix="sqlanon-bench-warehouse-")
            settings = {"spark.sql.shuffle.partitions": str(a.partitions),
                        "spark.sql.warehouse.dir": warehouse}
            for setting in a.spark_conf:
                key, sep, value = setting.partition("=")
                if not sep:
                    p.error(f"--spark-conf {setting!r}: expected KEY=VALUE")
                settings[key] = value
            session, _ = local_session(a.master, settings)
            session.sparkContext.setLogLevel(a.spark_log_level)
            engine: Engine = SparkEngine(session=session)
            engine.register_file(SOURCE, str(path), kind="parquet")
            bench("spark", engine, adult_dir, a.runs, only, not a.no_warm_up)
            peak = jvm_peak_mb()
            print(f"spark: peak RSS of the JVM {peak:,.0f} MB" if peak else "spark: JVM not found")
            print(f"spark: peak RSS of this process (the driver) {driver_peak_mb():,.0f} MB", flush=True)
            session.stop()
            shutil.rmtree(warehouse, ignore_errors=True)
        else:
            with tempfile.TemporaryDirectory(prefix="sqlanon-bench-") as folder:
                engine = DuckDBEngine(str(Path(folder) / "bench.duckdb"))
                engine.execute_script(f"SET threads = {int(cores) if cores.isdigit() else 2}")
                engine.execute_script(f"SET temp_directory = '{folder}'")
                engine.execute_script(f"SET memory_limit = '{a.duckdb_memory}'")
                engine.execute_script(f"CREATE VIEW {SOURCE} AS SELECT * FROM read_parquet('{path}')")
                bench("duckdb", engine, adult_dir, a.runs, only, not a.no_warm_up)
                engine.close()
    print(f"peak RSS of this process (the driver, and DuckDB when it ran) {driver_peak_mb():,.0f} MB")


if __name__ == "__main__":
    main()
