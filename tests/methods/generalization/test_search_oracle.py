"""Every strategy keeps its contract against ``exhaustive`` on random small tables and hierarchies.

``exhaustive`` checks every node; from its satisfying nodes the test derives, in plain Python, the
optimum and its ties, the Pareto-minimal set and the lowest height, and compares each strategy with
them: with and without suppression, for k-anonymity, distinct l-diversity and t-closeness (equal
distance, not monotone under suppression), with Loss, its arithmetic variant, precision, non-uniform
entropy and discernibility, with nodes checked in SQL and in memory (where the optimal search also
uses bounds known before checking).
"""

from __future__ import annotations

import itertools

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sqlanon.domain.hierarchy import TableHierarchy
from sqlanon.domain.models.k_anonymity import KAnonymity
from sqlanon.domain.models.l_diversity import LDiversity
from sqlanon.domain.models.t_closeness import TCloseness
from sqlanon.engines.duckdb import DuckDBEngine
from sqlanon.methods.generalization.evaluator import Evaluator, Problem
from sqlanon.methods.generalization.search import SqlNodeEvaluator, lattice_of, search
from sqlanon.methods.generalization.search.fast import FastNodeEvaluator
from sqlanon.methods.generalization.search.result import tied
from sqlanon.sql.nodes import table

LEAVES = ["a", "b", "c", "d", "e", "f"]
SENSITIVE = ["x", "y", "z"]


@st.composite
def hierarchy(draw) -> list[list[str]]:
    """Nested groupings of the leaves: level j groups by index // b_j with b_j | b_{j+1}; top '*'."""
    height = draw(st.integers(1, 3))
    order = draw(st.permutations(LEAVES))
    widths, w = [], 1
    for _ in range(height - 1):
        w *= draw(st.sampled_from([2, 3]))
        widths.append(w)
    return [[leaf, *[f"g{j}_{order.index(leaf) // b}" for j, b in enumerate(widths, 1)], "*"]
            for leaf in LEAVES]


@st.composite
def problem_spec(draw):
    n_qis = draw(st.integers(2, 3))
    hs = [draw(hierarchy()) for _ in range(n_qis)]
    if n_qis == 3:  # keep 3-QI lattices small (heights ≤ 2)
        hs = [[[row[0], *row[-2:]] if len(row) > 3 else row for row in h] for h in hs]
    domain = [draw(st.sampled_from([3, 4, 6])) for _ in range(n_qis)]
    rows = draw(st.lists(st.tuples(*[st.sampled_from(LEAVES[:d]) for d in domain],
                                   st.sampled_from(SENSITIVE)), min_size=1, max_size=30))
    kind = draw(st.sampled_from(["k", "l", "t", "k+t"]))
    k = draw(st.integers(2, 4))
    models = {"k": [KAnonymity(k)], "l": [LDiversity("s", draw(st.integers(2, 3)))],
              "t": [TCloseness("s", draw(st.sampled_from([0.2, 0.4])))],
              "k+t": [KAnonymity(k), TCloseness("s", draw(st.sampled_from([0.2, 0.4])))]}[kind]
    limit = draw(st.sampled_from([0.0, 0.0, 0.1, 0.25]))
    metric = draw(st.sampled_from(["loss", "discernibility", "precision", "loss_arithmetic",
                                   "entropy"]))
    return hs, rows, models, limit, metric


@pytest.fixture(scope="module")
def engine():
    e = DuckDBEngine()
    yield e
    e.close()


def pareto_minimal(nodes: list[tuple[int, ...]]) -> set[tuple[int, ...]]:
    return {n for n in nodes if not any(m != n and all(a <= b for a, b in zip(m, n)) for m in nodes)}


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(spec=problem_spec())
def test_strategies_match_exhaustive(engine, spec):
    hs, rows, models, limit, metric = spec
    qis = [f"q{i}" for i in range(len(hs))]
    engine.con.execute("DROP TABLE IF EXISTS r")
    engine.con.execute(f"CREATE TABLE r ({', '.join(f'{q} VARCHAR' for q in qis)}, s VARCHAR)")
    engine.con.executemany(f"INSERT INTO r VALUES ({', '.join('?' * (len(qis) + 1))})", rows)
    problem = Problem(engine, table("r"), qis, {q: TableHierarchy(h) for q, h in zip(qis, hs)},
                      ["s"], models)
    with Evaluator(problem) as ev:
        nodes = SqlNodeEvaluator(ev, limit, metric)
        lattice = lattice_of(problem)
        ex = search(lattice, nodes, "exhaustive")
        values = {n: nodes.known(n) for n in lattice}
        runs = [[search(lattice, nodes, s) for s in ("optimal", "incognito", "binary")]]
        # the in-memory evaluator brings prior bounds (Loss, precision) and different pruning
        memory = FastNodeEvaluator(ev, limit, metric)
        runs.append([search(lattice, memory, s) for s in ("optimal", "incognito", "binary")])
    ok = [n for n, r in values.items() if r.anonymous]
    assert sorted(ex.solutions) == sorted(ok) and ex.checked == len(lattice)
    for opt, inc, binary in runs:
        assert_contracts(lattice, values, ok, ex, opt, inc, binary)


def assert_contracts(lattice, values, ok, ex, opt, inc, binary) -> None:
    for r in (ex, opt, inc, binary):
        assert r.checked + r.tagged + r.pruned == len(lattice)
    assert set(inc.solutions) == pareto_minimal(ok)
    if not ok:
        assert opt.node is None and binary.node is None and not inc.solutions
        return
    best = min(values[n].metric for n in ok)
    assert tied(opt.metric, best)
    assert set(opt.ties) == {n for n in ok if tied(values[n].metric, best)}
    assert opt.node in opt.ties
    lowest = min(sum(n) for n in ok)
    assert binary.height == lowest
    assert set(binary.solutions) == {n for n in ok if sum(n) == lowest}


def test_monotone_models_tag_without_checking_everything(engine):
    """Each (q0, q1) pair once, q0 over 6 leaves and q1 over 2; k = 3.

    Worked by hand: q0 at level 0 leaves classes of at most 2 rows, so every node with q0 = 0 fails;
    the minimal satisfying nodes are (1, 1) (pairs of leaves × both q1 values: classes of 4) and
    (3, 0). Loss (n = 12, |D| = 6): at (1, 1) each attribute has A = 12 · 2/6 = 4 and m = 2, so
    loss_i = (4 − 2)/(12 − 2) = 0.2 and Loss = (1.2 · 1.2)^(1/2) − 1 = 0.2; at (3, 0) Loss =
    2^(1/2) − 1; every other satisfying node generalizes one of them further.
    """
    engine.con.execute("DROP TABLE IF EXISTS u")
    engine.con.execute("CREATE TABLE u (q0 VARCHAR, q1 VARCHAR, s VARCHAR)")
    rows = list(itertools.product(LEAVES, LEAVES[:2]))
    engine.con.executemany("INSERT INTO u VALUES (?, ?, 'x')", rows)
    h = [[leaf, f"g{i // 2}", f"h{i // 4}", "*"] for i, leaf in enumerate(LEAVES)]
    problem = Problem(engine, table("u"), ["q0", "q1"],
                      {"q0": TableHierarchy(h), "q1": TableHierarchy(h)}, [], [KAnonymity(3)])
    with Evaluator(problem) as ev:
        nodes = SqlNodeEvaluator(ev, 0.0, "loss")
        r = search(lattice_of(problem), nodes, "optimal")
        inc = search(lattice_of(problem), nodes, "incognito")
    assert r.node == (1, 1) and r.ties == [(1, 1)]
    assert r.metric == pytest.approx(0.2, abs=1e-9)
    assert set(inc.solutions) == {(1, 1), (3, 0)}
    assert r.tagged > 0 and r.checked < 16
