"""MDAV through the database: ``sqlanon.apply`` on the 100,000 x 5 table in DuckDB, k = 3 and k = 5.

Data: ``../shared/data/mdav/synthetic_normal_100k_x5_seed42.csv``, loaded into an in-memory DuckDB
table with its row number as the key (sdcMicro breaks ties by row order). The measured call is
``sqlanon.apply`` with ``method: microaggregation, algorithm: mdav`` and output mode ``table``: the pull
of the five columns, MDAV, the group table written back, the output table built by one join, and the
report's metrics (SSE, SST, IL1s in SQL; record linkage in numpy). ``--no-metrics`` leaves the metrics out.

Baseline, measured in the same run on the same array:
``sqlanon.methods.microaggregation.algorithms.mdav.microaggregate`` alone (numpy, no database). Runs alternate
(baseline, pipeline, ...); the script prints every run, the medians, their ratio and the SSE, which must equal
sdcMicro's (6718.869529 and 11526.37237).
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import numpy as np
import pandas as pd
from sqlglot import exp

from sqlanon import api
from sqlanon.engines.duckdb import DuckDBEngine
from sqlanon.methods.microaggregation.algorithms.mdav import microaggregate
from sqlanon.spec import spec_from_dict

DATA = Path(__file__).resolve().parents[2] / "shared/data/mdav/synthetic_normal_100k_x5_seed42.csv"
SDCMICRO = {3: 6718.869529, 5: 11526.37237}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--no-metrics", action="store_true")
    args = parser.parse_args()
    frame = pd.read_csv(args.data)
    frame.insert(0, "row", np.arange(len(frame)))
    x = frame.iloc[:, 1:].to_numpy()
    engine = DuckDBEngine()
    engine.con.register("frame", frame)
    engine.create_table_as("data", exp.select("*").from_("frame"))
    engine.con.unregister("frame")
    metrics = () if args.no_metrics else None
    for k in (3, 5):
        spec = spec_from_dict({
            "source": {"table": "data"},
            "attributes": {"row": "insensitive", **{c: "quasi_identifier" for c in frame.columns[1:]}},
            "transformation": {"method": "microaggregation", "algorithm": "mdav", "k": k, "key": "row"},
            "output": {"mode": "table", "name": "released", "replace": True}})
        base, runs = [], []
        for _ in range(args.runs):
            start = time.perf_counter()
            microaggregate(x, k)
            base.append(time.perf_counter() - start)
            start = time.perf_counter()
            api.apply(spec, engine=engine, metrics=metrics)
            runs.append(time.perf_counter() - start)
        released = engine.con.execute('SELECT * FROM "released" ORDER BY "row"').fetchnumpy()
        sse = float(sum(((x[:, j] - released[c]) ** 2).sum() for j, c in enumerate(frame.columns[1:])))
        same = "same" if abs(sse - SDCMICRO[k]) <= 1e-6 * SDCMICRO[k] or len(x) != 100_000 else "DIFFERENT"
        print(f"k={k}: pipeline runs " + ", ".join(f"{t:.2f}" for t in runs) + " s; numpy MDAV alone "
              + ", ".join(f"{t:.2f}" for t in base) + " s")
        print(f"  median {statistics.median(runs):.2f} s vs {statistics.median(base):.2f} s, ratio "
              f"{statistics.median(runs) / statistics.median(base):.2f}; SSE of the table {sse:.6f} "
              f"(sdcMicro {SDCMICRO[k]}: {same})")


if __name__ == "__main__":
    main()
