"""The optimal search on Adult reproduces ARX's optima (peer-semantics §5, §6.1, §6.3).

k = 5, no suppression, ARX's Loss (geometric mean): ARX returns [0,4,1,1,3,2,2,1,0] with Loss
0.5731509655590044 over the 12,960 nodes of the 9-QI lattice. With 0.2-closeness of occupation on
the other 8 QIs: [1,4,0,2,3,1,2,1] (hierarchical distance, 2 %) and [1,4,1,1,3,2,2,1] (equal
distance, 0 %).
"""

from __future__ import annotations

import pytest

from sqlanon.domain.models.k_anonymity import KAnonymity
from sqlanon.domain.models.t_closeness import TCloseness
from sqlanon.methods.generalization.evaluator import Evaluator, Problem
from sqlanon.methods.generalization.search import SqlNodeEvaluator, lattice_of, search
from sqlanon.methods.generalization.search.fast import FastNodeEvaluator
from sqlanon.sql.nodes import table
from tests.conftest import ADULT_QIS


def test_adult_k5_optimal_loss(adult_engine, adult_hierarchies):
    problem = Problem(adult_engine, table("adult"), list(ADULT_QIS), adult_hierarchies, [],
                      [KAnonymity(5)])
    lattice = lattice_of(problem)
    assert lattice.size == 12960
    with Evaluator(problem) as ev:
        result = search(lattice, SqlNodeEvaluator(ev, 0.0, "loss"), "optimal")
    assert result.node == (0, 4, 1, 1, 3, 2, 2, 1, 0)
    assert result.metric == 0.5731509655590044
    assert result.ties == [result.node]
    assert result.checked + result.tagged + result.pruned == 12960
    assert result.checked < 400  # predictive tagging settles the rest of the lattice


QIS8 = [q for q in ADULT_QIS if q != "occupation"]


@pytest.mark.parametrize("distance, limit, node, loss", [
    # peer-semantics §6.3: ARX's optimum for k = 5 and 0.2-closeness of occupation
    ("hierarchical", 0.02, (1, 4, 0, 2, 3, 1, 2, 1), 0.7351403745214613),
    ("equal", 0.0, (1, 4, 1, 1, 3, 2, 2, 1), 0.9183953641009659),
])
def test_adult_t_closeness_optimum_is_arx(adult_engine, adult_hierarchies, distance, limit, node, loss):
    problem = Problem(adult_engine, table("adult"), QIS8, {q: adult_hierarchies[q] for q in QIS8},
                      ["occupation"], [KAnonymity(5), TCloseness("occupation", 0.2, distance)],
                      sensitive_hierarchies={"occupation": adult_hierarchies["occupation"]})
    with Evaluator(problem) as ev:
        result = search(lattice_of(problem), FastNodeEvaluator(ev, limit, "loss"), "optimal")
        check = ev.check(dict(zip(QIS8, result.node)), limit)
    assert result.node == node and result.metric == loss and result.ties == [node]
    assert check.anonymous  # the SQL checker agrees


@pytest.mark.parametrize("limit, metric, node, value", [
    (0.0, "loss", (0, 4, 1, 1, 3, 2, 2, 1, 0), 0.5731509655590044),
    (0.02, "loss", (0, 3, 0, 2, 2, 1, 1, 2, 0), 0.3137130352819242),
    (0.02, "precision", None, None),
    (0.02, "entropy", None, None),
])
def test_metrics_skipped_beyond_the_ceiling_change_no_answer(adult_engine, adult_hierarchies,
                                                             monkeypatch, limit, metric, node, value):
    """On large tables the optimal search computes no metric for nodes whose prior bound exceeds the
    best value so far; forced on Adult, the answer, its ties and the nodes checked are unchanged."""
    import sqlanon.methods.generalization.search.fast as fast

    problem = Problem(adult_engine, table("adult"), list(ADULT_QIS), adult_hierarchies, [],
                      [KAnonymity(5)])
    with Evaluator(problem) as ev:
        plain = search(lattice_of(problem), FastNodeEvaluator(ev, limit, metric), "optimal")
        monkeypatch.setattr(fast, "FEW_CHECKS_MAX_ROWS", 0)  # Adult is now a "large" table
        large = FastNodeEvaluator(ev, limit, metric)
        computed = []
        inner = large.fast.evaluate
        large.fast.evaluate = lambda n, **kw: computed.append(kw["metric"]) or inner(n, **kw)
        ceiling = search(lattice_of(problem), large, "optimal")
        monkeypatch.setattr(fast, "FEW_CHECKS_MAX_ROWS", -1)
        unlimited = FastNodeEvaluator(ev, limit, metric)
        unlimited.ceiling = float("inf")
        unlimited._beyond_ceiling = lambda node: False
        reference = search(lattice_of(problem), unlimited, "optimal")
    assert not all(computed)  # some metrics were skipped
    assert (ceiling.node, ceiling.metric, ceiling.ties) == (reference.node, reference.metric,
                                                            reference.ties)
    assert ceiling.checked == reference.checked
    assert ceiling.metric == plain.metric and ceiling.ties == plain.ties
    if node is not None:
        assert ceiling.node == node and ceiling.metric == value
