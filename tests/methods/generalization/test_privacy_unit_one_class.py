"""Rule ``one_class``: at a node a person's rows must generalize to one tuple, or the person is
suppressed whole, counted against the suppression limit in persons.

Checked against a brute force over persons on random tables (every node, in SQL), with the
monotonicity the search relies on (a person who fits a node fits every node above it, so a node
anonymous under a monotone model stays so above), the search against exhaustive search, and the
released rows: every row of a released person carries the person's one class, in every output mode.
"""

from __future__ import annotations

import itertools
import math
from collections import defaultdict

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sqlanon import api
from sqlanon.compile.persons import Persons
from sqlanon.domain.hierarchy import TableHierarchy
from sqlanon.domain.models.k_anonymity import KAnonymity
from sqlanon.domain.models.l_diversity import LDiversity
from sqlanon.engines.duckdb import DuckDBEngine
from sqlanon.errors import SpecError
from sqlanon.methods.generalization.evaluator import Evaluator, Problem
from sqlanon.methods.generalization.node_check import suppression_budget
from sqlanon.methods.generalization.search import SqlNodeEvaluator, lattice_of, search
from sqlanon.methods.generalization.search.fast import FastNodeEvaluator
from sqlanon.methods.generalization.search.result import tied
from sqlanon.spec import spec_from_dict
from sqlanon.sql.nodes import table

LEAVES = ["a", "b", "c", "d"]
HIERARCHY = [[leaf, f"g{i // 2}", "*"] for i, leaf in enumerate(LEAVES)]
LABEL = {r[0]: r for r in HIERARCHY}


@st.composite
def persons_table(draw):
    rows = []
    for pid in range(draw(st.integers(1, 14))):
        for _ in range(draw(st.integers(1, 3))):
            rows.append((pid, draw(st.sampled_from(LEAVES)), draw(st.sampled_from(LEAVES[:3])),
                         draw(st.sampled_from(["x", "y", "z"]))))
    kind = draw(st.sampled_from(["k", "l", "k+l"]))
    k = draw(st.integers(2, 3))
    models = {"k": [KAnonymity(k)], "l": [LDiversity("s", 2)], "k+l": [KAnonymity(k), LDiversity("s", 2)]}
    return rows, models[kind], draw(st.sampled_from([0.0, 0.2, 0.5]))


@pytest.fixture(scope="module")
def engine():
    e = DuckDBEngine()
    yield e
    e.close()


def load(engine, rows, models=(), sensitive=()) -> Problem:
    engine.con.execute("DROP TABLE IF EXISTS v")
    engine.con.execute("CREATE TABLE v (pid INTEGER, q0 VARCHAR, q1 VARCHAR, s VARCHAR)")
    engine.con.executemany("INSERT INTO v VALUES (?, ?, ?, ?)", rows)
    return Problem(engine, table("v"), ["q0", "q1"], {q: TableHierarchy(HIERARCHY) for q in ("q0", "q1")},
                   list(sensitive), list(models), persons=Persons("pid", {"q0": "one_class", "q1": "min"}))


def classes_of(rows, node) -> tuple[dict[tuple, list[int]], set[int]]:
    """The persons per class at ``node`` and the persons who fit none: q0's rows must generalize to
    one value, q1 is the person's smallest value."""
    q0s: dict[int, set[str]] = defaultdict(set)
    q1: dict[int, str] = {}
    for pid, a, b, _ in rows:
        q0s[pid].add(LABEL[a][node[0]])
        q1[pid] = min(q1.get(pid, b), b)
    unfit = {p for p, labels in q0s.items() if len(labels) > 1}
    classes: dict[tuple, list[int]] = defaultdict(list)
    for p, labels in q0s.items():
        if p not in unfit:
            classes[(next(iter(labels)), LABEL[q1[p]][node[1]])].append(p)
    return classes, unfit


def oracle(rows, models, limit, node) -> tuple[bool, int]:
    """(anonymous, outlier persons) by brute force over the persons."""
    values: dict[int, set[str]] = defaultdict(set)
    for pid, _, _, s in rows:
        values[pid].add(s)
    classes, unfit = classes_of(rows, node)

    def holds(members: list[int]) -> bool:
        distinct = set().union(*(values[p] for p in members))
        return all(len(members) >= m.k if isinstance(m, KAnonymity) else len(distinct) >= math.ceil(m.l)
                   for m in models)

    outliers = len(unfit) + sum(len(ms) for ms in classes.values() if not holds(ms))
    return outliers <= suppression_budget(limit, len(values)), outliers


SETTINGS = settings(max_examples=8, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


@SETTINGS
@given(case=persons_table())
def test_every_node_suppresses_the_persons_who_fit_no_class(engine, case):
    rows, models, limit = case
    problem = load(engine, rows, models, ["s"])
    nodes = list(lattice_of(problem))
    with Evaluator(problem) as ev:
        for node in nodes:
            got = ev.check(dict(zip(problem.qis, node)), limit)
            assert (got.anonymous, got.outlier_rows) == oracle(rows, models, limit, node), node
            assert got.rows == len({r[0] for r in rows})
    # monotone: who fits a node fits every node above it, so k-anonymity's outliers only shrink
    for low, high in itertools.product(nodes, nodes):
        if all(a <= b for a, b in zip(low, high)):
            assert classes_of(rows, high)[1] <= classes_of(rows, low)[1]
            k_only = [KAnonymity(2)]
            assert oracle(rows, k_only, limit, high)[1] <= oracle(rows, k_only, limit, low)[1]


@SETTINGS
@given(case=persons_table())
def test_the_search_in_memory_agrees_with_sql_and_finds_the_exhaustive_optimum(engine, case):
    rows, _, limit = case
    problem = load(engine, rows, [KAnonymity(2)])
    with Evaluator(problem) as ev:
        exhaustive = SqlNodeEvaluator(ev, limit, "loss")
        lattice = lattice_of(problem)
        ex = search(lattice, exhaustive, "exhaustive")
        values = {n: exhaustive.known(n) for n in lattice}
        memory = FastNodeEvaluator(ev, limit, "loss")
        for n in lattice:
            sql, mem = ev.check(dict(zip(problem.qis, n)), limit), memory.fast.evaluate(n)
            assert (mem.anonymous, mem.outlier_rows, mem.classes, mem.min_class_size) == \
                (sql.anonymous, sql.outlier_rows, sql.classes, sql.min_class_size), n
            if mem.anonymous:  # the persons who fit no class are suppressed rows for the metric too
                assert tied(mem.metric, values[n].metric), n
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


VISITS = [  # pid, age, zip, visit, dx
    (1, 31, "1234", 1, "flu"), (1, 38, "1234", 2, "flu"),     # one interval of 10 (30-39)
    (2, 33, "1235", 1, "cold"), (2, None, "1235", 2, "cold"),  # a NULL takes the person's value
    (3, 39, "1234", 1, "ulcer"), (3, 41, "1234", 2, "flu"),   # 39 and 41: no interval of 10 or 20
    (4, 35, "1236", 1, "flu"),
    (5, 48, "1299", 1, "cold"), (5, 52, "1299", 2, "cold"), (5, 58, "1299", 3, "asthma"),  # 20 only
    (6, 55, "1298", 1, "flu"),
]


def spec(levels, limit=0.5, **output) -> dict:
    return {"source": {"table": "visits"},
            "privacy_unit": {"column": "pid", "attributes": {"age": "one_class"}},
            "attributes": {"pid": "insensitive", "visit": "insensitive", "dx": "insensitive",
                           "age": {"role": "quasi_identifier",
                                   "hierarchy": {"intervals": {"widths": [10, 20]}}},
                           "zip": {"role": "quasi_identifier", "hierarchy": {"mask": {"levels": 4}}}},
            "privacy": [{"k_anonymity": {"k": 2}}],
            "transformation": {"levels": levels, "suppression_limit": limit},
            "output": {"mode": "table", "name": "out", "replace": True, **output}}


@pytest.fixture()
def visits(duck):
    duck.con.execute("CREATE TABLE visits (pid INTEGER, age INTEGER, zip VARCHAR, visit INTEGER, dx VARCHAR)")
    duck.con.executemany("INSERT INTO visits VALUES (?, ?, ?, ?, ?)", VISITS)
    return duck


def released(engine, relation="out") -> list[tuple]:
    return sorted(engine.con.execute(f'SELECT pid, visit, age, zip FROM "{relation}"').fetchall())


def test_released_rows_carry_their_persons_one_class(visits, tmp_path):
    report = api.apply(spec({"age": 1, "zip": 2}), engine=visits)
    # persons 3 (39, 41) and 5 (48..58) fit no interval of 10: suppressed whole, as is 6, alone
    assert report.as_dict()["privacy_unit"]["suppressed_persons"] == 3
    assert report.as_dict()["privacy_unit"]["suppressed_rows"] == 6
    rows = released(visits)
    assert {r[0] for r in rows} == {1, 2, 4}
    assert all(len({r[2:] for r in rows if r[0] == p}) == 1 for p in (1, 2, 4))
    assert [r[0] for r in rows].count(2) == 2  # the NULL age is released with the person's class
    wider = api.apply(spec({"age": 2, "zip": 2}), engine=visits)
    assert wider.as_dict()["privacy_unit"]["suppressed_persons"] == 1  # 3 still spans two classes
    expected = released(visits)
    assert {r[0] for r in expected} == {1, 2, 4, 5, 6}
    assert all(len({r[2:] for r in expected if r[0] == p}) == 1 for p in (1, 2, 4, 5, 6))
    api.apply(spec({"age": 2, "zip": 2}, mode="view", name="out_view"), engine=visits)
    assert released(visits, "out_view") == expected
    path = tmp_path / "out.sql"
    api.apply(spec({"age": 2, "zip": 2}, mode="sql", path=str(path)), engine=visits)
    visits.con.execute(f"CREATE TABLE from_sql AS {path.read_text().strip().rstrip(';')}")
    assert released(visits, "from_sql") == expected


def test_too_many_persons_that_fit_no_class_fail_the_limit(visits):
    from sqlanon.errors import InfeasibleError

    with pytest.raises(InfeasibleError, match="not anonymous"):
        api.apply(spec({"age": 1, "zip": 2}, limit=0.2), engine=visits)


@pytest.mark.parametrize(("change", "message"), [
    ({"privacy_unit": {"column": "pid", "attributes": {"dx": "one_class"}},
      "attributes": {"pid": "insensitive", "visit": "insensitive", "dx": "sensitive",
                     "age": {"role": "quasi_identifier", "hierarchy": {"intervals": {"widths": [10]}}},
                     "zip": "insensitive"}},
     r"privacy_unit\.attributes\.dx: rule one_class generalizes a quasi-identifier"),
    ({"transformation": {"levels": {"age": 1}, "suppressed": "mask"}},
     r"transformation\.suppressed: rule one_class suppresses whole persons"),
    ({"transformation": {"method": "microaggregation", "k": 2}},
     r"privacy_unit: rule one_class .* which method microaggregation does not do"),
])
def test_where_one_class_is_refused(change, message):
    with pytest.raises(SpecError, match=message):
        spec_from_dict({**spec({"age": 1}), **change})
