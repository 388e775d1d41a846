"""What a metric's in-memory form reads: the table as the in-memory evaluator loaded it, and one node.

A metric computed in SQL reads a :class:`~sqlanon.domain.metrics.base.MetricContext`; its in-memory form
(:meth:`~sqlanon.domain.metrics.base.Metric.in_memory`) reads a :class:`MemoryNode` instead, and must give
the same double bit for bit: the same terms summed in the same order. The in-memory evaluator
(``sqlanon.methods.generalization.search.fast``) implements both protocols.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import numpy as np


class MemoryTable(Protocol):
    """The frequency table in memory: every quasi-identifier coded per level of its hierarchy.

    Lists are indexed by quasi-identifier (in the problem's order), then by level.
    """

    n: int
    """Rows of the table."""
    qis: list[str]
    weights: list[float]
    """Attribute weights scaled by their maximum (ARX)."""
    heights: list[int]
    domain: list[int]
    """|D_i|: rows of each attribute's hierarchy table."""
    codes: list[list[np.ndarray]]
    """The label code of every frequency row."""
    label_counts: list[list[np.ndarray]]
    """Per label code: the hierarchy rows under the label."""
    weighted_all: list[list[int]]
    """Σ over the table's rows of their label's hierarchy rows."""

    def leaves(self, i: int) -> Leaves:
        """The leaves of attribute ``i`` present in the table."""

    def first_rows(self, attribute: str) -> Mapping[Any, int]:
        """Each leaf's first row in the source's scan order (ARX's dictionary order)."""

    def memo(self, key: Any, compute: Callable[[], Any]) -> Any:
        """``compute()`` once per loaded table (terms a metric reuses for every node)."""


class Leaves(Protocol):
    """One attribute's leaves present in the table."""

    @property
    def keys(self) -> Sequence[Any]:
        """The leaf keys (hierarchy text), in code order."""

    @property
    def rows(self) -> np.ndarray:
        """Rows of the table per leaf (int64)."""

    @property
    def labels(self) -> list[np.ndarray]:
        """Per level: each leaf's label code."""


class MemoryNode(Protocol):
    """One checked node in memory."""

    table: MemoryTable
    levels: tuple[int, ...]
    """The node's level per quasi-identifier."""
    sizes: np.ndarray
    """|E| of every class (int64)."""
    keep: np.ndarray
    """Which classes are kept (all of them when the node is not anonymous)."""
    suppressed: int
    """S: rows of the suppressed classes (0 when the node is not anonymous)."""
    classes: int
    """Classes released: the kept ones when anonymous, else all."""

    def suppressed_members(self) -> tuple[np.ndarray, np.ndarray]:
        """``(sizes, frequency rows)`` of the members of the suppressed classes: a member's row carries
        its class's labels, so sums over members equal sums over the suppressed classes."""


def add_terms(terms: Sequence[Sequence[float]], levels: Sequence[np.ndarray]) -> np.ndarray:
    """Σ_i terms[i][levels[i]] for every node (the prior bounds of metrics summing one term per
    attribute), accumulated attribute by attribute as the per-node sums are."""
    import numpy as np

    total = np.full(len(levels[0]) if levels else 1, 0.0)
    for t, level in zip(terms, levels):
        total += np.asarray(t)[level]
    return total
