"""Shared parts of the risk-based model tests: small tables in DuckDB, a plain-Python oracle for the
models that keep the classes from some size up, every node through both checks, and the search
against exhaustive search."""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Callable, Sequence

from hypothesis import strategies as st

from sqlanon.domain.hierarchy import TableHierarchy
from sqlanon.methods.generalization.evaluator import Evaluator, Problem
from sqlanon.methods.generalization.search import SqlNodeEvaluator, lattice_of, search
from sqlanon.methods.generalization.search.fast import FastEvaluator, FastNodeEvaluator
from sqlanon.sql.nodes import table

TREE = TableHierarchy([[v, "x" if v in "abc" else "y", "*"] for v in "abcdef"])
NUMBERS = TableHierarchy([[str(v), str(v // 2), str(v // 4), "*"] for v in range(8)])
HIERARCHIES = {"q0": TREE, "q1": NUMBERS}
ROWS = st.lists(st.tuples(st.sampled_from("abcdef"), st.sampled_from([str(v) for v in range(8)])),
                min_size=1, max_size=40)
NODES = list(itertools.product(range(3), range(4)))


def load(engine, rows: Sequence[tuple], name: str = "r") -> list[str]:
    qis = [f"q{i}" for i in range(len(rows[0]))]
    engine.con.execute(f"DROP TABLE IF EXISTS {name}")
    engine.con.execute(f"CREATE TABLE {name} ({', '.join(f'{q} VARCHAR' for q in qis)})")
    engine.con.executemany(f"INSERT INTO {name} VALUES ({', '.join('?' * len(qis))})", rows)
    return qis


def problem(engine, rows, models, hierarchies=None) -> Problem:
    qis = load(engine, rows)
    return Problem(engine, table("r"), qis, hierarchies or HIERARCHIES, [], models)


def class_sizes(rows, node) -> list[int]:
    gen = [(TREE.table().mapping[a][node[0]], NUMBERS.table().mapping[b][node[1]]) for a, b in rows]
    return list(Counter(gen).values())


def per_size_oracle(sizes: list[int], n: int, holds: Callable[[list[int], int], bool],
                    limit: float) -> tuple[bool, int, int]:
    """(anonymous, outlier rows, released classes): a class of size x is kept when ``holds`` accepts
    the classes of at least x records (the kept ones) of the n-row table."""
    kept = [x for x in sizes if holds([y for y in sizes if y >= x], n)]
    outliers = n - sum(kept)
    anonymous = outliers <= math.floor(limit * n)
    return anonymous, outliers, len(kept) if anonymous else len(sizes)


def every_node(engine, rows, models, expected: Callable[[tuple[int, int]], tuple], limit: float) -> None:
    """Each node's (anonymous, outlier rows, released classes), in SQL and in memory, equal the oracle's."""
    p = problem(engine, rows, models)
    with Evaluator(p) as ev:
        fast = FastEvaluator(ev, p.models, "loss", limit)
        for node in NODES:
            want = expected(node)
            check = ev.check({"q0": node[0], "q1": node[1]}, limit)
            r = fast.evaluate(node)
            assert (check.anonymous, check.outlier_rows, check.classes) == want, node
            assert (r.anonymous, r.outlier_rows, r.classes) == want, node


def search_matches_exhaustive(engine, rows, models, limit: float, *, memory: bool = True) -> None:
    """The optimal search, with nodes checked in SQL (and in memory), finds exhaustive search's optimum,
    and the other strategies find what they promise among exhaustive search's satisfying nodes."""
    p = problem(engine, rows, models)
    with Evaluator(p) as ev:
        lattice = lattice_of(p)
        checkers = [SqlNodeEvaluator(ev, limit, "loss")]
        if memory:
            checkers.append(FastNodeEvaluator(ev, limit, "loss"))
        # the reference checks every node in memory when it can (each node's check is the same in
        # SQL and in memory: every_node), the search runs with both
        exhaustive = search(lattice, checkers[-1], "exhaustive")
        satisfying = {tuple(n) for n in exhaustive.solutions}
        lowest = min((sum(n) for n in satisfying), default=None)
        minimal = {n for n in satisfying
                   if not any(m != n and all(a <= b for a, b in zip(m, n)) for m in satisfying)}
        for nodes in checkers:
            best = search(lattice, nodes, "optimal")
            assert (best.node is None) == (exhaustive.node is None)
            if best.node is not None:
                assert best.metric == exhaustive.metric
        # every other strategy (nodes checked in memory when the models have that form): Samarati's
        # lowest height, Incognito's minimal nodes, a node of the heuristic search
        for nodes in checkers[-1:]:
            assert {tuple(n) for n in search(lattice, nodes, "binary").solutions} == \
                {n for n in satisfying if sum(n) == lowest}
            assert {tuple(n) for n in search(lattice, nodes, "incognito").solutions} == minimal
            found = search(lattice, nodes, "heuristic").node
            assert (found is None) == (not satisfying) and (found is None or tuple(found) in satisfying)
