"""Strategies against the seeds' worked examples.

Seed 004 (Ciriani et al., k-Anonymity) on its PT: the k-minimal generalizations of Def 5 and
Samarati's binary-search answers with their probe traces (digest seed-002-004 §D). Seed 000 Fig 5.3:
the minimal nodes for k = 2, 3, 4 (digest seed-000 §4.3).
"""

from __future__ import annotations

import pytest

from sqlanon.domain.hierarchy import IntervalHierarchy, TableHierarchy
from sqlanon.domain.models.k_anonymity import KAnonymity
from sqlanon.methods.generalization.evaluator import Evaluator, Problem, suppression_budget
from sqlanon.methods.generalization.search import (
    Lattice,
    SqlNodeEvaluator,
    lattice_of,
    search,
    search_problem,
)
from sqlanon.sql.nodes import table
from tests.domain.models.test_seed_k_anonymity import PT, PT_HIERARCHIES, TABLE_5_1

QI4 = ["race", "dob", "sex", "zip"]
QI5 = ["race", "dob", "sex", "zip", "marital"]


def nodes(*codes: str) -> set[tuple[int, ...]]:
    return {tuple(int(c) for c in code) for code in codes}


def limit_for(max_sup: int, rows: int = 9) -> float:
    """A suppression limit whose budget floor(limit · rows) is exactly ``max_sup`` rows."""
    limit = (max_sup + 0.5) / rows
    assert suppression_budget(limit, rows) == max_sup
    return limit


@pytest.fixture()
def pt(duck):
    duck.con.execute("CREATE TABLE pt (race VARCHAR, dob VARCHAR, sex VARCHAR, zip VARCHAR, "
                     "marital VARCHAR)")
    duck.con.executemany("INSERT INTO pt VALUES (?, ?, ?, ?, ?)", PT)
    return duck


def run(engine, qis, k, max_sup, *strategies, metric=None):
    """The strategies' results on one evaluator (its memo is shared; each search counts its own)."""
    hs = {q: TableHierarchy(PT_HIERARCHIES[q]) for q in qis}
    problem = Problem(engine, table("pt"), qis, hs, [], [KAnonymity(k)])
    with Evaluator(problem) as ev:
        nodes_ = SqlNodeEvaluator(ev, limit_for(max_sup), metric)
        out = [search(lattice_of(problem), nodes_, s) for s in strategies]
    return out if len(out) > 1 else out[0]


# (k, MaxSup, k-minimal set, lowest height, binary answer, probe trace or None)
CASES_4 = [
    (2, 0, ("0202", "1102", "1201"), 4, ("0202", "1102", "1201"), [(3, False), (5, True), (4, True)]),
    (2, 1, ("0102", "1201"), 3, ("0102",), [(3, True), (1, False), (2, False)]),
    (2, 2, ("0102", "0311", "1101", "1200"), 3, ("0102", "1101", "1200"),
     [(3, True), (1, False), (2, False)]),
    (2, 3, ("0102", "0201", "1100"), 2, ("1100",), None),
    (3, 0, ("1311",), 6, ("1311",), [(3, False), (5, False), (6, True)]),
    (3, 1, ("1311",), 6, ("1311",), [(3, False), (5, False), (6, True)]),
    (3, 2, ("1201",), 4, ("1201",), [(3, False), (5, True), (4, True)]),
    (3, 3, ("1201",), 4, ("1201",), None),
]


@pytest.mark.parametrize("k, max_sup, minimal, height, answer, trace", CASES_4)
def test_seed_004_four_qis(pt, k, max_sup, minimal, height, answer, trace):
    inc, b, opt = run(pt, QI4, k, max_sup, "incognito", "binary", "optimal", metric="height")
    assert set(inc.solutions) == nodes(*minimal)
    assert b.height == height
    assert set(b.solutions) == nodes(*answer)
    if trace is not None:
        assert b.trace == trace
    # the height metric makes the optimum the lowest height, tied over the binary answer
    assert opt.metric == height
    assert set(opt.ties) == nodes(*answer)


def test_seed_004_k3_only_two_nodes_satisfy(pt):
    ex = run(pt, QI4, 3, 0, "exhaustive")
    assert set(ex.solutions) == nodes("1311", "1312")


CASES_5 = [
    (2, 0, ("02022", "11021", "12012", "13111"), ("11021",)),
    (2, 1, ("01022", "11021", "12011", "13110"), ("01022", "11021", "12011")),
    (2, 2, ("01022", "02021", "03110", "11011", "12002", "12010", "13101"), ("11011", "12010")),
    (3, 0, ("13111",), ("13111",)),
    (3, 1, ("13111",), ("13111",)),
    (3, 2, ("12012", "12021", "13111"), ("12012", "12021")),
]


@pytest.mark.parametrize("k, max_sup, minimal, lowest", CASES_5)
def test_seed_004_five_qis(pt, k, max_sup, minimal, lowest):
    inc, b = run(pt, QI5, k, max_sup, "incognito", "binary")
    assert set(inc.solutions) == nodes(*minimal)
    assert set(b.solutions) == nodes(*lowest)
    assert b.height == sum(int(c) for c in lowest[0])


def test_seed_004_race_zip_binary_example(pt):
    """§C8: QI {Race, ZIP}, h = 3, k = 2, MaxSup = 2: height 1 succeeds, height 0 fails."""
    b = run(pt, ["race", "zip"], 2, 2, "binary")
    assert b.trace == [(1, True), (0, False)]
    assert set(b.solutions) == {(1, 0), (0, 1)}
    assert set(run(pt, ["race", "zip"], 2, 6, "incognito").solutions) == {(0, 0)}


@pytest.fixture()
def table_5_1(duck):
    duck.con.execute("CREATE TABLE t51 (age INTEGER, zip INTEGER)")
    duck.con.executemany("INSERT INTO t51 VALUES (?, ?)", TABLE_5_1)
    zips = sorted({z for _, z in TABLE_5_1})
    zip_h = TableHierarchy([[str(z), str(z // 10), "*"] for z in zips])
    return Problem(duck, table("t51"), ["age", "zip"],
                   {"age": IntervalHierarchy((5, 10)), "zip": zip_h}, [], [])


@pytest.mark.parametrize("k, minimal", [(2, {(3, 0), (1, 1)}), (3, {(2, 2), (3, 0)}),
                                        (4, {(2, 2), (3, 1)})])
def test_seed_000_fig_5_3_minimal_nodes(table_5_1, k, minimal):
    table_5_1.models = [KAnonymity(k)]
    lattice = lattice_of(table_5_1)
    assert lattice.heights == (3, 2)
    inc = search_problem(table_5_1, "incognito", metric=None)
    assert set(inc.solutions) == minimal
    assert inc.checked + inc.tagged + inc.pruned == 12


def test_lattice_ids_and_neighbours():
    """ARX's node id: the first attribute varies fastest (peer-semantics §1)."""
    lat = Lattice([1, 3, 1, 2])
    assert lat.size == 2 * 4 * 2 * 3
    assert [lat.node_of(i) for i in range(3)] == [(0, 0, 0, 0), (1, 0, 0, 0), (0, 1, 0, 0)]
    assert lat.node_id((0, 0, 0, 1)) == 16 and lat.node_id((1, 3, 1, 2)) == 47
    assert all(lat.node_id(lat.node_of(i)) == i for i in range(lat.size))
    assert [len(lat.nodes_at(h)) for h in range(8)] == [1, 4, 8, 11, 11, 8, 4, 1]
    assert sorted(lat.successors((1, 3, 0, 1))) == [(1, 3, 0, 2), (1, 3, 1, 1)]
    assert sorted(lat.predecessors((1, 0, 0, 2))) == [(0, 0, 0, 2), (1, 0, 0, 1)]
    assert lat.is_generalization_of((1, 2, 0, 1), (0, 2, 0, 0))
    assert not lat.is_generalization_of((1, 2, 0, 1), (0, 3, 0, 0))


def test_lattice_tags_spread_by_direction():
    from sqlanon.methods.generalization.search import Direction, Property

    lat = Lattice([2, 2])
    up, down = Property("u", Direction.UP), Property("d", Direction.DOWN)
    assert lat.tag((1, 0), up) == 6  # (1,0) (2,0) (1,1) (2,1) (1,2) (2,2)
    assert lat.tagged(up) == {n for n in lat if n[0] >= 1} == set(lat.generalizations((1, 0)))
    assert lat.tag((2, 2), up) == 0
    assert lat.tag((0, 1), down) == 2
    assert lat.tagged(down) == {(0, 0), (0, 1)} == set(lat.specializations((0, 1)))


def test_bad_strategy_and_missing_metric(table_5_1):
    from sqlanon.errors import HierarchyError, SpecError

    table_5_1.models = [KAnonymity(2)]
    with pytest.raises(SpecError, match=r"strategy: unknown search strategy 'optimum'.*"
                                        r"Did you mean 'optimal'"):
        search_problem(table_5_1, "optimum")
    with pytest.raises(SpecError, match="metric: the optimal search needs a metric"):
        search_problem(table_5_1, "optimal", metric=None)
    with pytest.raises(HierarchyError, match=r"heights must be >= 0, got \[1, -1\]"):
        Lattice([1, -1])
