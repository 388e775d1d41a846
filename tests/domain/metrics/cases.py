"""Random small tables with table hierarchies, checked on a real DuckDB, for brute-force comparisons."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

from sqlanon.domain.hierarchy import TableHierarchy
from sqlanon.domain.metrics import MetricContext, get_metric
from sqlanon.domain.models.k_anonymity import KAnonymity
from sqlanon.engines.duckdb import DuckDBEngine
from sqlanon.methods.generalization.evaluator import Evaluator, Problem
from sqlanon.sql.nodes import table
from tests.domain.metrics import oracle


@dataclass
class Case:
    """A table (rows in insertion order), one hierarchy per QI, a node, k and a suppression limit."""

    qis: list[str]
    hiers: dict[str, list[list[str]]]
    rows: list[dict[str, Any]]
    levels: dict[str, int]
    k: int
    limit: float
    numeric: list[str] = field(default_factory=list)

    def released(self) -> tuple[list[tuple[str, ...]], list[bool]]:
        return oracle.released(self.rows, self.qis, self.hiers, self.levels, self.k, self.limit)


@st.composite
def hierarchy(draw, prefix: str, numeric: bool = False) -> list[list[str]]:
    """Leaves (some never used by the data), a random grouping at level 1, ``*`` at level 2."""
    size = draw(st.integers(2, 6))
    leaves = [str(i * 3 - 4) if numeric else f"{prefix}{i}" for i in range(size)]
    groups = draw(st.lists(st.integers(0, 2), min_size=size, max_size=size))
    return [[leaf, f"{prefix}g{g}", "*"] for leaf, g in zip(leaves, groups)]


@st.composite
def cases(draw, numeric: bool = False) -> Case:
    d = draw(st.integers(1, 3))
    qis = [f"q{i}" for i in range(d)]
    hiers = {q: draw(hierarchy(q, numeric)) for q in qis}
    n = draw(st.integers(1, 30))
    rows = []
    for _ in range(n):
        row: dict[str, Any] = {}
        for q in qis:
            leaf = draw(st.sampled_from([h[0] for h in hiers[q][:-1]] or [hiers[q][0][0]]))
            row[q] = int(leaf) if numeric else leaf
        row["label"] = draw(st.sampled_from(["p", "q", "r"]))
        rows.append(row)
    levels = {q: draw(st.integers(0, 2)) for q in qis}
    # mostly k > 1 and generous limits, so that many nodes suppress some classes and keep others
    return Case(qis, hiers, rows, levels, draw(st.sampled_from([1, 2, 2, 3, 4])),
                draw(st.sampled_from([0.0, 0.5, 1.0, 1.0])), qis if numeric else [])


@contextlib.contextmanager
def checked(duck: DuckDBEngine, case: Case, options: dict[str, Any] | None = None,
            sql_type: str = "VARCHAR"):
    """A MetricContext for the case's node: table ``t`` (rows in insertion order) on ``duck``."""
    cols = ", ".join(f"{q} {sql_type}" for q in case.qis)
    duck.con.execute(f"CREATE OR REPLACE TABLE t ({cols}, label VARCHAR)")
    try:
        duck.con.executemany(f"INSERT INTO t VALUES ({', '.join('?' * (len(case.qis) + 1))})",
                             [[r[q] for q in case.qis] + [r["label"]] for r in case.rows])
        hierarchies = {q: TableHierarchy(case.hiers[q]) for q in case.qis}
        types = {q: sql_type for q in case.qis}
        problem = Problem(duck, table("t"), list(case.qis), hierarchies, ["label"], [KAnonymity(case.k)],
                          column_types=types)
        with Evaluator(problem) as ev:
            node = ev.check(case.levels, case.limit)
            yield MetricContext(ev, node, options=options or {})
    finally:
        duck.con.execute("DROP TABLE t")


def metric(ctx: MetricContext, name: str) -> float:
    return get_metric(name).compute(ctx)
