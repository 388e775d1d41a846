"""ARX's monotonic and non-monotonic variants (metric option ``monotonic``): non-uniform entropy
(MetricMDNUEntropy / MetricMDNUNMEntropy), precision (MetricMDPrecision / MetricMDNMPrecision) and
discernibility (DM* / DM), in the SQL metrics and in the in-memory search, against ARX's figures and
brute force."""

from __future__ import annotations

import itertools

import pytest

from sqlanon.domain.metrics import MetricContext, get_metric
from sqlanon.domain.models.k_anonymity import KAnonymity
from sqlanon.errors import SpecError
from sqlanon.methods.generalization.evaluator import Evaluator, Problem
from sqlanon.methods.generalization.search import SqlNodeEvaluator, lattice_of, search
from sqlanon.methods.generalization.search.fast import FastEvaluator, FastNodeEvaluator
from sqlanon.sql.nodes import table
from tests.conftest import ADULT_QIS
from tests.domain.metrics import oracle

NODE_62 = [0, 3, 0, 2, 2, 1, 1, 2, 0]  # peer-semantics §6.2: k=5, 2 %, S = 506
HEIGHTS = [1, 4, 1, 2, 3, 2, 2, 2, 1]
MONOTONIC = {"monotonic": True}
VARIANTS = ("entropy", "precision", "discernibility")


@pytest.fixture()
def adult_ev(adult_engine, adult_hierarchies):
    p = Problem(adult_engine, table("adult"), list(ADULT_QIS), dict(adult_hierarchies), [],
                [KAnonymity(5)])
    with Evaluator(p) as ev:
        yield ev


def test_default_variants_are_arx_defaults(adult_ev):
    """Without the option, the values are ARX's createXMetric() figures (the non-monotonic models)."""
    ctx = MetricContext(adult_ev, adult_ev.check(dict(zip(ADULT_QIS, NODE_62)), 0.02))
    assert get_metric("entropy").compute(ctx) == 381048.3940738199
    assert get_metric("precision").compute(ctx) == 0.49928411270497336
    assert get_metric("discernibility").compute(ctx) == 52_454_192
    assert [get_metric(m).variant for m in VARIANTS] == [
        "non-monotonic non-uniform entropy", "non-monotonic precision", "DM"]


def test_monotonic_variants_ignore_suppression(adult_ev, adult_dir):
    """The monotonic variants did not exist: entropy is Σ trunc(G_i) (suppressed rows keep their
    generalization entropy, no suppression term), precision the mean of L_i/h_i, DM the DM*."""
    check = adult_ev.check(dict(zip(ADULT_QIS, NODE_62)), 0.02)
    assert check.suppressed_rows == 506
    ctx = MetricContext(adult_ev, check, options=MONOTONIC)
    m = {name: get_metric(name, options=MONOTONIC).compute(ctx) for name in VARIANTS}
    rows, hiers = oracle.read_adult(adult_dir, ADULT_QIS)
    g = oracle.arx_entropy(rows, ADULT_QIS, hiers, dict(zip(ADULT_QIS, NODE_62)), [True] * len(rows))
    expected = 0.0
    for x in g:  # the per-attribute truncated values, summed in ARX's attribute order
        expected += x
    assert m["entropy"] == expected < 381048.3940738199
    assert m["precision"] == pytest.approx(sum(lv / h for lv, h in zip(NODE_62, HEIGHTS)) / 9, rel=1e-15)
    assert m["discernibility"] == 37_193_410  # ARX's DM* of this node (peer-semantics §6.2)
    assert [get_metric(n, options=MONOTONIC).variant for n in VARIANTS] == [
        "monotonic non-uniform entropy", "monotonic precision", "DM*"]
    assert all(get_metric(n, options=MONOTONIC).is_monotonic(0.02) for n in VARIANTS)
    assert not any(get_metric(n).is_monotonic(0.02) for n in VARIANTS)


def test_monotonic_option_names_metrics(adult_ev):
    """A list chooses the monotonic variant of the metrics it names only."""
    options = {"monotonic": ["entropy"]}
    assert get_metric("entropy", options=options).monotonic
    assert not get_metric("discernibility", options=options).monotonic
    assert not get_metric("loss", options=MONOTONIC).monotonic  # Loss has no monotonic variant in ARX


@pytest.mark.parametrize("value", ["yes", 1, ["loss"], ["entropie"], [["entropy"]], {"entropy": True}])
def test_bad_monotonic_option_is_one_line_error(value):
    with pytest.raises(SpecError) as e:
        get_metric("entropy", options={"monotonic": value})
    assert e.value.path == "metrics.options.monotonic" and "\n" not in str(e.value)


@pytest.mark.parametrize("limit", [0.02, 0.1])
def test_in_memory_variants_equal_sql(adult_ev, adult_hierarchies, limit):
    """The in-memory search evaluator computes the same doubles as SQL for both variants."""
    import random

    rng = random.Random(3)
    nodes = [tuple(rng.randint(0, adult_hierarchies[q].height) for q in ADULT_QIS) for _ in range(6)]
    nodes.append(tuple(NODE_62))
    fast = {(name, monotonic): FastEvaluator(adult_ev, [KAnonymity(5)], name, limit, monotonic=monotonic)
            for name in VARIANTS for monotonic in (False, True)}
    for node in nodes:
        check = adult_ev.check(dict(zip(ADULT_QIS, node)), limit)
        for (name, monotonic), fe in fast.items():
            options = {"monotonic": monotonic}
            r = fe.evaluate(node)
            assert r.anonymous == check.anonymous
            value = get_metric(name, options=options).compute(MetricContext(adult_ev, check, options=options))
            assert r.metric == value, (name, monotonic, node)
            assert r.lower_bound is not None and r.lower_bound <= value


@pytest.mark.parametrize("name", VARIANTS)
def test_search_optimizes_the_chosen_variant(adult_engine, adult_hierarchies, name):
    """An optimal search with ``monotonic`` returns the least value of the monotonic variant over all
    anonymous nodes (brute force over the lattice), in memory and in SQL alike."""
    qis = ["sex", "age", "race", "marital-status", "salary-class"]
    p = Problem(adult_engine, table("adult"), qis, {q: adult_hierarchies[q] for q in qis}, [],
                [KAnonymity(5)])
    with Evaluator(p) as ev:
        brute = FastEvaluator(ev, [KAnonymity(5)], name, 0.02, monotonic=True)
        values = {}
        for node in itertools.product(*[range(adult_hierarchies[q].height + 1) for q in qis]):
            r = brute.evaluate(node)
            if r.anonymous:
                values[node] = r.metric
        best = min(values.values())
        fast = search(lattice_of(p), FastNodeEvaluator(ev, 0.02, name, options=MONOTONIC), "optimal")
        sql = search(lattice_of(p), SqlNodeEvaluator(ev, 0.02, name, options=MONOTONIC), "optimal")
        assert fast.metric == sql.metric == best
        assert values[fast.node] == values[sql.node] == best
        plain = search(lattice_of(p), FastNodeEvaluator(ev, 0.02, name), "optimal")
        assert plain.metric != best or name == "precision"  # the option changes what is optimized


def test_anonymize_reports_the_variant(adult_engine, adult_dir):
    from sqlanon import api
    from sqlanon.spec import spec_from_dict
    from tests.conftest import adult_spec_dict

    d = adult_spec_dict(adult_dir, qis=["sex", "age", "race", "marital-status"], limit=0.02)
    d["transformation"]["metric"] = "entropy"
    d["metrics"] = {"names": ["entropy"], "options": {"monotonic": ["entropy"]}}
    d["output"] = {"mode": "none"}
    report = api.anonymize(spec_from_dict(d), engine=adult_engine)
    assert report.search["metric_variant"] == "monotonic non-uniform entropy"
    assert report.metrics["entropy"] == report.search["value"]


# ARX 3.9.2 (arx-deidentifier/arx at aacd487, built from source): Adult, KAnonymity(5), 2 %, the
# global optimum of createEntropyMetric(true), createPrecisionMetric(true) and
# createDiscernabilityMetric(true), and of createEntropyMetric() for contrast.
ARX_OPTIMA = [
    ("entropy", True, (0, 0, 1, 1, 3, 2, 2, 1, 1), 282939.0335460752),
    ("precision", True, (0, 4, 0, 1, 1, 1, 1, 2, 0), 0.4259259259259259),  # tied with other nodes
    ("discernibility", True, (1, 0, 1, 2, 3, 2, 2, 0, 1), 2300532.0),
    ("entropy", False, (0, 0, 1, 1, 3, 2, 2, 1, 1), 285604.749644758),
]


def test_search_finds_arx_optimum_of_each_variant(adult_ev):
    """The optimal search by a monotonic variant returns ARX's optimum for that variant."""
    lattice = lattice_of(adult_ev.p)
    for name, monotonic, node, value in ARX_OPTIMA:
        options = {"monotonic": monotonic}
        found = search(lattice, FastNodeEvaluator(adult_ev, 0.02, name, options=options), "optimal")
        assert found.metric == pytest.approx(value, rel=1e-15), name
        ties = {tuple(found.node), *(tuple(n) for n in found.ties)}
        assert node in ties, (name, found.node)
        ctx = MetricContext(adult_ev, adult_ev.check(dict(zip(ADULT_QIS, node)), 0.02), options=options)
        assert get_metric(name, options=options).compute(ctx) == value


def test_every_metric_option_is_declared_by_the_metrics_reading_it():
    """``metrics.options`` keys are declared where the metrics are (for the spec's validation)."""
    from sqlanon.domain.metrics import METRICS

    declared = {key: sorted(n for n, cls in METRICS.items() if key in cls.options)
                for key in ("monotonic", "target", "suppressed_penalty", "population", "numeric")}
    assert declared["monotonic"] == ["discernibility", "entropy", "precision"]
    assert declared["target"] == declared["suppressed_penalty"] == ["classification"]
    assert declared["population"] == ["journalist_risk_avg", "journalist_risk_max"]
    assert "sse" in declared["numeric"] and "loss" not in declared["numeric"]
