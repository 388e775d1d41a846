"""MDAV on mixed records (``mdav_mixed``) on Adult: age numeric, three nominal attributes.

Data: ``../shared/data/adult/adult.csv`` (30,162 rows) with ARX's hierarchies for education,
marital-status and occupation; k = 5. A second case adds a synthetic nominal attribute of 5,000
values under a six-level ZIP-like hierarchy (``--large``), the size where marginalities are summed
over the tree.

Baseline, measured in the same run on the same rows: ``sqlanon.methods.microaggregation.algorithms.mdav.mdav``
(sdcMicro's numeric MDAV) on the matrix of age and the three attributes' value codes, i.e. the same number of
rows, columns and groups without the semantic distances and centroids. Runs alternate (baseline,
subject, ...); the script prints every run, the medians and their ratio.
"""

from __future__ import annotations

import argparse
import statistics
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd

from sqlanon.domain.hierarchy import TableHierarchy, read_arx_csv
from sqlanon.methods.microaggregation.algorithms.mdav import mdav
from sqlanon.methods.microaggregation.algorithms.mdav_mixed import mdav_mixed
from sqlanon.methods.microaggregation.records import NominalColumn, Records

ADULT = Path(__file__).resolve().parents[2] / "shared" / "data" / "adult"
NOMINAL = ("education", "marital-status", "occupation")


def adult_records(rows: int, large: bool) -> Records:
    frame = pd.read_csv(ADULT / "adult.csv", sep=";", dtype=str).iloc[:rows]
    nominal = {}
    for a in NOMINAL:
        codes, values = pd.factorize(frame[a], sort=True)
        nominal[a] = NominalColumn(codes.astype(np.int64), tuple(values),
                                   read_arx_csv(ADULT / f"adult_hierarchy_{a}.csv"))
    if large:
        zips = [f"{i:05d}" for i in range(5000)]
        tree = TableHierarchy([[z, z[:4] + "*", z[:3] + "**", z[:2] + "***", z[:1] + "****",
                                "*****"] for z in zips])
        codes = np.random.default_rng(0).integers(0, len(zips), len(frame))
        nominal["zip"] = NominalColumn(codes.astype(np.int64), tuple(zips), tree)
    return Records(frame[["age"]].astype(float).to_numpy(), ("age",), nominal)


def timed(fn) -> tuple[float, float, object]:  # type: ignore[no-untyped-def]
    start, cpu = time.perf_counter(), time.process_time()
    out = fn()
    return time.perf_counter() - start, time.process_time() - cpu, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--rows", type=int, default=30_162)
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--large", action="store_true", help="add a 5,000-value nominal attribute")
    args = parser.parse_args()
    records = adult_records(args.rows, args.large)
    codes = [c.codes.astype(float) for c in records.nominal.values()]
    numeric = np.column_stack([records.x, *codes])
    base, runs, cpu = [], [], []
    for _ in range(args.runs):
        # new column objects: each run builds its taxonomies and distance tables afresh
        fresh = Records(records.x, records.names,
                        {a: replace(c) for a, c in records.nominal.items()})
        base.append(timed(lambda: mdav(numeric, args.k))[0])
        wall, used, labels = timed(lambda: mdav_mixed(fresh, args.k))  # noqa: B023
        runs.append(wall)
        cpu.append(used)
    sizes = np.bincount(labels)  # type: ignore[arg-type]
    domains = ", ".join(f"{a}: {len(c.values)} values" for a, c in records.nominal.items())
    print(f"{len(numeric)} rows, age and {domains}; k = {args.k}: {len(sizes)} groups of "
          f"{sizes.min()}..{sizes.max()} rows")
    print("mdav_mixed runs " + ", ".join(f"{t:.2f}" for t in runs) + " s (CPU "
          + ", ".join(f"{t:.2f}" for t in cpu) + " s)")
    print("baseline (numeric MDAV on the codes) runs " + ", ".join(f"{t:.2f}" for t in base) + " s")
    subject, baseline = statistics.median(runs), statistics.median(base)
    print(f"medians: mdav_mixed {subject:.2f} s, baseline {baseline:.2f} s, "
          f"ratio {subject / baseline:.2f}")


if __name__ == "__main__":
    main()
