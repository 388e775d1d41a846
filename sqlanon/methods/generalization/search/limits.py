"""A time limit, a step limit and a progress callback around any node evaluator, for any strategy.

When a limit is reached, the search stops at its next node check and returns the best anonymous node
it has checked so far, marked ``complete=False``: a usable transformation, not a proven optimum.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from typing import TextIO

import numpy as np

from sqlanon.methods.generalization.search.lattice import Lattice, Node
from sqlanon.methods.generalization.search.nodes import NodeEvaluator, NodeResult
from sqlanon.methods.generalization.search.result import EXPLORED, SearchResult
from sqlanon.methods.generalization.search.strategies import search

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
        self.explored: list[tuple[Node, bool, float | None]] = []
        """The first :data:`EXPLORED` nodes checked, with their verdict and metric."""

    def prior_bounds(self, lattice: Lattice) -> np.ndarray | None:
        return self.inner.prior_bounds(lattice)

    @property
    def ceiling(self) -> float:
        return self.inner.ceiling

    @ceiling.setter
    def ceiling(self, value: float) -> None:
        self.inner.ceiling = value

    def _evaluate(self, node: Node) -> NodeResult:
        if (self.deadline is not None and time.perf_counter() >= self.deadline) or (
                self.max_checks is not None and self.checked >= self.max_checks):
            raise TimeLimitReached
        r = self.inner.evaluate(node)
        if len(self.explored) < EXPLORED:
            self.explored.append((tuple(r.node), r.anonymous, r.metric))
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
        result = search(lattice, budget, strategy)
    except TimeLimitReached:
        node, metric = budget.best if budget.best is not None else (None, None)
        found = [node] if node is not None else []
        result = SearchResult(strategy, node, metric, found, found, budget.checked, 0, 0,
                              time.perf_counter() - start, complete=False)
    result.explored = budget.explored
    return result


class TerminalProgress:
    """One self-updating line on standard error, shown once a search has run for ``after`` seconds:
    ``searching: 120 of 4,320 nodes checked, best: age=2, zip=1 (loss 0.31), 3.2 s``."""

    def __init__(self, metric: str | None, *, attributes: Sequence[str] = (), total: int | None = None,
                 after: float = 1.0, stream: TextIO | None = None, enabled: bool | None = None) -> None:
        self.metric = metric
        self.attributes = list(attributes)
        self.total = total
        self.start = time.perf_counter()
        self.after = after
        self.shown = False
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = self.stream.isatty() if enabled is None else enabled

    def _node(self, node: Node) -> str:
        names = self.attributes if len(self.attributes) == len(node) else \
            [f"#{i + 1}" for i in range(len(node))]
        return ", ".join(f"{a}={level}" for a, level in zip(names, node))

    def __call__(self, checked: int, node: Node | None, value: float | None) -> None:
        elapsed = time.perf_counter() - self.start
        if not self.enabled or elapsed < self.after or (checked % 25 and self.shown):
            return
        best = "none yet" if node is None else self._node(node) + (
            f" ({self.metric} {value:.6g})" if value is not None else "")
        of = f" of {self.total:,}" if self.total is not None else ""
        self.stream.write(f"\rsearching: {checked:,}{of} nodes checked, best: {best}, {elapsed:.1f} s   ")
        self.stream.flush()
        self.shown = True

    def close(self) -> None:
        if self.shown:
            self.stream.write("\n")
