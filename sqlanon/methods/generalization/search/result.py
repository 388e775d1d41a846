"""What a lattice search finds (:class:`SearchResult`), the tags strategies put on nodes, and when
two metric values count as tied."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from sqlanon.methods.generalization.search.lattice import Direction, Node, Property

ANONYMOUS = Property("anonymous", Direction.UP)
NOT_ANONYMOUS = Property("not-anonymous", Direction.DOWN)
MONOTONE_PART = Property("monotone-part", Direction.UP)
PRUNED = Property("pruned", Direction.UP)
"""The node's generalizations cannot reach the best metric found (a lower bound above it)."""
DOMINATED = Property("dominated", Direction.UP)
"""A generalization of a satisfying node, so not minimal."""

TOLERANCE = 1e-12
"""Relative tolerance under which two metric values count as tied."""

RANKED = 10
EXPLORED = 1000
"""How many checked nodes a search records (:attr:`SearchResult.explored`)."""
"""How many of the best checked anonymous nodes a result lists."""


def tied(a: float, b: float) -> bool:
    return abs(a - b) <= TOLERANCE * max(1.0, abs(a), abs(b))


def tie_mask(values: np.ndarray, b: float) -> np.ndarray:
    """:func:`tied` of each value with ``b`` (infinite ``b`` ties nothing)."""
    if math.isinf(b):
        return np.zeros(np.shape(values), dtype=bool)
    return np.abs(values - b) <= TOLERANCE * np.maximum(np.maximum(np.abs(values), abs(b)), 1.0)


@dataclass
class SearchResult:
    """What a strategy found.

    Attributes:
        strategy: the strategy's name.
        node: the chosen node (None when no node satisfies the models).
        metric: its metric (None without a metric).
        ties: every satisfying node sharing the chosen node's metric (with ``exhaustive`` and
            ``optimal``: the global minimum; with ``binary``: the minimum at the lowest height).
        solutions: ``exhaustive``: all satisfying nodes; ``binary``: the satisfying nodes at the
            lowest height; ``incognito``: the minimal satisfying nodes; ``optimal``: ``ties``.
        checked: nodes the strategy checked.
        tagged: nodes decided by predictive tagging without a check.
        pruned: nodes skipped because they cannot matter (bounded metric, or above a satisfying
            node when looking for minimal ones).
        seconds: wall time of the search.
        trace: ``binary``: the heights probed with whether a satisfying node was found there.
        complete: whether the strategy ran to its end (see
            :mod:`sqlanon.methods.generalization.search.limits`).
    """

    strategy: str
    node: Node | None
    metric: float | None
    ties: list[Node]
    solutions: list[Node]
    checked: int
    tagged: int
    pruned: int
    seconds: float
    trace: list[tuple[int, bool]] = field(default_factory=list)
    complete: bool = True
    """False when a time limit stopped the search: ``node`` is then the best node checked so far."""
    ranked: list[tuple[Node, float]] = field(default_factory=list)
    """The best anonymous nodes the search checked, with their metric, best first (at most
    :data:`RANKED`): alternatives a user may prefer to the chosen node."""
    explored: list[tuple[Node, bool, float | None]] = field(default_factory=list)
    """The nodes the search checked, in order, with whether each is anonymous and its metric (the
    first :data:`EXPLORED` of them): the lattice view of the HTML report."""

    @property
    def height(self) -> int | None:
        return sum(self.node) if self.node is not None else None
