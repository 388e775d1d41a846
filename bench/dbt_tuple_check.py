"""The coded one gate's tuple dictionary against exact ways to do without it, on ``bench.dbt_bench``'s model.

The coded one gate (:mod:`sqlanon.outputs.dbt.coded`) groups the model by the hash code of each
quasi-identifier tuple, and reads the tuples' values from a dictionary, a ``GROUP BY`` of the
quasi-identifiers with each tuple's code: it names the failing class, and a code that appears twice in
it means two different tuples share a code (the gate then fails rather than check merged classes).
Each subject below gives the same two things exactly, a code's tuple and whether two different
tuples share it:

* **tuple dictionary**: the gate's dictionary (the subject to beat, on top of the codes);
* **min/max per tuple code**: one ``GROUP BY`` of the tuple code with ``min``, ``max`` and ``count``
  of each quasi-identifier (two tuples sharing a code differ in some column, whose minimum and maximum
  then differ; ``count`` tells a NULL from a value);
* **min/max in the codes**: the same aggregates carried in the gate's ``GROUP BY`` of the codes (the
  tuple code and the sensitive values' codes), to be folded per tuple code afterwards: its cost
  against **codes** (that ``GROUP BY`` alone) is what it adds;
* **min/max of the tuple as a struct**, and **of a length-prefixed text of the tuple**: one packed
  value per row instead of one per column;
* **distinct count per tuple code**: ``count(DISTINCT q)`` of each quasi-identifier (1 when one tuple
  has the code) with ``any_value`` of each for its values.

Run ``python -m bench.dbt_bench`` once first: this script reads its DuckDB file (``--workdir``) and the
model ``adult_anon`` in it, read-only, with the benchmark's threads and memory. Every subject and the
baseline, one ``GROUP BY`` of the quasi-identifiers, run in each round (one warm-up round first),
timed in CPU seconds of this process (DuckDB's threads included); the script prints the medians and
their ratios to the baseline's. The whole one gate (its SQL, as ``bench.dbt_bench`` times it) is timed
too.

Measured (``nice -n 10 python -m bench.dbt_tuple_check --runs 5``, 10M rows, 532 classes), two runs
on a machine shared with other work (load average 8.3 to 8.4 in both), CPU time against the ``GROUP
BY`` of the quasi-identifiers (0.312 s and 0.319 s):

===========================================  ======  ======
subject                                      run 1   run 2
===========================================  ======  ======
codes (the gate's scan)                      0.77    0.76
tuple dictionary (the gate's)                0.98    0.97
min/max per tuple code                       4.38    4.30
min/max in the codes                         10.96   10.31
min/max of the tuple as a struct             5.97    5.81
min/max of a length-prefixed text            6.77    6.63
distinct count per tuple code                4.01    3.89
the one gate's SQL                           2.11    2.09
===========================================  ======  ======

Every way without the dictionary costs several times the dictionary: DuckDB's ``min`` and ``max`` of
text per row cost more than hashing the row into a ``GROUP BY`` of few groups, and any aggregate
carried in the codes' ``GROUP BY`` (tens of thousands of groups) costs more than the codes themselves.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import duckdb

from bench.check_bench import QIS
from bench.dbt_bench import MEMORY, THREADS
from sqlanon.outputs.dbt.sql import RELATION, SOURCE, gates, placeholder_text
from sqlanon.spec.load import load_spec

MODEL = '"main"."adult_anon"'
SENSITIVE = ['"occupation"', '"education"']
GATE = "the one gate's SQL"


def subjects(project: Path) -> dict[str, str]:
    """Each subject's SELECT on the model, the baseline first."""
    qis = [f'"{q}"' for q in QIS]
    cols = ", ".join(qis)
    code = f"hash({cols})"
    codes = f"{code} AS tc, " + ", ".join(f"hash({s}) AS v{i}" for i, s in enumerate(SENSITIVE))

    def each(template: str) -> str:
        return ", ".join(template.format(q=q, i=i) for i, q in enumerate(qis))

    min_max = each("min({q}) AS n{i}, max({q}) AS x{i}, count({q}) AS c{i}")
    packed = "concat(" + ", ".join(f"coalesce(strlen({q}) || ':' || {q}, '-')" for q in qis) + ")"
    (gate,) = gates(load_spec(project / "spec.yml"), ["duckdb"], one=True)
    gate_sql = gate.sql["duckdb"].replace(placeholder_text(RELATION, "duckdb"), MODEL).replace(
        placeholder_text(SOURCE, "duckdb"), '"main"."adult_big"')
    return {
        "GROUP BY": f"SELECT {cols}, count(*) FROM {MODEL} GROUP BY {cols}",
        "codes (the gate's scan)": f"SELECT {codes}, count(*) FROM {MODEL} GROUP BY tc, v0, v1",
        "tuple dictionary (the gate's)":
            f"SELECT *, {code} FROM (SELECT {cols} FROM {MODEL} GROUP BY {cols})",
        "min/max per tuple code": f"SELECT {code} AS tc, {min_max}, count(*) FROM {MODEL} GROUP BY tc",
        "min/max in the codes": f"SELECT {codes}, count(*), {min_max} FROM {MODEL} GROUP BY tc, v0, v1",
        "min/max of the tuple as a struct":
            f"SELECT {code} AS tc, min(row({cols})), max(row({cols})) FROM {MODEL} GROUP BY tc",
        "min/max of a length-prefixed text":
            f"SELECT {code} AS tc, min({packed}), max({packed}) FROM {MODEL} GROUP BY tc",
        "distinct count per tuple code": f"SELECT {code} AS tc, {each('count(DISTINCT {q}) AS d{i}')}, "
                                         f"{each('any_value({q}) AS a{i}')} FROM {MODEL} GROUP BY tc",
        GATE: gate_sql,
    }


def main() -> None:
    root = Path(__file__).resolve().parents[1]
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--workdir", default=str(root / "bench" / "results" / "dbt_bench"))
    a = p.parse_args()
    work = Path(a.workdir).resolve()
    queries = subjects(work / "project")
    cpu: dict[str, list[float]] = {name: [] for name in queries}
    with duckdb.connect(str(work / "adult_big.duckdb"), read_only=True,
                        config={"threads": THREADS, "memory_limit": MEMORY}) as con:
        for i in range(a.runs + 1):
            for name, sql in queries.items():
                # reading every output column keeps DuckDB from dropping an unread aggregate
                wrapped = sql if name == GATE else f"SELECT count(*), min(COLUMNS(*)) FROM ({sql})"
                started = time.process_time()
                con.execute(wrapped).fetchall()
                if i:
                    cpu[name].append(time.process_time() - started)
    medians = {name: statistics.median(times) for name, times in cpu.items()}
    for name, seconds in medians.items():
        print(f"{name:40s} {seconds:.3f} s CPU  {seconds / medians['GROUP BY']:.2f}× the GROUP BY")


if __name__ == "__main__":
    main()
