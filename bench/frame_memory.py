"""Memory of in-memory data: registering a DataFrame or Arrow table copies none of it.

For each kind (a separate process each, so that one's memory does not hide another's), the script
builds a table of N rows — ``id`` BIGINT, ``age`` BIGINT, ``income`` DOUBLE, ``zip`` text of 5 digits
and ``city`` text of about 20 characters — then resets the process's peak resident memory
(``/proc/self/clear_refs``) and measures, from that point:

* ``register``: the peak after :func:`sqlanon.engines.frames.registered` has registered the table
  and DuckDB has scanned every value of it once (``sum`` or ``max`` of each column): what
  registration and scanning add to the frame itself (DuckDB's own start-up is paid before the
  measurement, on a table of 1,000 rows);
* ``apply``: the peak during ``sqlanon.apply(spec, data=frame)`` (k-anonymity, k = 5, on age and zip
  generalized at fixed levels), which writes the output in DuckDB and hands it back as the same kind:
  the output is a new table of the same number of rows, so this peak includes it.

Each line gives the frame's own size (pandas ``memory_usage(deep=True)``, polars ``estimated_size``,
Arrow ``nbytes``) and the increases in MB. Kinds: ``arrow``, ``polars``, ``pandas`` (strings as
``string[pyarrow]``, what ``pd.read_parquet(..., dtype_backend="pyarrow")`` gives) and
``pandas_object`` (strings as Python objects, pandas' default: converted once into Arrow's layout).

    python -m bench.frame_memory --rows 5000000
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

KINDS = ("arrow", "polars", "pandas", "pandas_object")

SPEC = {
    "attributes": {
        "id": {"role": "insensitive"}, "income": {"role": "insensitive"}, "city": {"role": "insensitive"},
        "age": {"role": "quasi_identifier", "hierarchy": {"intervals": {"widths": [10, 20]}}},
        "zip": {"role": "quasi_identifier", "hierarchy": {"mask": {"levels": 5}}},
    },
    "privacy": [{"k_anonymity": {"k": 5}}],
    "transformation": {"levels": {"age": 1, "zip": 2}, "suppression_limit": 0.05},
    "metrics": [],
}


SCAN = "SELECT sum(id), sum(age), sum(income), max(zip), max(city) FROM data"
"""Reads every value of every column, keeping nothing but the aggregates."""


def resident_mb(field: str) -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    raise RuntimeError(field)


def reset_peak() -> None:
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")


def build(kind: str, rows: int):
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    rng = np.random.default_rng(7)
    zips = pc.utf8_lpad(pc.cast(pa.array(rng.integers(0, 100_000, rows)), pa.string()), 5, "0")
    cities = pc.binary_join_element_wise(pa.array(np.full(rows, "city of the number ")),
                                         pc.cast(pa.array(rng.integers(0, 999, rows)), pa.string()), "")
    table = pa.table({"id": np.arange(rows), "age": rng.integers(18, 90, rows),
                      "income": rng.random(rows) * 1e5, "zip": zips, "city": cities})
    if kind == "arrow":
        return table, table.nbytes
    if kind == "polars":
        import polars as pl

        frame = pl.from_arrow(table)
        return frame, frame.estimated_size()
    import pandas as pd

    frame = table.to_pandas(types_mapper={pa.string(): pd.StringDtype("pyarrow")}.get) \
        if kind == "pandas" else table.to_pandas()
    return frame, int(frame.memory_usage(deep=True).sum())


def measure(kind: str, rows: int) -> dict:
    import gc

    import sqlanon
    from sqlanon.engines.frames import registered

    frame, size = build(kind, rows)
    with registered(build("arrow", 1000)[0], "data") as warm:  # DuckDB's own start-up, not the data's
        warm.engine.fetch(SCAN)
    gc.collect()
    base = resident_mb("VmRSS")
    reset_peak()
    with registered(frame, "data") as source:
        source.engine.fetch(SCAN)
        registration = resident_mb("VmHWM") - base
    gc.collect()
    base_apply = resident_mb("VmRSS")
    reset_peak()
    out, report = sqlanon.apply(SPEC, data=frame)
    applying = resident_mb("VmHWM") - base_apply
    assert len(out) == rows - report.node.suppressed_rows
    return {"kind": kind, "rows": rows, "frame_mb": round(size / 2**20), "register_mb": round(registration),
            "apply_mb": round(applying)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=5_000_000)
    parser.add_argument("--kinds", default=",".join(KINDS))
    parser.add_argument("--one", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(measure(args.one, args.rows)))
        return
    for kind in args.kinds.split(","):
        done = subprocess.run([sys.executable, "-m", "bench.frame_memory", "--rows", str(args.rows),
                               "--one", kind], capture_output=True, text=True, check=True)
        r = json.loads(done.stdout.strip().splitlines()[-1])
        print(f"{r['kind']:>14}: {r['rows']:,} rows, frame {r['frame_mb']} MB; registered and scanned "
              f"+{r['register_mb']} MB; apply (output included) +{r['apply_mb']} MB")


if __name__ == "__main__":
    main()
