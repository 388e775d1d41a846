"""What a search strategy asks about a node, and an implementation that checks nodes in SQL.

Strategies see only :class:`NodeEvaluator`; a faster implementation can replace the SQL one without
touching them.
"""

from __future__ import annotations

import abc
import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from sqlanon.domain.metrics import MetricContext, get_metric
from sqlanon.domain.metrics.base import Metric
from sqlanon.methods.generalization.evaluator import Evaluator, NodeCheck
from sqlanon.methods.generalization.search.lattice import Lattice, Node


@dataclass(frozen=True)
class NodeResult:
    """One checked node.

    Attributes:
        node: the levels, in the lattice's QI order.
        anonymous: every privacy model holds once the outlier rows (within the budget) are suppressed.
        monotone_part: the models that are monotone under the suppression limit hold on their own
            (each one's violating rows fit the budget; for k-anonymity and distinct l-diversity this
            is the k-anonymity-only sub-property ARX searches on when t-closeness is present). Always
            True when no model is monotone. ``anonymous`` implies it.
        metric: the information loss when the node is anonymous (or when the metric serves as its
            own lower bound), else None.
        lower_bound: a value that neither this node nor any generalization of it can go below, when
            known.
    """

    node: Node
    anonymous: bool
    monotone_part: bool
    metric: float | None = None
    lower_bound: float | None = None


class NodeEvaluator(abc.ABC):
    """Answers questions about nodes, each node once (a memo), counting the real checks.

    Attributes:
        privacy_monotone: every model is monotone under the suppression limit (a satisfied node's
            generalizations are anonymous; a violated node's specializations are not).
        partly_monotone: some model is monotone, so :attr:`NodeResult.monotone_part` carries
            information.
        metric_monotone: the metric never decreases under generalization at this limit; a node's
            metric then bounds its generalizations'.
        has_metric: whether a metric is computed at all.
    """

    privacy_monotone: bool = True
    partly_monotone: bool = True
    metric_monotone: bool = True
    has_metric: bool = False
    ceiling: float = math.inf
    """A value the search no longer needs metrics above: an evaluator may report ``metric`` None
    for an anonymous node whose bound known before checking exceeds it (the optimal search sets it
    to the best value found so far)."""
    prefers_few_checks: bool = False
    """Whether a check costs about the same wherever it is, so strategies should minimize their
    number (rather than favour checks that can reuse a finer node's classes)."""

    def __init__(self) -> None:
        self._memo: dict[Node, NodeResult] = {}
        self._checks = 0

    def evaluate(self, node: Node) -> NodeResult:
        node = tuple(node)
        found = self._memo.get(node)
        if found is None:
            found = self._evaluate(node)
            self._checks += 1
            if not (self.has_metric and found.anonymous and found.metric is None):
                self._memo[node] = found  # a metric skipped beyond the ceiling is not an answer to keep
        return found

    def known(self, node: Node) -> NodeResult | None:
        """The result if the node was checked already."""
        return self._memo.get(tuple(node))

    @property
    def checked(self) -> int:
        """Nodes checked so far."""
        return self._checks

    @abc.abstractmethod
    def _evaluate(self, node: Node) -> NodeResult: ...

    def prior_bounds(self, lattice: Lattice) -> np.ndarray | None:
        """A lower bound of the metric for every node (indexed by node id), known without checking.

        Each value must bound the node's metric and its generalizations' (whatever is suppressed).
        None when the evaluator cannot tell before checking.
        """
        return None


class SqlNodeEvaluator(NodeEvaluator):
    """Checks nodes with :meth:`Evaluator.check` (raw frequency-table mode) and a registered metric."""

    def __init__(self, evaluator: Evaluator, suppression_limit: float = 0.0,
                 metric: str | Metric | None = None, *, weights: Mapping[str, float] | None = None,
                 options: Mapping[str, Any] | None = None) -> None:
        """Args:
            evaluator: an evaluator over the problem, without ``scan_levels``.
            suppression_limit: the share of rows that may be suppressed.
            metric: a metric name or instance (None: privacy only).
            weights: attribute weights for the metric.
            options: metric options.
        """
        super().__init__()
        self.ev = evaluator
        self.qis = list(evaluator.p.qis)
        self.limit = float(suppression_limit)
        self.metric = get_metric(metric, options=options) if isinstance(metric, str) else metric
        self.weights = dict(weights or {})
        self.options = dict(options or {})
        models = evaluator.p.models
        monotone = [m.is_monotonic(self.limit) for m in models]
        self.privacy_monotone = all(monotone)
        self.partly_monotone = any(monotone)
        self._monotone_models = [i for i, ok in enumerate(monotone) if ok]
        self.has_metric = self.metric is not None
        self.metric_monotone = self.metric is not None and self.metric.is_monotonic(self.limit)

    def _evaluate(self, node: Node) -> NodeResult:
        check = self.ev.check(dict(zip(self.qis, node)), self.limit)
        part = all(check.models[i].violating_rows <= check.max_suppressed
                   for i in self._monotone_models)
        value = bound = None
        if self.metric is not None:
            ctx = MetricContext(self.ev, check, self.weights, self.options)
            if check.anonymous or self.metric_monotone:
                value = float(self.metric.compute(ctx))
            lb = self.metric.lower_bound(ctx)
            if lb is None and self.metric.bounded_by_unsuppressed:
                lb = value if value is not None and not check.suppressed_rows else \
                    self.metric.compute(MetricContext(self.ev, self._unsuppressed(check),
                                                      self.weights, self.options))
            bound = float(lb) if lb is not None else (value if self.metric_monotone else None)
        return NodeResult(node, check.anonymous, part or check.anonymous, value, bound)

    @staticmethod
    def _unsuppressed(check: NodeCheck) -> NodeCheck:
        """The node as if nothing were suppressed (every class kept, as for a failing node)."""
        if not check.anonymous:
            return check
        return replace(check, max_suppressed=-1, classes=check.classes + check.outlier_classes)
