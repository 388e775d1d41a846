"""Optimal lattice search: full-domain generalization with tuple suppression, as ARX does it."""

from __future__ import annotations

from collections.abc import Mapping

from sqlanon.domain.metrics.base import Metric
from sqlanon.methods.generalization.evaluator import Evaluator, Problem
from sqlanon.methods.generalization.search.lattice import Direction, Lattice, Node, Property
from sqlanon.methods.generalization.search.nodes import NodeEvaluator, NodeResult, SqlNodeEvaluator
from sqlanon.methods.generalization.search.result import SearchResult
from sqlanon.methods.generalization.search.strategies import search


def lattice_of(problem: Problem) -> Lattice:
    """The lattice over the problem's QIs (data column order) and their hierarchies' heights."""
    return Lattice([problem.hierarchies[a].height for a in problem.qis], problem.qis)


def search_problem(problem: Problem, strategy: str = "optimal", suppression_limit: float = 0.0,
                   metric: str | Metric | None = "loss", *,
                   weights: Mapping[str, float] | None = None) -> SearchResult:
    """Search the problem's lattice with nodes checked in SQL on the problem's engine."""
    with Evaluator(problem) as ev:
        nodes = SqlNodeEvaluator(ev, suppression_limit, metric, weights=weights)
        return search(lattice_of(problem), nodes, strategy)


__all__ = ["Direction", "Lattice", "Node", "NodeEvaluator", "NodeResult", "Property",
           "SearchResult", "SqlNodeEvaluator", "lattice_of", "search", "search_problem"]
