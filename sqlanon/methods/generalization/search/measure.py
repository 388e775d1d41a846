"""A report's metrics at the chosen node from the search's classes in memory, without a query each."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlanon.domain.metrics.base import Metric
from sqlanon.methods.generalization.search.fast import FastEvaluator
from sqlanon.methods.generalization.search.fast_classes import CheckedNode
from sqlanon.methods.generalization.search.fast_presence import DATA_FREE_METRICS


class MemoryMetrics:
    """Computes metrics with an in-memory form at one anonymous node of a loaded search table.

    The in-memory forms sum the same terms in the same order as the SQL forms (docs/search.md), so a
    report gives the same doubles whichever computed them.
    """

    def __init__(self, fast: FastEvaluator, levels: Mapping[str, int]) -> None:
        self.fast = fast
        self.node = tuple(int(levels[a]) for a in fast.qis)
        self._verdict: Any = None

    @staticmethod
    def computes(fast: FastEvaluator, metric: Metric) -> bool:
        """Whether :meth:`value` computes ``metric`` (else SQL does, on the classes' labels)."""
        if not type(metric).computes_in_memory():
            return False
        return not fast.subsets or metric.name in DATA_FREE_METRICS  # SQL counts the subset's rows

    def value(self, metric: Metric) -> float | None:
        """The metric at the node, or None when it has no in-memory form (compute it in SQL)."""
        if not self.computes(self.fast, metric):
            return None
        if self._verdict is None:
            self._verdict = self.fast.verdict(self.node)
        c, keep = self._verdict
        metric.prepare_in_memory(self.fast)
        node = CheckedNode(self.fast, self.node, c, keep, int(c.sizes[~keep].sum()), int(keep.sum()))
        return float(metric.in_memory(node))
