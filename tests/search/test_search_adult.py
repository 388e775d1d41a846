"""The optimal search on Adult reproduces ARX's optimum (peer-semantics §5, §6.1).

k = 5, no suppression, ARX's Loss (geometric mean): ARX returns [0,4,1,1,3,2,2,1,0] with Loss
0.5731509655590044 over the 12,960 nodes of the 9-QI lattice.
"""

from __future__ import annotations

from sqlanon.compile.sql import table
from sqlanon.evaluate import Evaluator, Problem
from sqlanon.models.k_anonymity import KAnonymity
from sqlanon.search import SqlNodeEvaluator, lattice_of, search
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
