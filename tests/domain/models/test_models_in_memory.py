"""The in-memory forms of δ-disclosure, basic and enhanced β-likeness, (k, e)- and (k, p, q, r)-anonymity
and δ-presence against their SQL forms on every node of random small tables, and the search in memory
against exhaustive search (the nodes' checks themselves are compared with SQL above); for δ-presence,
also the node the search in memory chooses against the one the search in SQL chooses."""

from __future__ import annotations

import math

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from sqlglot import exp

from sqlanon.domain.hierarchy import TableHierarchy
from sqlanon.domain.models.base import SIZE
from sqlanon.domain.models.disclosure import BetaLikeness, DeltaDisclosure
from sqlanon.domain.models.k_anonymity import KAnonymity
from sqlanon.domain.models.numeric_sensitive import KEAnonymity, KPQRAnonymity
from sqlanon.domain.models.presence import DeltaPresence
from sqlanon.methods.generalization.evaluator import Evaluator, Problem
from sqlanon.methods.generalization.search import lattice_of, search
from sqlanon.methods.generalization.search.fast import FastEvaluator, FastNodeEvaluator
from sqlanon.methods.generalization.search.fast_classes import NodeClasses
from sqlanon.methods.generalization.search.nodes import SqlNodeEvaluator
from sqlanon.sql.nodes import table

TREE = TableHierarchy([[v, "x" if v in "abc" else "y", "*"] for v in "abcdef"])
NUMBERS = TableHierarchy([[str(v), str(v // 2), str(v // 4), "*"] for v in range(8)])
HIERARCHIES = {"q0": TREE, "q1": NUMBERS}
NODES = [(0, 0), (0, 2), (1, 1), (2, 0), (2, 3)]
"""Nodes checked in SQL and in memory (a SQL check costs a few queries)."""
Q0, Q1 = st.sampled_from("abcdef"), st.sampled_from([str(v) for v in range(8)])
TEXT_ROWS = st.lists(st.tuples(Q0, Q1, st.sampled_from("uvwxy")), min_size=1, max_size=40)
NUMBER_ROWS = st.lists(st.tuples(Q0, Q1, st.one_of(st.none(), st.integers(-3, 6))), min_size=1,
                       max_size=40)
LIMITS = st.sampled_from([0.0, 0.1, 0.3])
SETTINGS = settings(max_examples=5, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])

DISCLOSURE_MODELS = st.sampled_from([
    [DeltaDisclosure("s", 1.0)], [DeltaDisclosure("s", 2.5)], [BetaLikeness("s", 0.5)],
    [BetaLikeness("s", 2.0)], [BetaLikeness("s", 1.0, variant="enhanced")],
    [BetaLikeness("s", 4.0, variant="enhanced"), KAnonymity(2)],
    [DeltaDisclosure("s", 3.0), BetaLikeness("s", 3.0), BetaLikeness("s", 3.0, variant="enhanced")]])
NUMERIC_MODELS = st.sampled_from([
    [KEAnonymity("s", 2, 0)], [KEAnonymity("s", 2, 2)], [KEAnonymity("s", 1, 4.5)],
    [KPQRAnonymity("s", 2, 2, 0.1, 0.0)], [KPQRAnonymity("s", 2, 2, 0.3, 0.5)],
    [KPQRAnonymity("s", 3, 1, 1.0, 1.0)], [KPQRAnonymity("s", 2, 2, 0.2, 0.3), KEAnonymity("s", 2, 1)]])

PRESENCE_MODELS = st.sampled_from([
    [DeltaPresence("sub", 0.0, 0.5)], [DeltaPresence("sub", 0.2, 1.0)], [DeltaPresence("sub", 0.25, 0.75)],
    [DeltaPresence("sub", 0.0, 1.0), KAnonymity(2)], [DeltaPresence("sub", 0.1, 0.6), KAnonymity(3)],
    [DeltaPresence("sub", 0.5, 0.5)]])
SUBSET_ROWS = st.lists(st.tuples(Q0, Q1, st.sampled_from("uvwxy"), st.booleans()), min_size=1, max_size=40)
"""Rows of the table, each marked in the research subset or not."""


def _problem(engine, rows, models, sensitive_type):
    engine.con.execute("DROP TABLE IF EXISTS r")
    engine.con.execute(f"CREATE TABLE r (q0 VARCHAR, q1 VARCHAR, s {sensitive_type})")
    engine.con.executemany("INSERT INTO r VALUES (?, ?, ?)", rows)
    return Problem(engine, table("r"), ["q0", "q1"], HIERARCHIES, ["s"], models)


def _value(x):
    """A statistic's value comparable across the two forms (NULL and NaN alike, doubles to 9 digits)."""
    return None if x is None or math.isnan(x) else round(float(x), 9)


def _statistics_agree(engine, fast, check, node):
    """Every class's size and statistics, as multisets: SQL's verdict rows against numpy's arrays."""
    rows = engine.fetch_dicts(exp.select(exp.Star()).from_(check.verdict.copy()))
    c, _ = fast.verdict(node)
    view = NodeClasses(c, fast.n, fast.sensitive, fast.trees, numbers=fast.numbers,
                       subsets=lambda step, rep: fast.subsets[step].counts(node, rep))
    for s in fast.statistics:
        memory = sorted(zip(c.sizes.tolist(), map(_value, s.in_memory(view))), key=repr)
        sql = sorted(((r[SIZE], _value(r[s.column])) for r in rows), key=repr)
        assert memory == sql, (node, s)


def _every_node_agrees(engine, rows, models, limit, sensitive_type, metric="loss"):
    with Evaluator(_problem(engine, rows, models, sensitive_type)) as ev:
        fast = FastEvaluator(ev, models, metric, limit)
        for node in NODES:
            check = ev.check({"q0": node[0], "q1": node[1]}, limit)
            r = fast.evaluate(node)
            assert (r.anonymous, r.outlier_rows, r.classes) == (
                check.anonymous, check.outlier_rows, check.classes), node
            assert list(r.violating_rows) == [m.violating_rows for m in check.models], node
            _statistics_agree(engine, fast, check, node)


def _search_agrees(engine, rows, models, limit, sensitive_type):
    problem = _problem(engine, rows, models, sensitive_type)
    with Evaluator(problem) as ev:
        lattice = lattice_of(problem)
        exhaustive = search(lattice, FastNodeEvaluator(ev, limit, "loss"), "exhaustive")
        best = search(lattice, FastNodeEvaluator(ev, limit, "loss"), "optimal")
        assert (best.node is None) == (exhaustive.node is None)
        if best.node is not None:
            assert best.metric == exhaustive.metric


@SETTINGS
@given(rows=TEXT_ROWS, models=DISCLOSURE_MODELS, limit=LIMITS)
def test_disclosure_and_likeness_in_memory_match_sql(engine, rows, models, limit):
    _every_node_agrees(engine, rows, models, limit, "VARCHAR")


@SETTINGS
@given(rows=NUMBER_ROWS, models=NUMERIC_MODELS, limit=LIMITS)
def test_numeric_sensitive_models_in_memory_match_sql(engine, rows, models, limit):
    _every_node_agrees(engine, rows, models, limit, "INTEGER")


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=TEXT_ROWS, models=DISCLOSURE_MODELS, limit=st.sampled_from([0.0, 0.2]))
def test_search_in_memory_finds_the_exhaustive_optimum_under_disclosure_models(engine, rows, models, limit):
    _search_agrees(engine, rows, models, limit, "VARCHAR")


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=NUMBER_ROWS, models=NUMERIC_MODELS, limit=st.sampled_from([0.0, 0.2]))
def test_search_in_memory_finds_the_exhaustive_optimum_under_numeric_models(engine, rows, models, limit):
    _search_agrees(engine, rows, models, limit, "INTEGER")


def _with_subset(engine, marked):
    """The table's rows; the marked ones (the research subset) are also written to table ``sub``."""
    rows = [r[:3] for r in marked]
    engine.con.execute("DROP TABLE IF EXISTS sub")
    engine.con.execute("CREATE TABLE sub (q0 VARCHAR, q1 VARCHAR, s VARCHAR)")
    subset = [r[:3] for r in marked if r[3]]
    if subset:
        engine.con.executemany("INSERT INTO sub VALUES (?, ?, ?)", subset)
    return rows


@SETTINGS
@given(marked=SUBSET_ROWS, models=PRESENCE_MODELS, limit=LIMITS)
def test_delta_presence_in_memory_matches_sql(engine, marked, models, limit):
    rows = _with_subset(engine, marked)
    _every_node_agrees(engine, rows, models, limit, "VARCHAR", "height")


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(marked=SUBSET_ROWS, models=PRESENCE_MODELS, limit=st.sampled_from([0.0, 0.2]),
       metric=st.sampled_from(["loss", "loss_arithmetic", "precision", "discernibility",
                               "discernibility_star", "aecs", "height"]))
def test_search_in_memory_chooses_the_node_sql_chooses_under_delta_presence(engine, marked, models, limit,
                                                                            metric):
    """The optimal search in memory and in SQL choose the same node, of exhaustive search's value
    (every node checked in memory: each check is SQL's, above); the metric counts the research
    subset's rows in both, as ARX's quality models do (an empty subset leaves them to SQL)."""
    assume(any(r[3] for r in marked))
    rows = _with_subset(engine, marked)
    problem = _problem(engine, rows, models, "VARCHAR")
    with Evaluator(problem) as ev:
        lattice = lattice_of(problem)
        exhaustive = search(lattice, FastNodeEvaluator(ev, limit, metric), "exhaustive")
        in_sql = search(lattice, SqlNodeEvaluator(ev, limit, metric), "optimal")
        in_memory = search(lattice, FastNodeEvaluator(ev, limit, metric), "optimal")
        assert in_memory.node == in_sql.node
        assert (in_memory.node is None) == (exhaustive.node is None)
        if in_memory.node is not None:
            assert in_memory.metric == in_sql.metric == exhaustive.metric
