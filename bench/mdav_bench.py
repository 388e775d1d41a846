"""MDAV (sdcMicro 5.8.1 semantics) on the 100,000 x 5 synthetic table, k = 3 and k = 5.

Data: ``../shared/data/mdav/synthetic_normal_100k_x5_seed42.csv`` (the calibration table of
peer-semantics.md, Part II). For each k the script runs
``sqlanon.methods.microaggregation.algorithms.mdav.microaggregate``
``--runs`` times and prints every run's seconds, the median, the SSE on the original scale and
sdcMicro's figure. CPU seconds (``time.process_time``) are printed next to wall seconds because other
work on the machine slows the wall clock.

Baseline, measured in the same run: one numpy pass computing the weighted squared distance of every
row to the centroid (``((x - c) ** 2) @ w`` on all 100,000 rows), the unit of work a plain MDAV repeats
about ``4 * n / (2k)`` times on shrinking sets. Runs alternate (baseline, MDAV, ...); the script prints
the medians and their ratio. sdcMicro's own times (55.4 s and 34.2 s) and a plain numpy MDAV's
(121 s and 74 s) are quoted from peer-semantics.md, not measured here.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import numpy as np

from sqlanon.methods.microaggregation.algorithms.mdav import microaggregate
from sqlanon.methods.microaggregation.distance.qi_space import sdc_weights

DATA = Path(__file__).resolve().parents[2] / "shared/data/mdav/synthetic_normal_100k_x5_seed42.csv"
SDCMICRO = {3: (6718.869529, 55.4), 5: (11526.37237, 34.2)}


def baseline(x: np.ndarray, w: np.ndarray) -> float:
    start = time.perf_counter()
    diff = x - x.mean(axis=0)
    (diff * diff) @ w
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--data", type=Path, default=DATA)
    args = parser.parse_args()
    x = np.loadtxt(args.data, delimiter=",", skiprows=1)[: args.rows]
    w = sdc_weights(x)
    for k in (3, 5):
        base, runs, cpu, sse = [], [], [], None
        for _ in range(args.runs):
            base.append(baseline(x, w))
            start, start_cpu = time.perf_counter(), time.process_time()
            result = microaggregate(x, k)
            runs.append(time.perf_counter() - start)
            cpu.append(time.process_time() - start_cpu)
            sse = result.sse(x)
        print(f"k={k}: runs " + ", ".join(f"{t:.2f}" for t in runs) + " s (CPU "
              + ", ".join(f"{t:.2f}" for t in cpu) + " s)")
        line = f"  median {statistics.median(runs):.2f} s (CPU {statistics.median(cpu):.2f} s); SSE {sse:.6f}"
        if len(x) == 100_000:
            expected, sdc_time = SDCMICRO[k]
            same = "same" if abs(sse - expected) <= 1e-6 * expected else "DIFFERENT"
            line += f" (sdcMicro {expected}: {same}; sdcMicro took {sdc_time} s)"
        print(line)
        print(f"  baseline (one full distance pass) median {statistics.median(base) * 1e3:.2f} ms; "
              f"ratio {statistics.median(runs) / statistics.median(base):.0f}")


if __name__ == "__main__":
    main()
