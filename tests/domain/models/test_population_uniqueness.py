"""The population-uniqueness bound: a hand-computed table, then every node of random small tables
against the definition through the SQL check and the in-memory one, and the search against
exhaustive search."""

from __future__ import annotations

import itertools
import math
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sqlanon.domain.hierarchy import TableHierarchy
from sqlanon.domain.models import build_model
from sqlanon.domain.models.k_anonymity import KAnonymity
from sqlanon.domain.models.population_uniqueness import NO_ESTIMATE, PopulationUniqueness
from sqlanon.domain.risk.histogram import SizeHistogram
from sqlanon.domain.risk.population import estimate
from sqlanon.errors import SpecError
from sqlanon.methods.generalization.evaluator import Evaluator, Problem
from sqlanon.methods.generalization.search import SqlNodeEvaluator, lattice_of, search
from sqlanon.methods.generalization.search.fast import FastEvaluator, FastNodeEvaluator
from sqlanon.sql.nodes import table

TREE = TableHierarchy([[v, "x" if v in "abc" else "y", "*"] for v in "abcdef"])
NUMBERS = TableHierarchy([[str(v), str(v // 2), str(v // 4), "*"] for v in range(8)])
ROWS = st.lists(st.tuples(st.sampled_from("abcdef"), st.sampled_from([str(v) for v in range(8)])),
                min_size=1, max_size=40)


def _problem(engine, rows, models):
    engine.con.execute("DROP TABLE IF EXISTS r")
    engine.con.execute("CREATE TABLE r (q0 VARCHAR, q1 VARCHAR)")
    engine.con.executemany("INSERT INTO r VALUES (?, ?)", rows)
    return Problem(engine, table("r"), ["q0", "q1"], {"q0": TREE, "q1": NUMBERS}, [], models)


def oracle(rows, node, model, limit):
    """(anonymous, outlier rows, released classes): the node's estimate over all of its classes; the
    size-1 classes are suppressed when it is above the bound (or there is none), the others kept."""
    gen = [(TREE.table().mapping[a][node[0]], NUMBERS.table().mapping[b][node[1]]) for a, b in rows]
    sizes = list(Counter(gen).values())
    n = len(rows)
    big_n = model.population_size if model.population_size else round(n / model.sampling_fraction)
    e = estimate(SizeHistogram.of_class_sizes(sizes), big_n, zayatz_fallback=False).of(model.estimator)
    uniques = sizes.count(1)
    share = 0.0 if not uniques else (e.fraction if e.available else NO_ESTIMATE)
    kept = [x for x in sizes if x > 1 or share <= model.threshold]
    outliers = n - sum(kept)
    anonymous = outliers <= math.floor(limit * n)
    return anonymous, outliers, len(kept) if anonymous else len(sizes)


def test_hand_computed_zayatz_bound(engine):
    """Classes of 1, 1, 2, 3, 3 (n = 10) from a population of 100: Zayatz's share decides whether the
    two single rows are suppressed."""
    rows = [("a", "0"), ("b", "0"), ("c", "0"), ("c", "0"), ("d", "0"), ("d", "0"), ("d", "0"),
            ("e", "0"), ("e", "0"), ("e", "0")]
    share = estimate(SizeHistogram.of({1: 2, 2: 1, 3: 2}), 100).zayatz.fraction
    assert 0 < share < 1
    for threshold, outliers in ((share * 0.99, 2), (share, 0)):
        model = PopulationUniqueness(threshold, population_size=100, estimator="zayatz")
        with Evaluator(_problem(engine, rows, [model])) as ev:
            check = ev.check({"q0": 0, "q1": 0}, 0.2)
            fast = FastEvaluator(ev, ev.p.models, None, 0.2).evaluate((0, 0))
            assert (check.anonymous, check.outlier_rows) == (True, outliers)
            assert (fast.anonymous, fast.outlier_rows) == (True, outliers)
            assert check.models[0].achieved == pytest.approx(share if outliers == 0 else 0.0, rel=1e-12)


def test_spec_parameters_and_errors():
    m = build_model("population_uniqueness", {"threshold": 0.05, "population_size": "usa"},
                    "privacy[0].population_uniqueness")
    assert m == PopulationUniqueness(0.05, population_size="usa")
    assert str(m) == "0.05-population uniqueness (dankar)"
    assert PopulationUniqueness(0.1, sampling_fraction=0.5, estimator="zayatz").is_monotonic(0.0)
    assert not PopulationUniqueness(0.1, sampling_fraction=0.5).is_monotonic(0.0)
    for params, key in (({"threshold": 0.1}, "population_size"),
                        ({"threshold": 0.1, "sampling_fraction": 0}, "sampling_fraction"),
                        ({"threshold": 0.1, "population_size": -3}, "population_size"),
                        ({"threshold": 0.1, "sampling_fraction": 0.1, "estimator": "mle"}, "estimator")):
        with pytest.raises(SpecError) as err:
            build_model("population_uniqueness", params, "privacy[0].population_uniqueness")
        assert err.value.path == f"privacy[0].population_uniqueness.{key}"


MODELS = st.sampled_from([
    PopulationUniqueness(0.05, sampling_fraction=0.5, estimator="zayatz"),
    PopulationUniqueness(0.2, sampling_fraction=0.2, estimator="zayatz"),
    PopulationUniqueness(0.1, population_size=200, estimator="dankar"),
    PopulationUniqueness(0.3, sampling_fraction=0.5, estimator="snb"),
])


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=ROWS, model=MODELS, limit=st.sampled_from([0.0, 0.1, 0.3]))
def test_every_node_matches_the_definition(engine, rows, model, limit):
    if model.population_size is not None and model.population_size < len(rows):
        return
    problem = _problem(engine, rows, [model])
    with Evaluator(problem) as ev:
        fast = FastEvaluator(ev, problem.models, "loss", limit)
        for node in itertools.product(range(3), range(4)):
            expected = oracle(rows, node, model, limit)
            check = ev.check({"q0": node[0], "q1": node[1]}, limit)
            r = fast.evaluate(node)
            assert (check.anonymous, check.outlier_rows, check.classes) == expected, node
            assert (r.anonymous, r.outlier_rows, r.classes) == expected, node


@settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=ROWS, model=MODELS, limit=st.sampled_from([0.0, 0.2]), with_k=st.booleans())
def test_search_finds_the_exhaustive_optimum(engine, rows, model, limit, with_k):
    if model.population_size is not None and model.population_size < len(rows):
        return
    models = [model] + ([KAnonymity(2)] if with_k else [])
    problem = _problem(engine, rows, models)
    with Evaluator(problem) as ev:
        lattice = lattice_of(problem)
        exhaustive = search(lattice, SqlNodeEvaluator(ev, limit, "loss"), "exhaustive")
        for nodes in (SqlNodeEvaluator(ev, limit, "loss"), FastNodeEvaluator(ev, limit, "loss")):
            best = search(lattice, nodes, "optimal")
            assert (best.node is None) == (exhaustive.node is None)
            if best.node is not None:
                assert best.metric == exhaustive.metric
