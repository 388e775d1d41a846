"""The average re-identification risk bound: a hand-computed table, then every node of random small
tables against a plain-Python oracle, each through the SQL check and the in-memory one, and the search
against exhaustive search."""

from __future__ import annotations

import itertools
import math
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sqlanon.domain.hierarchy import TableHierarchy
from sqlanon.domain.models import build_model
from sqlanon.domain.models.average_risk import AverageRisk
from sqlanon.domain.models.k_anonymity import KAnonymity
from sqlanon.errors import SpecError
from sqlanon.methods.generalization.evaluator import Evaluator, Problem
from sqlanon.methods.generalization.search import SqlNodeEvaluator, lattice_of, search
from sqlanon.methods.generalization.search.fast import FastEvaluator, FastNodeEvaluator
from sqlanon.sql.nodes import table

LETTERS = TableHierarchy([[v, "*"] for v in "abcdef"])


def _problem(engine, rows, models, hierarchies=None):
    qis = [f"q{i}" for i in range(len(rows[0]))]
    engine.con.execute("DROP TABLE IF EXISTS r")
    engine.con.execute(f"CREATE TABLE r ({', '.join(f'{q} VARCHAR' for q in qis)})")
    engine.con.executemany(f"INSERT INTO r VALUES ({', '.join('?' * len(qis))})", rows)
    hs = hierarchies or {q: LETTERS for q in qis}
    return Problem(engine, table("r"), qis, hs, [], models)


def _both(ev, node, limit):
    """(anonymous, outlier rows, released classes, achieved) in SQL and in memory."""
    check = ev.check(dict(zip(ev.p.qis, node)), limit)
    sql = (check.anonymous, check.outlier_rows, check.classes, check.models[0].achieved)
    r = FastEvaluator(ev, ev.p.models, None, limit).evaluate(node)
    return sql, (r.anonymous, r.outlier_rows, r.classes)


def test_hand_computed_classes(engine):
    """Classes of 1, 1, 2, 3 and 3 rows (n = 10, 5 classes: average risk 5/10). A class of size x is
    kept when the table with every smaller class suppressed (the suppressed rows one class) is within
    0.3: x = 1 gives 5/10, x = 2 gives (3 + 1)/10, x = 3 gives (2 + 1)/10. So the classes of 1 and 2
    rows (4 rows) are suppressed and the release has risk 3/10."""
    rows = [("a",), ("b",), ("c",), ("c",), ("d",), ("d",), ("d",), ("e",), ("e",), ("e",)]
    with Evaluator(_problem(engine, rows, [AverageRisk(0.3)])) as ev:
        sql, memory = _both(ev, (0,), 0.4)  # budget floor(0.4 · 10) = 4 rows
        assert sql == (True, 4, 2, 3 / 10)
        assert memory == sql[:3]
        sql, memory = _both(ev, (0,), 0.3)  # budget 3 rows: nothing is suppressed, risk 5/10
        assert sql == (False, 4, 5, 5 / 10)
        assert memory == sql[:3]
        sql, memory = _both(ev, (1,), 0.0)  # one class of 10: risk 1/10
        assert sql == (True, 0, 1, 1 / 10)
        assert memory == sql[:3]


def test_a_whole_group_of_equal_classes_is_suppressed(engine):
    """Classes of 1, 1, 1 and 10 rows, bound 0.25: ARX suppresses two of the single rows (3 classes
    left, 3/13); a per-class decision cannot tell the single rows apart, so all three go (2/13)."""
    rows = [("a",), ("b",), ("c",)] + [("d",)] * 10
    with Evaluator(_problem(engine, rows, [AverageRisk(0.25)])) as ev:
        sql, memory = _both(ev, (0,), 0.3)
        assert sql == (True, 3, 1, 2 / 13)
        assert memory == sql[:3]


def test_spec_key_and_parameter_errors():
    assert build_model("average_risk", {"threshold": 0.05}, "privacy[0].average_risk") == AverageRisk(0.05)
    assert str(AverageRisk(0.05)) == "0.05-average re-identification risk"
    with pytest.raises(SpecError, match=r"privacy\[0\]\.average_risk\.threshold: threshold must be a number "
                                        r"in \[0\.0, 1\.0\], got 2"):
        build_model("average_risk", {"threshold": 2}, "privacy[0].average_risk")
    with pytest.raises(SpecError, match="needs parameter 'threshold'"):
        build_model("average_risk", {}, "privacy[0].average_risk")


# -- every node of random small tables against the definition ----------------------------------------
TREE = TableHierarchy([[v, "x" if v in "abc" else "y", "*"] for v in "abcdef"])
NUMBERS = TableHierarchy([[str(v), str(v // 2), str(v // 4), "*"] for v in range(8)])
ROWS = st.lists(st.tuples(st.sampled_from("abcdef"), st.sampled_from([str(v) for v in range(8)])),
                min_size=1, max_size=40)


def oracle(rows, node, threshold, limit):
    """(anonymous, outlier rows, released classes) straight from the definition: the table's classes,
    1 / (n / classes) in doubles with the suppressed rows one class, each class kept when the table
    without the classes smaller than it meets the bound."""
    gen = [(TREE.table().mapping[a][node[0]], NUMBERS.table().mapping[b][node[1]]) for a, b in rows]
    sizes = list(Counter(gen).values())
    n = len(rows)

    def risk(classes: int) -> float:
        return 1.0 / (n / classes)

    kept = [x for x in sizes
            if risk(sum(1 for y in sizes if y >= x) + (1 if min(sizes) < x else 0)) <= threshold]
    outliers = n - sum(kept)
    anonymous = outliers <= math.floor(limit * n)
    if anonymous and outliers:  # the release meets the bound
        assert risk(len(kept) + 1) <= threshold
    return anonymous, outliers, len(kept) if anonymous else len(sizes)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=ROWS, threshold=st.sampled_from([0.05, 0.1, 0.2, 0.25, 1 / 3, 0.5]),
       limit=st.sampled_from([0.0, 0.1, 0.3]))
def test_every_node_matches_the_definition(engine, rows, threshold, limit):
    problem = _problem(engine, rows, [AverageRisk(threshold)], {"q0": TREE, "q1": NUMBERS})
    with Evaluator(problem) as ev:
        fast = FastEvaluator(ev, problem.models, "loss", limit)
        for node in itertools.product(range(3), range(4)):
            expected = oracle(rows, node, threshold, limit)
            check = ev.check({"q0": node[0], "q1": node[1]}, limit)
            r = fast.evaluate(node)
            assert (check.anonymous, check.outlier_rows, check.classes) == expected, node
            assert (r.anonymous, r.outlier_rows, r.classes) == expected, node


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=ROWS, threshold=st.sampled_from([0.1, 0.2, 1 / 3]), limit=st.sampled_from([0.0, 0.2]),
       with_k=st.booleans())
def test_search_finds_the_exhaustive_optimum(engine, rows, threshold, limit, with_k):
    models = [AverageRisk(threshold)] + ([KAnonymity(2)] if with_k else [])
    problem = _problem(engine, rows, models, {"q0": TREE, "q1": NUMBERS})
    with Evaluator(problem) as ev:
        lattice = lattice_of(problem)
        exhaustive = search(lattice, SqlNodeEvaluator(ev, limit, "loss"), "exhaustive")
        for nodes in (SqlNodeEvaluator(ev, limit, "loss"), FastNodeEvaluator(ev, limit, "loss")):
            best = search(lattice, nodes, "optimal")
            assert (best.node is None) == (exhaustive.node is None)
            if best.node is not None:
                assert best.metric == exhaustive.metric
