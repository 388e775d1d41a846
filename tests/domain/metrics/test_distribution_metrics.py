"""Entropy, KL divergence and the classification metric against plain-Python brute force."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sqlanon.domain.metrics import MetricContext
from sqlanon.domain.metrics.entropy import per_attribute_entropy
from sqlanon.errors import SpecError
from tests.domain.metrics import oracle
from tests.domain.metrics.cases import Case, cases, checked, metric

SETTINGS = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(cases())
def test_entropy_matches_brute_force(shared_duck, case: Case):
    _, kept = case.released()
    expected = oracle.arx_entropy(case.rows, case.qis, case.hiers, case.levels, kept)
    with checked(shared_duck, case) as ctx:
        got = per_attribute_entropy(ctx)
        total = metric(ctx, "entropy")
    # the suppression term's order is a hash order in ARX too: equal up to the last bit before truncation
    assert got == pytest.approx(expected, rel=1e-12, abs=1.1e-10)
    assert total == pytest.approx(sum(expected), rel=1e-12, abs=1e-9)


@SETTINGS
@given(cases())
def test_kl_divergence_matches_brute_force(shared_duck, case: Case):
    _, kept = case.released()
    per_tuple = oracle.kl(case.rows, case.qis, case.hiers, case.levels, kept, per_row=False)
    per_row = oracle.kl(case.rows, case.qis, case.hiers, case.levels, kept, per_row=True)
    with checked(shared_duck, case) as ctx:
        assert metric(ctx, "kl_divergence") == pytest.approx(per_tuple, rel=1e-9, abs=1e-9)
        assert metric(ctx, "kl_divergence_arx") == pytest.approx(per_row, rel=1e-9, abs=1e-9)


@SETTINGS
@given(cases())
def test_classification_matches_brute_force(shared_duck, case: Case):
    keys, kept = case.released()
    with checked(shared_duck, case) as ctx:
        assert metric(ctx, "classification") == pytest.approx(
            oracle.classification(case.rows, keys, kept, "label"), rel=1e-12)
        arx = MetricContext(ctx.evaluator, ctx.node, options={"suppressed_penalty": 0.5})
        assert metric(arx, "classification") == pytest.approx(
            oracle.classification(case.rows, keys, kept, "label", 0.5), rel=1e-12)


def _two_classes() -> Case:
    """Class a: labels p,p,q (majority p); class b: p,q (tie); one c row suppressed (k=2, 1 of 6 allowed)."""
    rows = [{"q0": v, "label": lab} for v, lab in
            [("a", "p"), ("a", "p"), ("a", "q"), ("b", "p"), ("b", "q"), ("c", "r")]]
    return Case(["q0"], {"q0": [["a", "ab", "*"], ["b", "ab", "*"], ["c", "c", "*"]]}, rows,
                {"q0": 0}, 2, 0.2)


def test_classification_by_hand(shared_duck):
    # penalties: class a 1 (the q), class b 2 (no majority), the suppressed row 1 -> 4/6
    with checked(shared_duck, _two_classes()) as ctx:
        assert metric(ctx, "classification") == 4 / 6
    # a QI as target: at level 0 each class holds one q0 value, so only the suppressed row costs
    with checked(shared_duck, _two_classes(), {"target": "q0"}) as ctx:
        assert metric(ctx, "classification") == 1 / 6


def test_entropy_and_kl_by_hand(shared_duck):
    # level 1: a,b -> ab (5 rows), c -> c (1 row, suppressed as a class of 1 < k = 2)
    import math

    case = _two_classes()
    case.levels = {"q0": 1}
    with checked(shared_duck, case) as ctx:
        # G = 3·log2(5/3) + 2·log2(5/2); T = 1·log2(1/1) = 0
        g = 3 * math.log2(5 / 3) + 2 * math.log2(5 / 2)
        assert metric(ctx, "entropy") == pytest.approx(math.floor(g * 1e10) / 1e10, abs=1e-10)
        # p(a) = 3/6 vs (5/6)/2; p(b) = 2/6 vs (5/6)/2; p(c) = 1/6 vs (1/6)/3 (all of the 3-leaf domain)
        expected = 0.5 * math.log2(0.5 / (5 / 12)) + (1 / 3) * math.log2((1 / 3) / (5 / 12)) \
            + (1 / 6) * math.log2(3)
        assert metric(ctx, "kl_divergence") == pytest.approx(expected, rel=1e-12)


def test_classification_errors(shared_duck):
    case = _two_classes()
    with checked(shared_duck, case, {"target": "salary"}) as ctx:
        with pytest.raises(SpecError, match=r"metrics\.options\.target: classification target 'salary' "
                                             r"is not a quasi-identifier or sensitive attribute"):
            metric(ctx, "classification")
    with checked(shared_duck, case, {"suppressed_penalty": 2}) as ctx:
        with pytest.raises(SpecError, match=r"suppressed_penalty must be a number in \[0, 1\], got 2"):
            metric(ctx, "classification")


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.integers(0, 19), min_size=1, max_size=25), st.integers(0, 3), st.sampled_from([1, 2, 3]))
def test_interval_hierarchy_entropy_and_kl(shared_duck, xs, level, k):
    """A rule-based hierarchy: its table is built over the data, so |D| = the distinct values present."""
    from sqlanon.domain.hierarchy import IntervalHierarchy
    from sqlanon.domain.models.k_anonymity import KAnonymity
    from sqlanon.methods.generalization.evaluator import Evaluator, Problem
    from sqlanon.sql.nodes import table

    rows = [{"x": x} for x in xs]
    # the same grouping as widths 5 and 10, written out over the values that occur
    hier = [[str(v), f"a{v // 5}", f"b{v // 10}", "*"] for v in sorted(set(xs))]
    _, kept = oracle.released(rows, ["x"], {"x": hier}, {"x": level}, k, 1.0)
    shared_duck.con.execute("CREATE OR REPLACE TABLE iv (x INTEGER)")
    try:
        shared_duck.con.executemany("INSERT INTO iv VALUES (?)", [(x,) for x in xs])
        problem = Problem(shared_duck, table("iv"), ["x"], {"x": IntervalHierarchy((5, 10))}, [],
                          [KAnonymity(k)])
        with Evaluator(problem) as ev:
            ctx = MetricContext(ev, ev.check({"x": level}, 1.0))
            assert per_attribute_entropy(ctx) == pytest.approx(
                oracle.arx_entropy(rows, ["x"], {"x": hier}, {"x": level}, kept), rel=1e-12, abs=1.1e-10)
            assert metric(ctx, "kl_divergence") == pytest.approx(
                oracle.kl(rows, ["x"], {"x": hier}, {"x": level}, kept, per_row=False), rel=1e-9, abs=1e-9)
    finally:
        shared_duck.con.execute("DROP TABLE iv")
