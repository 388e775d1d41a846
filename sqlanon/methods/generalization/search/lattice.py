"""The generalization lattice of full-domain generalization: one level per quasi-identifier.

A node is a tuple of levels, one per QI in data column order (as ARX orders them). Its id follows
ARX: the first attribute varies fastest (id = Σ level_i · Π_{j<i} (h_j + 1)). Properties are tagged
on nodes with a direction, as ARX's predictive properties (Kohlmayer F, Prasser F, Eckert C, Kemper A,
Kuhn KA. Flash: efficient, stable and optimal k-anonymity. PASSAT/SocialCom 2012): a property with
direction UP holds for every generalization of a node that has it (a monotone model satisfied), one
with direction DOWN for every specialization (a monotone model violated).
"""

from __future__ import annotations

import enum
import itertools
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from sqlanon.errors import HierarchyError, UnsupportedError

Node = tuple[int, ...]

MAX_ENUMERATED = 5_000_000
"""Lattices up to this many nodes can be enumerated and tagged; larger ones (tens of QIs) only offer
neighbours and ids, which is what the heuristic search needs."""


class Direction(enum.Enum):
    """Where a tagged property spreads: to generalizations (UP) or specializations (DOWN)."""

    UP = "up"
    DOWN = "down"
    NONE = "none"


@dataclass(frozen=True)
class Property:
    """A predictive property (ARX's PredictiveProperty)."""

    name: str
    direction: Direction


class Lattice:
    """All nodes between the bottom (all zeros) and the top (every QI at its height).

    >>> lat = Lattice([1, 2])
    >>> lat.size, lat.top, lat.node_id((1, 2)), lat.node_of(3)
    (6, (1, 2), 5, (1, 1))
    >>> list(lat.nodes_at(1))
    [(1, 0), (0, 1)]
    """

    def __init__(self, heights: Sequence[int], names: Sequence[str] | None = None) -> None:
        self.heights: tuple[int, ...] = tuple(int(h) for h in heights)
        if any(h < 0 for h in self.heights):
            raise HierarchyError(f"hierarchy heights must be >= 0, got {list(self.heights)}")
        self.names = list(names) if names is not None else [f"q{i}" for i in range(len(heights))]
        self._mult = [1]
        for h in self.heights[:-1]:
            self._mult.append(self._mult[-1] * (h + 1))
        self.size = self._mult[-1] * (self.heights[-1] + 1) if self.heights else 1
        self.bottom: Node = tuple(0 for _ in self.heights)
        self.top: Node = self.heights
        self.max_level = sum(self.heights)
        self._ids_by_level: list[np.ndarray] | None = None
        self._offsets: list[np.ndarray] | None = None
        self._tags: dict[str, np.ndarray] = {}

    @property
    def enumerable(self) -> bool:
        """Whether the lattice is small enough to list its nodes and tag them (:data:`MAX_ENUMERATED`)."""
        return self.size <= MAX_ENUMERATED

    def _require_enumerable(self) -> None:
        if not self.enumerable:
            raise UnsupportedError(
                f"the lattice has {self.size:,} nodes, too many to enumerate (at most "
                f"{MAX_ENUMERATED:,}); use the heuristic search strategy")

    def levels_of(self, ids: np.ndarray) -> np.ndarray:
        """The levels (one column per QI) of the nodes with the given ids."""
        ids = np.asarray(ids, dtype=np.int64)
        return np.stack([(ids // m) % (h + 1) for h, m in zip(self.heights, self._mult)], axis=-1) \
            if self.heights else np.zeros((len(ids), 0), dtype=np.int64)

    def ids_by_level(self) -> list[np.ndarray]:
        """Per lattice level, the ids of its nodes in increasing order."""
        if self._ids_by_level is None:
            self._require_enumerable()
            ids = np.arange(self.size, dtype=np.int64)
            level = self.levels_of(ids).sum(axis=1) if self.heights else np.zeros(1, dtype=np.int64)
            order = np.argsort(level, kind="stable")
            bounds = np.searchsorted(level[order], np.arange(self.max_level + 2))
            self._ids_by_level = [order[bounds[i]:bounds[i + 1]] for i in range(self.max_level + 1)]
        return self._ids_by_level

    # -- nodes --------------------------------------------------------------------------------
    def node_id(self, node: Node) -> int:
        """ARX's id: the first attribute varies fastest."""
        return sum(level * m for level, m in zip(node, self._mult))

    def node_of(self, node_id: int) -> Node:
        out = []
        for h in self.heights:
            out.append(node_id % (h + 1))
            node_id //= h + 1
        return tuple(out)

    @staticmethod
    def level(node: Node) -> int:
        """The node's height in the lattice: the sum of its levels."""
        return sum(node)

    def nodes_at(self, level: int) -> list[Node]:
        """The nodes of one lattice level, in id order."""
        if not 0 <= level <= self.max_level:
            return []
        return [tuple(int(x) for x in row) for row in self.levels_of(self.ids_by_level()[level])]

    def __iter__(self) -> Iterator[Node]:
        """All nodes level by level (bottom first), in id order within a level."""
        for level in range(self.max_level + 1):
            yield from self.nodes_at(level)

    def __len__(self) -> int:
        return self.size

    def successors(self, node: Node) -> list[Node]:
        """Nodes one step more general (one attribute one level up)."""
        return [node[:i] + (node[i] + 1,) + node[i + 1:]
                for i in range(len(node)) if node[i] < self.heights[i]]

    def predecessors(self, node: Node) -> list[Node]:
        """Nodes one step more specific."""
        return [node[:i] + (node[i] - 1,) + node[i + 1:] for i in range(len(node)) if node[i] > 0]

    @staticmethod
    def is_generalization_of(a: Node, b: Node) -> bool:
        """Whether ``a`` generalizes ``b`` (every level ≥; a node generalizes itself)."""
        return all(x >= y for x, y in zip(a, b))

    def generalizations(self, node: Node) -> Iterator[Node]:
        """Every node ≥ ``node``, the node included."""
        return itertools.product(*[range(lv, h + 1) for lv, h in zip(node, self.heights)])

    def specializations(self, node: Node) -> Iterator[Node]:
        """Every node ≤ ``node``, the node included."""
        return itertools.product(*[range(lv + 1) for lv in node])

    def cone_ids(self, node: Node, up: bool) -> np.ndarray:
        """Ids of every generalization (``up``) or specialization of ``node``, itself included."""
        if self._offsets is None:
            self._require_enumerable()
            self._offsets = [np.arange(h + 1, dtype=np.int64) * m
                             for h, m in zip(self.heights, self._mult)]
        if not node:
            return np.zeros(1, dtype=np.int64)
        cuts = [o[level:] if up else o[:level + 1] for o, level in zip(self._offsets, node)]
        ids = cuts[0]
        for c in cuts[1:]:
            ids = np.add.outer(c, ids).ravel()
        return ids

    # -- predictive properties ----------------------------------------------------------------
    def mask(self, prop: Property) -> np.ndarray:
        """The property as a boolean array over node ids (created empty on first use)."""
        arr = self._tags.get(prop.name)
        if arr is None:
            self._require_enumerable()
            arr = self._tags[prop.name] = np.zeros(self.size, dtype=bool)
        return arr

    def has(self, node: Node, prop: Property) -> bool:
        arr = self._tags.get(prop.name)
        return arr is not None and bool(arr[self.node_id(node)])

    def clear_tags(self) -> None:
        self._tags.clear()

    def tagged(self, prop: Property) -> set[Node]:
        arr = self._tags.get(prop.name)
        if arr is None:
            return set()
        return {tuple(int(x) for x in row) for row in self.levels_of(np.flatnonzero(arr))}

    def tag(self, node: Node, prop: Property) -> int:
        """Tag ``node`` and, by the property's direction, its generalizations or specializations.

        Returns the number of nodes newly tagged.
        """
        arr = self.mask(prop)
        if prop.direction is Direction.NONE:
            ids = np.array([self.node_id(node)], dtype=np.int64)
        else:
            if arr[self.node_id(node)]:
                return 0
            ids = self.cone_ids(node, prop.direction is Direction.UP)
        new = int(np.count_nonzero(~arr[ids]))
        arr[ids] = True
        return new
