"""The in-memory node check: ARX's figures on Adult, and agreement with the SQL check node by node."""

from __future__ import annotations

import itertools
import random
import warnings

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sqlanon.domain.hierarchy import TableHierarchy
from sqlanon.domain.hierarchy.base import SqlanonWarning
from sqlanon.domain.metrics import MetricContext, get_metric
from sqlanon.domain.models.k_anonymity import KAnonymity
from sqlanon.domain.models.l_diversity import AlphaKAnonymity, LDiversity, PSensitiveKAnonymity
from sqlanon.domain.models.presence import DeltaPresence
from sqlanon.domain.models.t_closeness import TCloseness
from sqlanon.engines.duckdb import DuckDBEngine
from sqlanon.errors import HierarchyError, UnsupportedError
from sqlanon.methods.generalization.evaluator import Evaluator, Problem
from sqlanon.methods.generalization.search import SqlNodeEvaluator, lattice_of, search
from sqlanon.methods.generalization.search.fast import METRICS, FastEvaluator, FastNodeEvaluator
from sqlanon.sql.nodes import table
from tests.conftest import ADULT_QIS

QIS8 = [q for q in ADULT_QIS if q != "occupation"]


@pytest.fixture()
def adult_ev(adult_engine, adult_hierarchies):
    p = Problem(adult_engine, table("adult"), list(ADULT_QIS), dict(adult_hierarchies), [],
                [KAnonymity(5)])
    with Evaluator(p) as ev:
        yield ev


# -- ARX 3.9.2's published figures (peer-semantics.md §6) -------------------------------------------
def test_arx_node_without_suppression(adult_ev):
    node = (0, 4, 1, 1, 3, 2, 2, 1, 0)
    r = FastEvaluator(adult_ev, [KAnonymity(5)], "loss", 0.0).evaluate(node)
    assert (r.anonymous, r.outlier_rows, r.classes, r.min_class_size) == (True, 0, 24, 69)
    assert r.metric == 0.5731509655590044
    assert r.lower_bound == 0.5731509655590044  # nothing suppressed: the bound is the value
    dm = FastEvaluator(adult_ev, [KAnonymity(5)], "discernibility", 0.0).evaluate(node)
    assert dm.metric == dm.lower_bound == 70_009_068
    assert FastEvaluator(adult_ev, [KAnonymity(5)], "aecs", 0.0).evaluate(node).metric == 30162 / 24
    entropy = FastEvaluator(adult_ev, [KAnonymity(5)], "entropy", 0.0).evaluate(node)
    assert entropy.metric == entropy.lower_bound == 428778.7685920921


def test_arx_node_with_two_percent(adult_ev):
    node = (0, 3, 0, 2, 2, 1, 1, 2, 0)
    loss = FastEvaluator(adult_ev, [KAnonymity(5)], "loss", 0.02).evaluate(node)
    assert (loss.anonymous, loss.outlier_rows, loss.classes, loss.min_class_size) == (True, 506, 222, 5)
    assert loss.metric == 0.3137130352819242
    assert loss.lower_bound < loss.metric
    dm = FastEvaluator(adult_ev, [KAnonymity(5)], "discernibility", 0.02).evaluate(node)
    assert dm.metric == 52_454_192  # 37,192,220 + 30162 · 506
    assert dm.lower_bound == 37_193_410  # DM*: Σ|E|² over all 502 classes
    assert FastEvaluator(adult_ev, [KAnonymity(5)], "aecs", 0.02).evaluate(node).metric \
        == 135.2556053811659
    assert FastEvaluator(adult_ev, [KAnonymity(5)], "entropy", 0.02).evaluate(node).metric \
        == 381048.3940738199
    strict = FastEvaluator(adult_ev, [KAnonymity(5)], None, 0.0).evaluate(node)
    assert (strict.anonymous, strict.outlier_rows, strict.classes) == (False, 506, 502)


# -- agreement with the SQL check -------------------------------------------------------------------
def _sql(ev, qis, node, limit, metrics):
    check = ev.check(dict(zip(qis, node)), limit)
    ctx = MetricContext(ev, check)
    return check, {m: get_metric(m).compute(ctx) for m in metrics}


def _same(fast: FastEvaluator, check, node) -> None:
    r = fast.evaluate(node)
    assert (r.anonymous, r.outlier_rows, r.classes, r.min_class_size) == \
        (check.anonymous, check.outlier_rows, check.classes, check.min_class_size), node
    return r


def _nodes(hierarchies, qis, count, seed):
    rng = random.Random(seed)
    return [tuple(rng.randint(0, hierarchies[q].height) for q in qis) for _ in range(count)]


def test_adult_random_nodes_agree_with_sql(adult_ev, adult_hierarchies):
    limit = 0.02
    fast = {m: FastEvaluator(adult_ev, [KAnonymity(5)], m, limit) for m in METRICS}
    for node in _nodes(adult_hierarchies, ADULT_QIS, 30, 7):
        check, values = _sql(adult_ev, ADULT_QIS, node, limit, METRICS)
        for m in METRICS:
            assert _same(fast[m], check, node).metric == values[m], (node, m)


def test_adult_weighted_metrics_agree_with_sql(adult_ev, adult_hierarchies):
    weights = {"age": 2.0, "sex": 0.5, "education": 1.5}
    for node in _nodes(adult_hierarchies, ADULT_QIS, 4, 11):
        check = adult_ev.check(dict(zip(ADULT_QIS, node)), 0.05)
        ctx = MetricContext(adult_ev, check, weights=weights)
        for m in ("loss", "loss_arithmetic", "precision", "height"):
            fast = FastEvaluator(adult_ev, [KAnonymity(5)], m, 0.05, weights)
            assert _same(fast, check, node).metric == get_metric(m).compute(ctx), (node, m)


OCCUPATION_MODELS = [
    [KAnonymity(5), LDiversity("occupation", 3)],
    [KAnonymity(3), LDiversity("occupation", 2.5, "entropy")],
    [LDiversity("occupation", 3, "recursive", c=2)],
    [KAnonymity(5), TCloseness("occupation", 0.2, "equal")],
    [KAnonymity(2), TCloseness("occupation", 0.15, "ordered")],
    [KAnonymity(5), TCloseness("occupation", 0.2, "hierarchical")],
    [AlphaKAnonymity("occupation", 0.3, 4)],
    [PSensitiveKAnonymity("occupation", 5, 4)],
]


@pytest.mark.parametrize("models", OCCUPATION_MODELS, ids=lambda ms: "+".join(m.label for m in ms))
def test_occupation_models_agree_with_sql(adult_engine, adult_hierarchies, models):
    order = sorted(r[0] for r in adult_engine.con.execute(
        'SELECT DISTINCT "occupation" FROM adult').fetchall())
    hs = {q: adult_hierarchies[q] for q in QIS8}
    p = Problem(adult_engine, table("adult"), list(QIS8), hs, ["occupation"], models,
                value_order={"occupation": order},
                sensitive_hierarchies={"occupation": adult_hierarchies["occupation"]})
    with Evaluator(p) as ev:
        fast = {lim: FastEvaluator(ev, models, "loss", lim) for lim in (0.0, 0.04)}
        seen_outliers = False
        for i, node in enumerate(_nodes(hs, QIS8, 8, len(models))):
            limit = (0.0, 0.04)[i % 2]
            check, values = _sql(ev, QIS8, node, limit, ["loss"])
            assert _same(fast[limit], check, node).metric == values["loss"], node
            seen_outliers |= 0 < check.outlier_rows < 30162
        assert seen_outliers  # the models decided something on these nodes


# -- random small tables (NULLs, integers compared as text, duplicate leaves) -------------------------
with warnings.catch_warnings():  # "a" is listed twice on purpose: both rows count towards |D|
    warnings.simplefilter("ignore", SqlanonWarning)
    Q1 = TableHierarchy([["a", "x", "*"], ["b", "x", "*"], ["c", "y", "*"], ["NA", "y", "*"],
                         ["d", "z", "*"], ["a", "x", "*"]], null_leaf="NA")
Q2 = TableHierarchy([[str(v), str(v // 2), str(v // 4), "*"] for v in range(8)])
ROWS = st.lists(st.tuples(st.sampled_from(["a", "b", "c", "d", None]), st.integers(0, 7),
                          st.sampled_from(["s1", "s2", "s3", "s4", None])), min_size=1, max_size=40)
SMALL_MODELS = [[KAnonymity(2)], [KAnonymity(2), LDiversity("s", 2)],
                [LDiversity("s", 2, "entropy")], [LDiversity("s", 2, "recursive", c=1.5)],
                [KAnonymity(2), TCloseness("s", 0.3, "equal")], [TCloseness("s", 0.25, "ordered")],
                [TCloseness("s", 0.25, "hierarchical")],
                [KAnonymity(2), TCloseness("s", 0.1, "hierarchical")],
                [AlphaKAnonymity("s", 0.5, 2)], [PSensitiveKAnonymity("s", 3, 2)]]
S_TREE = TableHierarchy([["s1", "A", "*"], ["s2", "A", "*"], ["s3", "B", "*"], ["s4", "B", "*"],
                         ["NA", "B", "*"]], null_leaf="NA")


@settings(max_examples=40)
@given(rows=ROWS, models=st.sampled_from(SMALL_MODELS), limit=st.sampled_from([0.0, 0.1, 0.3]),
       metric=st.sampled_from(METRICS))
def test_small_tables_agree_with_sql(rows, models, limit, metric):
    e = DuckDBEngine()
    try:
        e.con.execute('CREATE TABLE t ("q1" VARCHAR, "q2" INTEGER, "s" VARCHAR)')
        e.con.executemany("INSERT INTO t VALUES (?, ?, ?)", rows)
        p = Problem(e, table("t"), ["q1", "q2"], {"q1": Q1, "q2": Q2}, ["s"], models,
                    value_order={"s": ["s4", "s2", "s1", "s3"]}, sensitive_hierarchies={"s": S_TREE})
        with Evaluator(p) as ev:
            fast = FastEvaluator(ev, models, metric, limit)
            for node in itertools.product(range(3), range(4)):
                check, values = _sql(ev, ["q1", "q2"], node, limit, [metric])
                assert _same(fast, check, node).metric == values[metric], node
    finally:
        e.close()


# -- what the in-memory check refuses ----------------------------------------------------------------
def test_unsupported_models_and_metrics_are_named(adult_ev):
    with pytest.raises(UnsupportedError, match=r"hierarchical distance\) \(its hierarchy is not a "
                                               r"table\).*check these nodes in SQL"):
        FastEvaluator(adult_ev, [TCloseness("occupation", 0.2, "hierarchical")], None, 0.0)
    with pytest.raises(UnsupportedError, match=r"under δ-presence the metric 'entropy' counts the "
                                               r"research subset's rows.*check these nodes in SQL"):
        FastEvaluator(adult_ev, [DeltaPresence("research", 0.0, 0.5)], "entropy", 0.0)
    with pytest.raises(UnsupportedError, match=r"'kl_divergence'.*supported: loss"):
        FastEvaluator(adult_ev, [KAnonymity(5)], "kl_divergence", 0.0)
    with pytest.raises(UnsupportedError, match=r"quasi-identifier"):
        FastEvaluator(adult_ev, [LDiversity("age", 2)], None, 0.0)


def test_node_outside_the_lattice_is_refused(adult_ev):
    fast = FastEvaluator(adult_ev, [KAnonymity(5)], None, 0.0)
    with pytest.raises(HierarchyError, match=r"node \[0, 5, 0, 0, 0, 0, 0, 0, 0\].*heights"):
        fast.evaluate((0, 5, 0, 0, 0, 0, 0, 0, 0))
    with pytest.raises(HierarchyError, match=r"one level per QI"):
        fast.evaluate((0, 1))


def test_rollup_gives_the_same_results_as_grouping_all_rows(adult_engine, adult_hierarchies):
    """Upward paths through the lattice: each node grouped from a finer node's classes or from rows."""
    hs = {q: adult_hierarchies[q] for q in QIS8}
    models = [KAnonymity(3), LDiversity("occupation", 2), TCloseness("occupation", 0.3, "equal")]
    p = Problem(adult_engine, table("adult"), list(QIS8), hs, ["occupation"], models)
    rng = random.Random(3)
    with Evaluator(p) as ev:
        rolled = FastEvaluator(ev, models, "loss", 0.03)
        rows = FastEvaluator(ev, models, "loss", 0.03, rollup=False)
        for _ in range(6):
            node = [rng.randint(0, 1) for _ in QIS8]
            while True:
                assert rolled.evaluate(node) == rows.evaluate(node), node
                up = [i for i, q in enumerate(QIS8) if node[i] < hs[q].height]
                if not up:
                    break
                node[rng.choice(up)] += 1
        assert rows.rolled_up == 0 and rolled.rolled_up > 20


def test_loaded_table_keeps_a_byte_a_row_and_level(adult_ev):
    """Adult's hierarchies have at most 255 labels a level, so every per-row code takes one byte; the
    roll-up cache admits only tables of at most half the rows (the only ones a roll-up starts from)."""
    fe = FastEvaluator(adult_ev, [KAnonymity(5)], "loss", 0.02)
    assert {c.dtype.itemsize for levels in fe.codes for c in levels} == {1}
    assert {leaf.dtype.itemsize for leaf in fe.leaf_index} == {1}
    fe.evaluate((0,) * 9)  # every frequency row a class of its own
    fe.evaluate((0, 3, 0, 2, 2, 1, 1, 2, 0))
    assert list(fe._recent._kept) == [(0, 3, 0, 2, 2, 1, 1, 2, 0)]


# -- the search's node evaluator --------------------------------------------------------------------
def test_node_evaluator_answers_as_the_sql_one(adult_engine, adult_hierarchies):
    hs = {q: adult_hierarchies[q] for q in QIS8}
    models = [KAnonymity(5), TCloseness("occupation", 0.2, "equal")]  # partly monotone at 2 %
    p = Problem(adult_engine, table("adult"), list(QIS8), hs, ["occupation"], models)
    with Evaluator(p) as ev:
        fast = FastNodeEvaluator(ev, 0.02, "loss")
        sql = SqlNodeEvaluator(ev, 0.02, "loss")
        assert (fast.privacy_monotone, fast.partly_monotone, fast.metric_monotone) == \
            (sql.privacy_monotone, sql.partly_monotone, sql.metric_monotone) == (False, True, False)
        parts = set()
        for node in _nodes(hs, QIS8, 12, 5) + [(1, 4, 1, 1, 3, 2, 2, 1), (1, 4, 1, 0, 3, 2, 2, 1)]:
            f, s = fast.evaluate(node), sql.evaluate(node)
            assert (f.anonymous, f.monotone_part, f.metric) == (s.anonymous, s.monotone_part, s.metric)
            parts.add((f.anonymous, f.monotone_part))
        assert (True, True) in parts and (False, True) in parts  # t alone rejected some nodes
        # ARX (peer-semantics.md §6.3): two classes, both within t = 0.2
        assert fast.evaluate((1, 4, 1, 1, 3, 2, 2, 1)).metric == 0.9183953641009659
        assert fast.fast.evaluate((1, 4, 1, 1, 3, 2, 2, 1)).classes == 2


def test_search_with_fast_nodes_finds_the_sql_optimum(adult_engine, adult_hierarchies):
    qis = ["sex", "age", "race", "marital-status", "salary-class"]
    p = Problem(adult_engine, table("adult"), qis, {q: adult_hierarchies[q] for q in qis}, [],
                [KAnonymity(5)])
    with Evaluator(p) as ev:
        for metric in ("loss", "discernibility"):
            fast = search(lattice_of(p), FastNodeEvaluator(ev, 0.02, metric), "optimal")
            sql = search(lattice_of(p), SqlNodeEvaluator(ev, 0.02, metric), "optimal")
            assert fast.node is not None
            assert (fast.node, fast.metric) == (sql.node, sql.metric), metric


def test_rule_based_hierarchy_agrees_with_sql(duck):
    """Interval widths 5 and 10: the hierarchy's table is built over the data's values."""
    from sqlanon.domain.hierarchy import IntervalHierarchy

    rng = random.Random(9)
    duck.con.execute('CREATE TABLE iv ("x" INTEGER, "y" VARCHAR)')
    duck.con.executemany("INSERT INTO iv VALUES (?, ?)",
                         [(rng.randint(0, 45), rng.choice("ab")) for _ in range(120)])
    hs = {"x": IntervalHierarchy((5, 10)), "y": TableHierarchy([["a", "*"], ["b", "*"]])}
    p = Problem(duck, table("iv"), ["x", "y"], hs, [], [KAnonymity(4)])
    with Evaluator(p) as ev:
        for metric in ("loss", "precision", "aecs"):
            fast = FastEvaluator(ev, [KAnonymity(4)], metric, 0.1)
            for node in itertools.product(range(4), range(2)):
                check, values = _sql(ev, ["x", "y"], node, 0.1, [metric])
                assert _same(fast, check, node).metric == values[metric], (node, metric)


@pytest.mark.parametrize("nulls", [False, True])
def test_rule_based_load_by_leaf_codes_and_by_keys_alike(duck, monkeypatch, nulls):
    """A small table built over the data is loaded as integer leaf codes (one GROUP BY joining the
    code tables) unless a NULL is among its leaves; loaded by text keys instead, every node gives the
    same figures."""
    from sqlanon.domain.hierarchy import IntervalHierarchy, MaskHierarchy
    from sqlanon.methods.generalization.search import fast_load

    rng = random.Random(3)
    duck.con.execute('CREATE TABLE iv ("x" INTEGER, "z" VARCHAR, "y" VARCHAR)')
    duck.con.executemany("INSERT INTO iv VALUES (?, ?, ?)", [
        (None if nulls and i % 17 == 0 else rng.randint(0, 45), f"{rng.randint(0, 99):02d}", rng.choice("ab"))
        for i in range(150)])
    hs = {"x": IntervalHierarchy((5, 10)), "z": MaskHierarchy(2),
          "y": TableHierarchy([["a", "*"], ["b", "*"]])}
    p = Problem(duck, table("iv"), ["x", "z", "y"], hs, [], [KAnonymity(3)])
    with Evaluator(p) as ev:
        coded = all(fast_load.codes_in_sql(hs[a], ev.hierarchy_table(a)) for a in p.qis)
        assert coded is not nulls
        by_codes = FastEvaluator(ev, [KAnonymity(3)], "loss", 0.1)
        monkeypatch.setattr(fast_load, "CODED_BUILT_MAX_LEAVES", 0)
        by_keys = FastEvaluator(ev, [KAnonymity(3)], "loss", 0.1)
        for node in itertools.product(range(4), range(3), range(2)):
            a, b = by_codes.evaluate(node), by_keys.evaluate(node)
            assert (a.anonymous, a.outlier_rows, a.classes, a.min_class_size, a.metric, a.lower_bound) == \
                (b.anonymous, b.outlier_rows, b.classes, b.min_class_size, b.metric, b.lower_bound), node
