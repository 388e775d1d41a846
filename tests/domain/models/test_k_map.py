"""k-map (ARX's KMap): the derived k' against ARX's own code, a hand-computed population table,
every node of random tables and populations against the definition, and the search against
exhaustive search (nodes checked in SQL and in memory)."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sqlanon.domain.models import build_model
from sqlanon.domain.models.k_map import DerivedK, KMap, poisson_k, zero_truncated_poisson_k
from sqlanon.errors import SpecError
from sqlanon.methods.generalization.evaluator import Evaluator
from sqlanon.methods.generalization.search.fast import FastEvaluator
from tests.domain.models.risk_cases import (
    NUMBERS,
    ROWS,
    TREE,
    class_sizes,
    every_node,
    load,
    per_size_oracle,
    problem,
    search_matches_exhaustive,
)

# k, α, sampling fraction f, then the values ARX's KMap.calculateKPoisson and calculateKZeroPoisson
# return for the mean f·k (before the bounds by k and n): ARX's code run with commons-math 3.6.1.
ARX_DERIVED = [
    (1, 0.05, 0.01, 2, 2), (3, 0.01, 1.0, 4, 3), (5, 0.01, 0.5, 6, 5), (10, 0.01, 0.05, 5, 4),
    (10, 0.05, 0.3, 8, 7), (10, 0.1, 0.5, 10, 9), (10, 0.5, 0.5, 7, 6), (20, 0.01, 0.05, 6, 5),
    (20, 0.05, 0.5, 17, 16), (20, 0.1, 0.3, 11, 10), (20, 0.5, 0.1, 4, 3), (50, 0.01, 0.01, 5, 4),
    (50, 0.01, 0.5, 39, 38), (50, 0.05, 0.1, 11, 10), (50, 0.1, 0.05, 7, 6), (50, 0.5, 0.5, 27, 26),
]


@pytest.mark.parametrize(("k", "alpha", "f", "poisson", "truncated"), ARX_DERIVED)
def test_derived_k_is_arxs(k, alpha, f, poisson, truncated):
    assert poisson_k(k, alpha, f * k) == poisson
    assert zero_truncated_poisson_k(k, alpha, f * k) == truncated
    for estimator, raw in (("poisson", poisson), ("zero_truncated_poisson", truncated)):
        assert DerivedK(k, alpha, estimator, None, f).of_rows(10_000) == min(k, raw)
        assert DerivedK(k, alpha, estimator, None, f).of_rows(3) == min(k, raw, 3)  # at most n


def test_derived_k_steps_give_every_n():
    """The SQL form reads k' from the steps of n where it rises: they agree with k' at each n."""
    for d in (DerivedK(10, 0.05, "poisson", 1000.0, None), DerivedK(50, 0.1, "poisson", None, 0.05),
              DerivedK(20, 0.01, "zero_truncated_poisson", 500.0, None)):
        steps = d.steps()
        assert [v for _, v in steps] == sorted({v for _, v in steps})
        for n in range(1, 1500, 7):
            assert d.of_rows(n) == max(v for m, v in steps if m <= n), (d, n)


def test_hand_computed_population_table(engine):
    """Table classes a:1, b:1, c:2, d:3, e:3; population a:3, b:2, c:4, d:6, e:6 (and f:1 outside the
    table). k = 3: b (2 in the population) fails; at the level x|y the classes have 9 and 13."""
    rows = [(v, "0") for v in "abccdddeee"]
    load(engine, rows + rows + [("a", "0"), ("f", "0")], name="pop")
    p = problem(engine, rows, [KMap(3, population="pop")])
    with Evaluator(p) as ev:
        for node, limit, want in (((0, 0), 0.1, (True, 1, 4, 3)), ((1, 0), 0.0, (True, 0, 2, 9))):
            check = ev.check({"q0": node[0], "q1": node[1]}, limit)
            assert (check.anonymous, check.outlier_rows, check.classes, check.models[0].achieved) == want
            r = FastEvaluator(ev, p.models, None, limit).evaluate(node)
            assert (r.anonymous, r.outlier_rows, r.classes) == want[:3]


def test_population_that_lacks_the_table_is_refused(engine):
    rows = [(v, "0") for v in "abcc"]
    load(engine, [(v, "0") for v in "abc"], name="pop")
    with pytest.raises(SpecError, match=r"k_map\.population: the population 'pop' does not contain the "
                                        r"table: 1 quasi-identifier tuple\(s\)"):
        with Evaluator(problem(engine, rows, [KMap(2, population="pop")])) as ev:
            ev.check({"q0": 0, "q1": 0}, 0.0)
    with pytest.raises(SpecError, match=r"k_map\.population: no table or view named 'census'"):
        with Evaluator(problem(engine, rows, [KMap(2, population="census")])) as ev:
            ev.check({"q0": 0, "q1": 0}, 0.0)


def test_spec_keys_and_errors():
    path = "privacy[0].k_map"
    assert build_model("k_map", {"k": 5, "population": "census"}, path) == KMap(5, population="census")
    assert build_model("k_map", {"k": 5, "estimator": "poisson", "significance": 0.01,
                                 "population_size": 10_000}, path).population_size == 10_000
    cases = [({"k": 5}, r"k_map\.population: k_map needs a population table \(population\) or an estimator"),
             ({"k": 5, "population": "census", "sampling_fraction": 0.1},
              r"k_map\.sampling_fraction: a population table gives the population's classes itself"),
             ({"k": 5, "estimator": "binomial", "sampling_fraction": 0.1},
              r"k_map\.estimator: estimator must be one of poisson, zero_truncated_poisson, got 'binomial'"),
             ({"k": 5, "estimator": "poisson"}, r"k_map\.population_size: the estimated population needs "
                                                r"exactly one of population_size"),
             ({"k": 5, "estimator": "poisson", "sampling_fraction": 0},
              r"k_map\.sampling_fraction: sampling_fraction must be a number in \(0"),
             ({"k": 0, "population": "census"}, r"k_map\.k: k must be an integer >= 1, got 0"),
             ({"k": 5, "population": "census", "significance": 2}, r"k_map\.significance: significance must")]
    for params, message in cases:
        with pytest.raises(SpecError, match=message):
            build_model("k_map", params, path)


@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=ROWS, extra=ROWS, k=st.integers(1, 6), limit=st.sampled_from([0.0, 0.2]))
def test_population_table_every_node_and_search(engine, rows, extra, k, limit):
    load(engine, rows + extra, name="pop")
    models = [KMap(k, population="pop")]

    def expected(node):
        def classes(records):
            return Counter((TREE.table().mapping[a][node[0]], NUMBERS.table().mapping[b][node[1]])
                           for a, b in records)

        population, gen = classes(rows + extra), classes(rows)
        outliers = sum(size for key, size in gen.items() if population[key] < k)
        anonymous = outliers <= int(limit * len(rows))
        return anonymous, outliers, (len(gen) - sum(1 for key in gen if population[key] < k)
                                     if anonymous else len(gen))

    every_node(engine, rows, models, expected, limit)
    search_matches_exhaustive(engine, rows, models, limit)


def test_population_values_outside_the_hierarchies_leave_the_check_to_sql(engine):
    rows = [(v, "0") for v in "abcc"]
    load(engine, rows + [("z", "0")], name="pop")
    p = problem(engine, rows, [KMap(2, population="pop")])
    refusal = r"the population 'pop' has values of 'q0' its hierarchy lacks \('z'\); k-map is checked in SQL"
    with Evaluator(p) as ev, pytest.raises(Exception, match=refusal):
        FastEvaluator(ev, p.models, None, 0.1)


POPULATIONS = [(None, 0.1), (None, 0.5), (60.0, None), (400.0, None)]
ESTIMATES = st.tuples(st.integers(1, 12), st.sampled_from(["poisson", "zero_truncated_poisson"]),
                      st.sampled_from([0.01, 0.05, 0.3]), st.sampled_from(POPULATIONS))


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=ROWS, estimate=ESTIMATES, limit=st.sampled_from([0.0, 0.1, 0.3]))
def test_estimate_every_node_matches_the_definition(engine, rows, estimate, limit):
    k, estimator, alpha, (size, fraction) = estimate
    model = KMap(k, estimator=estimator, significance=alpha, population_size=size, sampling_fraction=fraction)
    f = fraction if fraction is not None else len(rows) / size
    raw = (poisson_k if estimator == "poisson" else zero_truncated_poisson_k)(k, alpha, f * k)
    derived = min(k, raw, len(rows))
    every_node(engine, rows, [model],
               lambda node: per_size_oracle(class_sizes(rows, node), len(rows),
                                            lambda kept, n: min(kept) >= derived, limit), limit)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=ROWS, estimate=ESTIMATES, limit=st.sampled_from([0.0, 0.2]))
def test_estimate_search_finds_the_exhaustive_optimum(engine, rows, estimate, limit):
    k, estimator, alpha, (size, fraction) = estimate
    model = KMap(k, estimator=estimator, significance=alpha, population_size=size, sampling_fraction=fraction)
    search_matches_exhaustive(engine, rows, [model], limit)


def test_local_recoding_is_arxs_k_prime_anonymity(duck, tmp_path):
    """ARX re-anonymizes the suppressed records of an estimated k-map under k'-anonymity: with a
    sampling fraction, local recoding gives the steps and rows that k'-anonymity gives; with a
    population size (k' would be derived again from each subset's rows) it is refused."""
    from sqlanon import api
    from sqlanon.errors import UnsupportedError
    from sqlanon.spec import spec_from_dict
    from tests.methods.generalization.test_local_recoding import _spec, _table, _write_hierarchies

    _write_hierarchies(tmp_path)
    duck.create_table_from_arrow("people", _table(7, 400))
    estimated = {"k_map": {"k": 10, "estimator": "poisson", "significance": 0.05, "sampling_fraction": 0.3}}
    derived = KMap(**estimated["k_map"]).min_class_size()
    assert derived == 8  # ARX_DERIVED: k = 10, α = 0.05, f = 0.3
    reports = {}
    for name, model in (("k_map", estimated), ("k", {"k_anonymity": {"k": derived}})):
        d = _spec(tmp_path, limit=0.05, local={"variant": "fast", "records": 0.01}, name=f"released_{name}")
        d["privacy"] = [model]
        reports[name] = api.anonymize(spec_from_dict(d), engine=duck).local_recoding
    steps = [[{k: v for k, v in s.items() if k != "seconds"} for s in r["steps"]] for r in reports.values()]
    assert steps[0] == steps[1] and len(steps[0]) > 1
    assert reports["k_map"]["output"] == reports["k"]["output"]
    refused = {"k_map": {"k": 10, "estimator": "poisson", "population_size": 1333}}
    d = _spec(tmp_path, limit=0.05, local={"variant": "fast"})
    d["privacy"] = [refused]
    with pytest.raises(UnsupportedError, match="local recoding is not available with k_map"):
        api.anonymize(spec_from_dict(d), engine=duck)
