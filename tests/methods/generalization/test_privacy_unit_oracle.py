"""Person-level checks against plain Python on random tables where persons have 1 to 4 rows.

The oracle builds each person's record (its QIs by the declared rule, here ``min``; its sensitive
values as the set of the distinct values it has), generalizes it, and counts persons per class:
k-anonymity counts persons, distinct and entropy l-diversity count each value once per person
holding it, t-closeness compares a class's (person, value) pairs with the table's, and the
suppression limit counts persons. Every node is compared, checked in SQL and,
without sensitive attributes, in memory; the optimal search must find exhaustive search's optimum.
"""

from __future__ import annotations

import math
from collections import defaultdict

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sqlanon.compile.persons import Persons
from sqlanon.domain.hierarchy import TableHierarchy
from sqlanon.domain.models.k_anonymity import KAnonymity
from sqlanon.domain.models.l_diversity import LDiversity
from sqlanon.domain.models.t_closeness import TCloseness
from sqlanon.engines.duckdb import DuckDBEngine
from sqlanon.methods.generalization.evaluator import Evaluator, Problem
from sqlanon.methods.generalization.node_check import suppression_budget
from sqlanon.methods.generalization.search import SqlNodeEvaluator, lattice_of, search
from sqlanon.methods.generalization.search.fast import FastNodeEvaluator
from sqlanon.methods.generalization.search.result import tied
from sqlanon.sql.nodes import table

LEAVES = ["a", "b", "c", "d"]
HIERARCHY = [[leaf, f"g{i // 2}", "*"] for i, leaf in enumerate(LEAVES)]
SENSITIVE = ["x", "y", "z"]


@st.composite
def persons_table(draw):
    persons = draw(st.integers(1, 14))
    rows = []
    for pid in range(persons):
        for _ in range(draw(st.integers(1, 4))):
            rows.append((pid, draw(st.sampled_from(LEAVES)), draw(st.sampled_from(LEAVES[:3])),
                         draw(st.sampled_from(SENSITIVE))))
    kind = draw(st.sampled_from(["k", "l", "entropy", "k+l", "t"]))
    k, l_ = draw(st.integers(2, 3)), draw(st.sampled_from([2, 2.5]))
    models = {"k": [KAnonymity(k)], "l": [LDiversity("s", l_)],
              "entropy": [LDiversity("s", l_, variant="entropy")],
              "k+l": [KAnonymity(k), LDiversity("s", l_)],
              "t": [TCloseness("s", draw(st.sampled_from([0.2, 0.4])))]}[kind]
    limit = draw(st.sampled_from([0.0, 0.2, 0.5]))
    return rows, models, limit


@pytest.fixture(scope="module")
def engine():
    e = DuckDBEngine()
    yield e
    e.close()


def load(engine, rows) -> Problem:
    engine.con.execute("DROP TABLE IF EXISTS v")
    engine.con.execute("CREATE TABLE v (pid INTEGER, q0 VARCHAR, q1 VARCHAR, s VARCHAR)")
    engine.con.executemany("INSERT INTO v VALUES (?, ?, ?, ?)", rows)
    return Problem(engine, table("v"), ["q0", "q1"], {q: TableHierarchy(HIERARCHY) for q in ("q0", "q1")},
                   [], [], persons=Persons("pid", {"q0": "min", "q1": "min"}))


def oracle(rows, models, limit, node) -> tuple[bool, int, int]:
    """(anonymous, outlier persons, smallest class) by brute force over the persons."""
    label = {leaf: r for r in HIERARCHY for leaf in [r[0]]}
    qis: dict[int, list[str]] = defaultdict(lambda: ["~", "~"])
    values: dict[int, set[str]] = defaultdict(set)
    for pid, q0, q1, s in rows:
        qis[pid] = [min(qis[pid][0], q0), min(qis[pid][1], q1)]
        values[pid].add(s)
    table: dict[str, int] = defaultdict(int)  # every (person, value) pair, as a class counts them
    for p in values:
        for v in values[p]:
            table[v] += 1
    pairs = sum(table.values())
    classes: dict[tuple, list[int]] = defaultdict(list)
    for pid, (q0, q1) in qis.items():
        classes[(label[q0][node[0]], label[q1][node[1]])].append(pid)

    def holds(members: list[int]) -> bool:
        counts: dict[str, int] = defaultdict(int)
        for p in members:
            for v in values[p]:
                counts[v] += 1
        total = sum(counts.values())
        for m in models:
            if isinstance(m, KAnonymity) and len(members) < m.k:
                return False
            if isinstance(m, LDiversity) and m.variant == "distinct" and len(counts) < math.ceil(m.l):
                return False
            if isinstance(m, TCloseness):  # equal distance: half the total variation
                emd = sum(abs(counts.get(v, 0) / total - table[v] / pairs) for v in table) / 2
                if emd > m.t + 1e-9:
                    return False
            if isinstance(m, LDiversity) and m.variant == "entropy":
                h = -sum(c / total * math.log(c / total) for c in counts.values())
                if h < math.log(m.l) - 1e-9:
                    return False
        return True

    outliers = sum(len(ms) for ms in classes.values() if not holds(ms))
    return outliers <= suppression_budget(limit, len(qis)), outliers, min(len(ms) for ms in classes.values())


SETTINGS = settings(max_examples=8, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


@SETTINGS
@given(case=persons_table())
def test_every_node_counts_persons(engine, case):
    rows, models, limit = case
    problem = load(engine, rows)
    problem.sensitive, problem.models = ["s"], models
    with Evaluator(problem) as ev:
        for node in lattice_of(problem):
            got = ev.check(dict(zip(problem.qis, node)), limit)
            anonymous, outliers, smallest = oracle(rows, models, limit, node)
            assert (got.anonymous, got.outlier_rows, got.min_class_size_all) == \
                (anonymous, outliers, smallest), node
            assert got.rows == len({r[0] for r in rows})


@SETTINGS
@given(case=persons_table())
def test_search_in_memory_finds_the_exhaustive_optimum(engine, case):
    rows, _, limit = case
    problem = load(engine, rows)
    problem.models = [KAnonymity(2)]
    with Evaluator(problem) as ev:
        exhaustive = SqlNodeEvaluator(ev, limit, "loss")
        lattice = lattice_of(problem)
        ex = search(lattice, exhaustive, "exhaustive")
        values = {n: exhaustive.known(n) for n in lattice}
        memory = FastNodeEvaluator(ev, limit, "loss")
        opt = search(lattice, memory, "optimal")
        for n in lattice:
            assert oracle(rows, problem.models, limit, n)[0] == values[n].anonymous, n
    ok = [n for n, r in values.items() if r.anonymous]
    assert sorted(ex.solutions) == sorted(ok)
    if not ok:
        assert opt.node is None
        return
    best = min(values[n].metric for n in ok)
    assert tied(opt.metric, best)
    assert set(opt.ties) == {n for n in ok if tied(values[n].metric, best)}
