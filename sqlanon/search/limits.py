"""A time limit, a step limit and a progress callback around any node evaluator, for any strategy.

When a limit is reached, the search stops at its next node check and returns the best anonymous node
it has checked so far, marked ``complete=False``: a usable transformation, not a proven optimum.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable

import numpy as np

from sqlanon.search.lattice import Lattice, Node
from sqlanon.search.nodes import NodeEvaluator, NodeResult
from sqlanon.search.strategies import SearchResult, search

Progress = Callable[[int, "Node | None", "float | None"], None]
"""Called after each node check with (nodes checked, best node so far, its metric)."""


class TimeLimitReached(Exception):
    """Raised inside a search when its time is up."""


class Budgeted(NodeEvaluator):
    """Delegates to ``inner``; stops the search once ``seconds`` have passed or ``max_checks`` nodes
    were checked; reports progress."""

    def __init__(self, inner: NodeEvaluator, seconds: float | None = None,
                 progress: Progress | None = None, max_checks: int | None = None) -> None:
        super().__init__()
        self.inner = inner
        self.privacy_monotone = inner.privacy_monotone
        self.partly_monotone = inner.partly_monotone
        self.metric_monotone = inner.metric_monotone
        self.has_metric = inner.has_metric
        self.prefers_few_checks = inner.prefers_few_checks
        self.deadline = None if seconds is None else time.perf_counter() + seconds
        self.progress = progress
        self.max_checks = max_checks
        self.best: tuple[Node, float | None] | None = None

    def prior_bounds(self, lattice: Lattice) -> np.ndarray | None:
        return self.inner.prior_bounds(lattice)

    @property
    def ceiling(self) -> float:  # type: ignore[override]
        return self.inner.ceiling

    @ceiling.setter
    def ceiling(self, value: float) -> None:
        self.inner.ceiling = value

    def _evaluate(self, node: Node) -> NodeResult:
        if (self.deadline is not None and time.perf_counter() >= self.deadline) or (
                self.max_checks is not None and self.checked >= self.max_checks):
            raise TimeLimitReached
        r = self.inner.evaluate(node)
        if r.anonymous and (self.best is None or (
                r.metric is not None and (self.best[1] is None or r.metric < self.best[1]))):
            self.best = (r.node, r.metric)
        if self.progress is not None:
            best = self.best or (None, None)
            self.progress(self.checked + 1, best[0], best[1])
        return r


def search_within(lattice: Lattice, evaluator: NodeEvaluator, strategy: str = "optimal", *,
                  time_limit: float | None = None, progress: Progress | None = None,
                  max_checks: int | None = None) -> SearchResult:
    """Run ``strategy`` with an optional time limit (seconds), step limit and progress callback."""
    budget = Budgeted(evaluator, time_limit, progress, max_checks)
    start = time.perf_counter()
    try:
        return search(lattice, budget, strategy)
    except TimeLimitReached:
        node, metric = budget.best if budget.best is not None else (None, None)
        found = [node] if node is not None else []
        return SearchResult(strategy, node, metric, found, found, budget.checked, 0, 0,
                            time.perf_counter() - start, complete=False)


class TerminalProgress:
    """One self-updating line on standard error, shown once a search has run for ``after`` seconds."""

    def __init__(self, metric: str | None, after: float = 1.0) -> None:
        self.metric = metric
        self.start = time.perf_counter()
        self.after = after
        self.shown = False
        self.enabled = sys.stderr.isatty()

    def __call__(self, checked: int, node: Node | None, value: float | None) -> None:
        elapsed = time.perf_counter() - self.start
        if not self.enabled or elapsed < self.after or (checked % 25 and self.shown):
            return
        best = "none yet" if node is None else f"{list(node)}" + (
            f" {self.metric}={value:.6g}" if value is not None else "")
        sys.stderr.write(f"\rsearching: {checked} nodes checked, best {best}, {elapsed:.1f} s   ")
        sys.stderr.flush()
        self.shown = True

    def close(self) -> None:
        if self.shown:
            sys.stderr.write("\n")
