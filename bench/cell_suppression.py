"""Cell suppression (``method: local_suppression``): the heuristics against the exact optimum on random
tables, and the heuristics on Adult at k = 5.

Part 1, random tables (seeded numpy, ``--tables`` of them): 10–200 rows, 2–4 attributes of 2–5
values, k from 2 to 5, 5 % NULLs in a third of the tables. For each: the exact optimum (HiGHS), then
sdcMicro's ``localSuppression``, the cheapest-pattern heuristic without and with donor rows, the
row cover (the default), the rounds and ``batch_cover`` (its SQL on DuckDB, over the table loaded
as a frequency table); every result is checked k-anonymous by brute force over its rows. Prints the
mean and the worst ratio of each heuristic's cells to the optimum (tables whose optimum is 0 count as
1 when the heuristic also suppresses nothing), for each of ``--ratio-alphas`` (the cover through the
method's solver choice, which falls back to the cheapest pattern when the cover stops short of k).

Part 2, Adult (``../shared/data/adult/adult.csv``, 30,162 rows) at k = 5 through ``sqlanon.api.check``
on DuckDB (one GROUP BY, the solver, the achieved k): cells per attribute, rows touched, seconds
(median of ``--runs``), for the quasi-identifiers of ``--qis`` as they are and after generalizing age
to 10-year intervals first, with sdcMicro's ``alpha`` 1 (its default: k-1 rows of wildcards make any
table k-anonymous) and 0 (rows with suppressed cells count for no other row). The baseline, timed in
the same run, is the frequency table's GROUP BY alone. We know of no published sdcMicro figures on
Adult, and R is not available here: the ``sdcmicro`` heuristic is the port of its algorithm
(docs/local-recoding.md). ``rounds`` runs twice: in memory (numpy, its form up to
``in_engine.IN_MEMORY_MAX`` combinations) and as SQL rounds on DuckDB (``rounds/sql``), which give
the same cells. ``batch_cover`` always runs as SQL.

Part 3, ``--big N`` rows (Adult grown by bench/grow_adult.py, ``--scheme``): the same runs, alpha 1,
without generalization, on the grown table (``--big-heuristics``), with its GROUP BY as the baseline.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path
from typing import Any

import numpy as np

from sqlanon.methods.local_suppression import exact, greedy, rounds, sdcmicro
from sqlanon.methods.local_suppression.combos import Combos, Suppression, brute_force_frequencies
from sqlanon.methods.local_suppression.settings import LocalSuppressionSettings
from sqlanon.methods.local_suppression.solve import suppress

ADULT = Path(__file__).resolve().parents[2] / "shared/data/adult/adult.csv"
QIS = ["sex", "age", "race", "marital-status", "education"]


def random_table(rng: np.random.Generator) -> tuple[Combos, int]:
    n, d, card = int(rng.integers(10, 201)), int(rng.integers(2, 5)), int(rng.integers(2, 6))
    data = rng.integers(0, card, size=(n, d))
    if rng.random() < 1 / 3:
        data[rng.random((n, d)) < 0.05] = -1
    u, c = np.unique(data, axis=0, return_counts=True)
    combos = Combos.of([tuple(None if x < 0 else int(x) for x in r) for r in u], c.tolist())
    return combos, int(rng.integers(2, 6))


def ratios(tables: int, seed: int, alpha: float) -> None:
    from sqlanon.engines.duckdb import DuckDBEngine

    rng = np.random.default_rng(seed)
    infeasible = 0
    duck = DuckDBEngine()
    out: dict[str, list[float]] = {"sdcmicro": [], "pattern without donors": [], "pattern": [],
                                   "cover (default)": [], "rounds": [], "batch_cover (SQL)": []}
    exact_seconds = []
    for _ in range(tables):
        combos, k = random_table(rng)
        w = np.ones(combos.width)
        t = time.perf_counter()
        try:
            opt = exact.solve(combos, k, w, time_limit=60, alpha=alpha)
        except ValueError:
            infeasible += 1  # with alpha < 1 no suppression may reach k
            continue
        exact_seconds.append(time.perf_counter() - t)
        best = opt.cost(combos, w)
        results: dict[str, Suppression] = {
            "sdcmicro": sdcmicro.sdcmicro(combos, k, sdcmicro.default_order(combos), alpha),
            "pattern without donors": greedy.cheapest_patterns(combos, k, w, alpha=alpha),
            "pattern": greedy.best_of_donors(combos, k, w, alpha),
            "cover (default)": suppress(combos, [f"q{j}" for j in range(combos.width)],
                                        LocalSuppressionSettings(k, alpha=alpha)),
            "rounds": rounds.rounds(combos, k, sdcmicro.default_order(combos), alpha),
            "batch_cover (SQL)": batch_cover_sql(duck, combos, k, alpha)}
        for name, s in [*results.items(), ("exact", opt)]:
            rows = np.repeat(s.released(combos), s.rows, axis=0)
            assert rows.shape[0] == combos.rows
            assert brute_force_frequencies(rows, alpha).min() >= k - 1e-9, name
        for name, s in results.items():
            cost = s.cost(combos, w)
            out[name].append(cost / best if best else 1.0 + cost)
    duck.close()
    print(f"random tables, alpha {alpha:g}: {tables} (seed {seed}), {infeasible} without a solution; "
          "exact solver median "
          f"{statistics.median(exact_seconds):.3f} s, max {max(exact_seconds):.2f} s; every result "
          "k-anonymous (brute force)")
    for name, r in out.items():
        print(f"  {name:<24} mean ratio to optimum {np.mean(r):.3f}   worst {np.max(r):.3f}")


def batch_cover_sql(duck: Any, combos: Combos, k: int, alpha: float) -> Suppression:
    """``batch_cover`` on DuckDB over ``combos`` loaded as a frequency table, as a suppression."""
    from tests.methods.local_suppression.test_batch_cover import solved

    return solved(duck, combos, k, alpha, [1.0] * combos.width)[0]


HEURISTICS = ("sdcmicro", "pattern", "cover", "rounds", "rounds/sql", "batch_cover")


def baseline(duck: Any, relation: str, qis: list[str], runs: int) -> float:
    """Median seconds of the frequency table's GROUP BY, fetched."""
    group = ", ".join(f'"{q}"' for q in qis)
    base = []
    for _ in range(runs):
        t = time.perf_counter()
        duck.con.execute(f'SELECT {group}, count(*) FROM "{relation}" GROUP BY {group}').fetchall()
        base.append(time.perf_counter() - t)
    return statistics.median(base)


def one(duck: Any, relation: str, qis: list[str], runs: int, alpha: float, levels: dict[str, int],
        heuristic: str) -> None:
    from sqlanon import api
    from sqlanon.methods.local_suppression import in_engine
    from sqlanon.spec import spec_from_dict

    attributes = {q: {"role": "quasi_identifier"} for q in qis}
    if levels:
        attributes["age"]["hierarchy"] = {"intervals": {"widths": [10, 20]}}
    name, sql = heuristic.split("/")[0], heuristic.endswith("/sql")
    spec = spec_from_dict({"source": {"table": relation}, "attributes": attributes,
                           "transformation": {"method": "local_suppression", "k": 5, "alpha": alpha,
                                              "heuristic": name, "levels": levels}})
    seconds = []
    largest = in_engine.IN_MEMORY_MAX
    in_engine.IN_MEMORY_MAX = 0 if sql else 10 ** 9
    try:
        for _ in range(runs):
            t = time.perf_counter()
            r = api.check(spec, engine=duck).as_dict()
            seconds.append(time.perf_counter() - t)
    finally:
        in_engine.IN_MEMORY_MAX = largest
    cells = ", ".join(f"{a} {n}" for a, n in r["cells_per_attribute"].items())
    what = "age in 10-year intervals" if levels else "as is"
    print(f"  alpha {alpha:g}  {heuristic:<10} {what:<25} "
          f"cells {r['cells_suppressed']:>5} ({cells}); rows touched {r['rows_touched']}; "
          f"achieved k {r['achieved_k']}; combinations {r['combinations']}; "
          f"median {statistics.median(seconds):.2f} s")


def adult(runs: int, qis: list[str], alphas: list[float], heuristics: list[str]) -> None:
    from sqlanon.engines.duckdb import DuckDBEngine

    with DuckDBEngine() as duck:
        duck.con.execute("CREATE TABLE adult AS SELECT * FROM read_csv(?, delim=';', header=true, "
                         "all_varchar=true)", [str(ADULT)])
        duck.con.execute("CREATE TABLE adult_n AS SELECT * REPLACE (CAST(age AS INTEGER) AS age) FROM adult")
        print(f"Adult, k = 5, quasi-identifiers {', '.join(qis)}; baseline GROUP BY median "
              f"{baseline(duck, 'adult', qis, runs) * 1000:.1f} ms")
        for alpha, levels, heuristic in ((a, lv, h) for a in alphas for lv in ({}, {"age": 1})
                                         for h in heuristics):
            one(duck, "adult_n" if levels else "adult", qis, runs, alpha, levels, heuristic)


def big(rows: int, scheme: str, runs: int, qis: list[str], heuristics: list[str]) -> None:
    import sys

    from sqlanon.engines.duckdb import DuckDBEngine

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from grow_adult import grow

    with DuckDBEngine() as duck:
        grow(duck.con, str(ADULT), rows, "adult_big", scheme)
        print(f"Adult grown to {rows:,} rows ({scheme}), k = 5, quasi-identifiers {', '.join(qis)}; "
              f"baseline GROUP BY median {baseline(duck, 'adult_big', qis, runs):.2f} s")
        for heuristic in heuristics:
            one(duck, "adult_big", qis, runs, 1.0, {}, heuristic)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--tables", type=int, default=100)
    p.add_argument("--seed", type=int, default=2026)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--qis", default=",".join(QIS))
    p.add_argument("--alphas", default="1,0", help="sdcMicro's alpha values to run on Adult")
    p.add_argument("--ratio-alphas", default="1,0", help="alpha values of the random tables")
    p.add_argument("--skip-adult", action="store_true")
    p.add_argument("--skip-random", action="store_true")
    p.add_argument("--heuristics", default=",".join(HEURISTICS))
    p.add_argument("--big", type=int, default=0, help="rows of the grown Adult (0: no such part)")
    p.add_argument("--scheme", default="pairs", choices=("pairs", "quads"))
    p.add_argument("--big-heuristics", default="pattern,rounds,rounds/sql,batch_cover")
    a = p.parse_args()
    for alpha in [] if a.skip_random else a.ratio_alphas.split(","):
        ratios(a.tables, a.seed, float(alpha))
    if not a.skip_adult:
        adult(a.runs, a.qis.split(","), [float(x) for x in a.alphas.split(",")], a.heuristics.split(","))
    if a.big:
        big(a.big, a.scheme, a.runs, a.qis.split(","), a.big_heuristics.split(","))


if __name__ == "__main__":
    main()
