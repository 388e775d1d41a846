"""Numeric information loss: seed 000's Lemma 10.1 vector and numpy oracles on random tables."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sqlanon.domain.hierarchy import TableHierarchy
from sqlanon.domain.metrics import MetricContext, get_metric
from sqlanon.domain.metrics.numeric import compare_numeric, node_comparison
from sqlanon.domain.models.k_anonymity import KAnonymity
from sqlanon.errors import SpecError
from sqlanon.methods.generalization.evaluator import Evaluator, Problem
from sqlanon.sql.nodes import table
from tests.domain.metrics.cases import Case, cases, checked, metric

SETTINGS = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Seed 000 digest §4.7: x = 1..10, k = 3, groups {1,2,3}, {4,5,6}, {7,8,9,10} with centroids 2, 5, 8.5.
LEMMA_X = list(range(1, 11))
LEMMA_CENTROIDS = [2, 2, 2, 5, 5, 5, 8.5, 8.5, 8.5, 8.5]


def test_lemma_10_1_microaggregated_relation(duck):
    duck.con.execute("CREATE TABLE orig (id INTEGER, x INTEGER)")
    duck.con.execute("CREATE TABLE anon (id INTEGER, x DOUBLE)")
    duck.con.executemany("INSERT INTO orig VALUES (?, ?)", list(enumerate(LEMMA_X)))
    duck.con.executemany("INSERT INTO anon VALUES (?, ?)", list(enumerate(LEMMA_CENTROIDS))[::-1])
    c = compare_numeric(duck, "orig", "anon", ["x"], "id")
    assert c.sse == 9
    assert c.sst == 82.5
    assert c.sse / c.sst == pytest.approx(0.10909, abs=5e-6)
    # Σ|x − x̂| = 2 + 2 + 4 = 8; S = sqrt(82.5 / 9); IL1s = 8 / (10 · √2 · S)
    assert c.il1s == pytest.approx(8 / (10 * math.sqrt(2) * math.sqrt(82.5 / 9)), rel=1e-15)
    # group means keep the mean; the variance loses the within-group part: SSA = 82.5 − 9 = 73.5
    assert c.mean_change == {"x": 0.0}
    assert c.variance_change["x"] == pytest.approx(9 / 82.5, rel=1e-14)
    assert c.as_dict()["variance"]["x"] == {"original": 82.5 / 9, "released": 73.5 / 9}


def test_lemma_10_1_as_a_generalization(duck):
    """The same groups as a hierarchy level: the class means are the centroids."""
    duck.con.execute("CREATE TABLE v (x INTEGER)")
    duck.con.executemany("INSERT INTO v VALUES (?)", [(x,) for x in LEMMA_X])
    h = TableHierarchy([[str(x), "1-3" if x <= 3 else "4-6" if x <= 6 else "7-10", "*"] for x in LEMMA_X])
    problem = Problem(duck, table("v"), ["x"], {"x": h}, [], [KAnonymity(3)],
                      column_types={"x": "INTEGER"})
    with Evaluator(problem) as ev:
        ctx = MetricContext(ev, ev.check({"x": 1}))
        assert get_metric("sse").compute(ctx) == 9
        assert get_metric("sst").compute(ctx) == 82.5
        assert get_metric("mean_change_max").compute(ctx) == 0.0
        top = MetricContext(ev, ev.check({"x": 2}))
        assert get_metric("sse").compute(top) == 82.5  # one class: x̂ = x̄ everywhere


def numpy_figures(x: np.ndarray, y: np.ndarray) -> dict[str, object]:
    """The figures from their definitions, original ``x`` and released ``y`` as (records × columns)."""
    n, m = x.shape
    sd = x.std(axis=0, ddof=1) if n > 1 else np.zeros(m)
    il1s = sum(np.abs(x[:, j] - y[:, j]).sum() / (math.sqrt(2) * sd[j]) for j in range(m) if sd[j] > 0)
    def cov(v):
        c = np.cov(v, rowvar=False, ddof=1).reshape(m, m) if n > 1 else np.zeros((m, m))
        constant = np.ptp(v, axis=0) == 0  # exactly 0, not numpy's rounding residue around the mean
        c[constant, :] = 0.0
        c[:, constant] = 0.0
        return c

    cov_x, cov_y = cov(x), cov(y)

    def corr(c, i, j):
        d = c[i, i] * c[j, j]
        return c[i, j] / math.sqrt(d) if d > 0 else 0.0

    def rel(old, new, scale=0.0):
        return abs(new - old) / abs(old) if abs(old) > 1e-12 * scale and old != 0 else abs(new - old)

    pairs = [(i, j) for i in range(m) for j in range(i + 1, m)]
    return {
        "sse": float(((x - y) ** 2).sum()), "sst": float(((x - x.mean(axis=0)) ** 2).sum()),
        "il1s": il1s / (n * m),
        "mean_change_max": max(rel(x[:, j].mean(), y[:, j].mean()) for j in range(m)),
        "variance_change_max": max(rel(cov_x[j, j], cov_y[j, j]) for j in range(m)),
        "covariance_change_max": max((rel(cov_x[i, j], cov_y[i, j], math.sqrt(cov_x[i, i] * cov_x[j, j]))
                                      for i, j in pairs), default=0.0),
        "correlation_change_max": max((abs(corr(cov_y, i, j) - corr(cov_x, i, j)) for i, j in pairs),
                                      default=0.0),
    }


def released_means(case: Case) -> np.ndarray:
    """x̂: each record's class mean; the suppressed records form one class of their own."""
    keys, kept = case.released()
    x = np.array([[float(r[q]) for q in case.qis] for r in case.rows])
    groups = [key if k else None for key, k in zip(keys, kept)]
    y = np.empty_like(x)
    for g in set(groups):
        rows = [i for i, h in enumerate(groups) if h == g]
        y[rows] = x[rows].mean(axis=0)
    return y


def _close(got: float, want: float) -> bool:
    # sums of squares subtract means; allow for the cancellation on tiny totals
    return got == pytest.approx(want, rel=1e-9, abs=1e-9)


@SETTINGS
@given(cases(numeric=True))
def test_generalization_figures_match_numpy(shared_duck, case: Case):
    x = np.array([[float(r[q]) for q in case.qis] for r in case.rows])
    expected = numpy_figures(x, released_means(case))
    with checked(shared_duck, case, sql_type="INTEGER") as ctx:  # numeric QIs found by column type
        for name, want in expected.items():
            assert _close(metric(ctx, name), want), name
        assert node_comparison(ctx).columns == tuple(case.qis)


@SETTINGS
@given(st.integers(2, 20).flatmap(lambda n: st.tuples(
    st.lists(st.lists(st.integers(-50, 50), min_size=3, max_size=3), min_size=n, max_size=n),
    st.lists(st.lists(st.floats(-5, 5, allow_nan=False), min_size=3, max_size=3), min_size=n, max_size=n))))
def test_keyed_relations_match_numpy(shared_duck, data):
    """Original vs. noisy release of three columns, rows matched by key (as microaggregation outputs)."""
    values, noise = data
    x = np.array(values, dtype=float)
    y = x + np.array(noise)
    duck = shared_duck.con
    duck.execute("CREATE OR REPLACE TABLE o (k INTEGER, a INTEGER, b INTEGER, c INTEGER)")
    duck.execute("CREATE OR REPLACE TABLE r (k INTEGER, a DOUBLE, b DOUBLE, c DOUBLE)")
    try:
        duck.executemany("INSERT INTO o VALUES (?, ?, ?, ?)",
                         [[i, *map(int, row)] for i, row in enumerate(x)])
        duck.executemany("INSERT INTO r VALUES (?, ?, ?, ?)",
                         [[i, *map(float, row)] for i, row in enumerate(y)])
        c = compare_numeric(shared_duck, "o", "r", ["a", "b", "c"], "k")
    finally:
        duck.execute("DROP TABLE o")
        duck.execute("DROP TABLE r")
    expected = numpy_figures(x, y)
    got = {"sse": c.sse, "sst": c.sst, "il1s": c.il1s, "mean_change_max": max(c.mean_change.values()),
           "variance_change_max": max(c.variance_change.values()),
           "covariance_change_max": max(c.covariance_change.values()),
           "correlation_change_max": max(c.correlation_change.values())}
    for name, want in expected.items():
        assert _close(got[name], want), name


def test_numeric_option_errors(shared_duck):
    case = Case(["q0"], {"q0": [["a", "a", "*"]]}, [{"q0": "a", "label": "p"}], {"q0": 0}, 1, 0.0)
    with checked(shared_duck, case) as ctx:
        with pytest.raises(SpecError, match=r"metrics\.options\.numeric: numeric metrics need numeric "
                                             r"quasi-identifiers; none of q0 is declared integer or decimal"):
            metric(ctx, "sse")
    with checked(shared_duck, case, {"numeric": ["label"]}) as ctx:
        with pytest.raises(SpecError, match=r"'label' is not a quasi-identifier"):
            metric(ctx, "il1s")
    with checked(shared_duck, case, {"numeric": "q0"}) as ctx:
        with pytest.raises(SpecError, match=r"numeric must be a non-empty list of quasi-identifiers, "
                                             r"got 'q0'"):
            metric(ctx, "sst")


def test_declared_types_choose_the_numeric_columns(adult_engine, adult_dir):
    """Adult is read as text; declaring age an integer makes it the numeric QI (as ARX's data types)."""
    from sqlanon import api
    from sqlanon.spec import spec_from_dict
    from tests.conftest import ADULT_QIS, adult_spec_dict
    from tests.domain.metrics import oracle

    d = adult_spec_dict(adult_dir, levels={"age": 2}, limit=0.0)
    d["attributes"]["age"]["type"] = "integer"
    d["metrics"] = ["sse", "sst", "mean_change_max"]
    m = api.check(spec_from_dict(d), engine=adult_engine).metrics
    rows, hiers = oracle.read_adult(adult_dir, ADULT_QIS)
    levels = {q: 2 if q == "age" else 0 for q in ADULT_QIS}
    keys = oracle.classes(rows, ADULT_QIS, hiers, levels)
    x = np.array([float(r["age"]) for r in rows])
    groups: dict[tuple, list[int]] = {}
    for i, key in enumerate(keys):
        groups.setdefault(key, []).append(i)
    y = np.empty_like(x)
    for members in groups.values():
        y[members] = x[members].mean()
    assert m["sse"] == pytest.approx(float(((x - y) ** 2).sum()), rel=1e-9)
    assert m["sst"] == pytest.approx(float(((x - x.mean()) ** 2).sum()), rel=1e-12)
    assert m["mean_change_max"] == pytest.approx(0.0, abs=1e-12)
