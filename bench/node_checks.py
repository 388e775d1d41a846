"""Three ways to check many lattice nodes on one frequency table, on Adult and on Adult grown to 10M rows.

The nodes are the first ``--nodes`` nodes the optimal search checks (9 QIs, k = 5, 2 % suppression,
Loss), in the search's order. Each method answers, per node, the outlier rows (rows in classes of
fewer than k), the number of classes and the smallest class kept; the script asserts that all methods
agree on every node, then prints per-node times (medians over ``--runs``) and their ratios:

(i) ``sql``: one query per node on the frequency table in the engine
    (:meth:`sqlanon.methods.generalization.evaluator.Evaluator.check`, privacy only, as the SQL search checks
    nodes);
(ii) ``grouping sets``: a table of per-level integer codes (one column per QI and level, from the
     hierarchies' label order), built once by one join of the frequency table with a code table per
     QI; then one query per batch of nodes: ``GROUP BY GROUPING SETS ((q0_l, q1_l, …), …)`` with
     ``GROUPING(…)`` telling the nodes apart, summarized per grouping set (classes, smallest class,
     rows in classes < k). Built with sqlglot;
(iii) ``memory``: :meth:`sqlanon.methods.generalization.search.fast.FastEvaluator.evaluate` on the frequency
      table read once, with and without rolling a node up from a cached finer node.

One-off costs (the frequency table, the code table, the in-memory load) are reported apart.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import duckdb
import pandas as pd
from sqlglot import exp

from bench.grow_adult import QIS
from bench.search_big import open_table
from sqlanon.compile.checks import N
from sqlanon.domain.hierarchy import read_arx_csv
from sqlanon.domain.models.k_anonymity import KAnonymity
from sqlanon.engines.duckdb import DuckDBEngine
from sqlanon.methods.generalization.evaluator import Evaluator, Problem
from sqlanon.methods.generalization.search import lattice_of
from sqlanon.methods.generalization.search.fast import FastEvaluator, FastNodeEvaluator
from sqlanon.methods.generalization.search.limits import search_within
from sqlanon.sql.nodes import alias, col, lit, table

K, LIMIT = 5, 0.02
Answer = tuple[int, int, int | None]
"""Per node: outlier rows, classes kept (all classes when the node fails), smallest of those."""


def first_nodes(ev: Evaluator, count: int) -> list[tuple[int, ...]]:
    """The first ``count`` nodes the optimal search checks, in its order."""
    nodes = FastNodeEvaluator(ev, LIMIT, "loss")
    seen: list[tuple[int, ...]] = []
    inner = nodes.fast.evaluate

    def evaluate(node, **kw):
        seen.append(tuple(node))
        return inner(node, **kw)

    nodes.fast.evaluate = evaluate
    search_within(lattice_of(ev.p), nodes, "optimal", max_checks=count)
    return seen


def answer(outliers: int, sizes: Sequence[int], budget: int) -> Answer:
    """Classes and smallest class as ARX reports them: kept classes when anonymous, else all."""
    kept = [s for s in sizes if s >= K] if outliers <= budget else list(sizes)
    return outliers, len(kept), min(kept) if kept else None


# -- (ii) grouping sets ------------------------------------------------------------------------------
def level_column(i: int, level: int) -> str:
    return f"q{i}_l{level}"


def build_codes(ev: Evaluator, con: duckdb.DuckDBPyConnection) -> exp.Table:
    """The frequency table's row counts with one integer code column per QI and level."""
    frame = exp.alias_(ev.freq.copy(), "f")
    query = exp.select(alias(col(N, "f"), "n")).from_(frame)
    for i, a in enumerate(ev.p.qis):
        h = ev.hierarchy_table(a)
        levels = range(h.height + 1)
        index = [{lbl: j for j, lbl in enumerate(h.level_values(lv))} for lv in levels]
        codes = pd.DataFrame([(leaf, *(index[lv][labels[lv]] for lv in levels))
                              for leaf, labels in h.mapping.items()],
                             columns=["leaf", *(f"l{lv}" for lv in levels)])
        con.register("codes_frame", codes)
        create_temp(con, f"codes_{i}", exp.select("*").from_(table("codes_frame")))
        con.unregister("codes_frame")
        name = f"h{i}"
        query = query.select(*[alias(col(f"l{lv}", name), level_column(i, lv)) for lv in levels])
        query = query.join(exp.alias_(table(f"codes_{i}"), name),
                           on=exp.NullSafeEQ(this=col("leaf", name),
                                             expression=ev.p.hierarchies[a].key(col(a, "f"))))
    create_temp(con, "coded", query)
    return table("coded")


def create_temp(con: duckdb.DuckDBPyConnection, name: str, query: exp.Select) -> None:
    con.execute(exp.Create(this=table(name), kind="TABLE", expression=query, replace=True,
                           properties=exp.Properties(expressions=[exp.TemporaryProperty()])
                           ).sql("duckdb"))


def grouping_sets_query(nodes: Sequence[tuple[int, ...]]) -> tuple[exp.Select, list[str]]:
    """One query checking ``nodes``: per grouping set its GROUPING(…) id, classes, min size, outliers."""
    used = sorted({level_column(i, lv) for node in nodes for i, lv in enumerate(node)})
    sets = [exp.Tuple(expressions=[col(level_column(i, lv)) for i, lv in enumerate(node)])
            for node in nodes]
    classes = exp.select(alias(exp.GroupingId(expressions=[col(c) for c in used]), "g"),
                         alias(exp.Sum(this=col("n")), "size")).from_(table("coded")).group_by(
        exp.GroupingSets(expressions=sets))
    small = exp.If(this=exp.LT(this=col("size"), expression=lit(K)), true=col("size"), false=lit(0))
    query = exp.select(col("g"), alias(exp.Count(this=exp.Star()), "classes"),
                       alias(exp.Min(this=col("size")), "min_size"),
                       alias(exp.Sum(this=small), "outliers"),
                       alias(exp.Count(this=exp.If(this=exp.GTE(this=col("size"), expression=lit(K)),
                                                  true=lit(1))), "kept"),
                       alias(exp.Min(this=exp.If(this=exp.GTE(this=col("size"), expression=lit(K)),
                                                 true=col("size"))), "min_kept"),
                       ).from_(classes.subquery("c")).group_by(col("g"))
    return query, used


def grouping_id(node: tuple[int, ...], used: list[str]) -> int:
    """GROUPING(used…) of the node's set: bit set for every column not grouped, first column highest."""
    mine = {level_column(i, lv) for i, lv in enumerate(node)}
    return sum(1 << (len(used) - 1 - j) for j, c in enumerate(used) if c not in mine)


def grouping_sets_check(con: duckdb.DuckDBPyConnection, nodes: Sequence[tuple[int, ...]], batch: int,
                        budget: int) -> list[Answer]:
    out: list[Answer] = []
    for start in range(0, len(nodes), batch):
        part = nodes[start:start + batch]
        query, used = grouping_sets_query(part)
        rows = {g: r for g, *r in con.execute(query.sql("duckdb")).fetchall()}
        for node in part:
            classes, min_size, outliers, kept, min_kept = rows[grouping_id(node, used)]
            outliers = int(outliers)
            out.append((outliers, kept, min_kept) if outliers <= budget else
                       (outliers, classes, min_size))
    return out


# -- the comparison ----------------------------------------------------------------------------------
def timed(fn: Callable[[], tuple[float, list[Answer]]], runs: int) -> tuple[float, list[Answer]]:
    """The median of ``runs`` calls' seconds (each call times its own node checks), and the answers."""
    times, result = [], []
    for _ in range(runs):
        seconds, result = fn()
        times.append(seconds)
    return statistics.median(times), result


def clocked(check: Callable[[tuple[int, ...]], Answer], nodes: Sequence[tuple[int, ...]]
            ) -> tuple[float, list[Answer]]:
    t = time.perf_counter()
    out = [check(node) for node in nodes]
    return time.perf_counter() - t, out


def compare(name: str, engine: DuckDBEngine, source: str, adult_dir: Path, count: int, runs: int,
            sql_nodes: int, batch: int) -> None:
    con = engine.con
    hs = {q: read_arx_csv(adult_dir / f"adult_hierarchy_{q}.csv") for q in QIS}
    problem = Problem(engine, table(source), QIS, hs, [], [KAnonymity(K)])
    t = time.perf_counter()
    with Evaluator(problem) as ev:
        t_freq = time.perf_counter() - t
        nodes = first_nodes(ev, count)
        t = time.perf_counter()
        build_codes(ev, con)
        t_codes = time.perf_counter() - t
        t = time.perf_counter()
        fe = FastEvaluator(ev, problem.models, None, LIMIT)
        t_load = time.perf_counter() - t
        budget = fe.max_suppressed
        print(f"== {name}: {ev.rows:,} rows, {fe.rows:,} frequency rows; {len(nodes)} nodes; one-off: "
              f"frequency table {t_freq:.2f} s, code table {t_codes:.2f} s, in-memory load {t_load:.2f} s")

        def memory(rollup: bool) -> tuple[float, list[Answer]]:
            f = FastEvaluator(ev, problem.models, None, LIMIT, rollup=rollup)  # an empty class cache

            def one(node: tuple[int, ...]) -> Answer:
                r = f.evaluate(node, bound=False)
                return r.outlier_rows, r.classes, r.min_class_size
            return clocked(one, nodes)

        def sql_one(node: tuple[int, ...]) -> Answer:
            c = ev.check(dict(zip(QIS, node)), LIMIT)
            return c.outlier_rows, c.classes, c.min_class_size

        def grouping_sets() -> tuple[float, list[Answer]]:
            t = time.perf_counter()
            out = grouping_sets_check(con, nodes, batch or len(nodes), budget)
            return time.perf_counter() - t, out

        results = {
            "memory, rolled up": timed(lambda: memory(True), runs),
            "memory, every node from all rows": timed(lambda: memory(False), runs),
            "grouping sets": timed(grouping_sets, runs),
            "sql, one query per node": timed(lambda: clocked(sql_one, nodes[:sql_nodes]), runs),
        }
    reference = results["memory, every node from all rows"][1]
    for method, (_, got) in results.items():
        for node, a, b in zip(nodes, got, reference):
            assert a == b, f"{name}: {method} gives {a} for node {list(node)}, memory gives {b}"
    base = results["memory, rolled up"][0] / len(nodes)
    for method, (seconds, got) in results.items():
        per = seconds / len(got)
        print(f"  {method:34s} {per * 1000:9.2f} ms per node ({len(got)} nodes, {seconds:.2f} s; "
              f"{per / base:.2f}x memory rolled up)")
    anonymous = sum(a[0] <= budget for a in reference)
    print(f"  all methods agree on outlier rows, classes and smallest class for every node "
          f"({anonymous} of {len(nodes)} anonymous)")


def main() -> None:
    root = Path(__file__).resolve().parents[1]
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--nodes", type=int, default=128, help="how many of the search's first nodes")
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--big-rows", type=int, default=10_000_000, help="grown table size (0: Adult only)")
    p.add_argument("--big-runs", type=int, default=1, help="runs on the grown table")
    p.add_argument("--sql-nodes", type=int, default=0, help="check only this many nodes in SQL on "
                                                              "the grown table (0: all)")
    p.add_argument("--batch", type=int, default=0, help="grouping sets per query (0: all nodes)")
    p.add_argument("--db", default="/tmp/sqlanon-bench", help="directory of the grown tables")
    p.add_argument("--memory-limit", default="6GB", help="DuckDB's memory_limit")
    p.add_argument("--adult-dir", default=str(root.parent / "shared" / "data" / "adult"))
    a = p.parse_args()
    d = Path(a.adult_dir)
    con = duckdb.connect()
    con.execute("SET threads = 2")
    con.execute("CREATE TABLE adult AS SELECT * FROM read_csv(?, delim=';', header=true, "
                "all_varchar=true)", [str(d / "adult.csv")])
    compare("Adult", DuckDBEngine(connection=con), "adult", d, a.nodes, a.runs, a.nodes, a.batch)
    if a.big_rows:
        db = Path(a.db)
        db.mkdir(parents=True, exist_ok=True)
        con = open_table(db, str(d / "adult.csv"), a.big_rows, a.memory_limit)
        compare(f"Adult grown to {a.big_rows:,} rows", DuckDBEngine(connection=con), "adult_big", d,
                a.nodes, a.big_runs, a.sql_nodes or a.nodes, a.batch)


if __name__ == "__main__":
    main()
