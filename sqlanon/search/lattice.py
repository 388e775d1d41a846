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

from sqlanon.errors import HierarchyError

Node = tuple[int, ...]


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
        self._by_level: list[list[Node]] = [[] for _ in range(self.max_level + 1)]
        for i in range(self.size):
            node = self.node_of(i)
            self._by_level[sum(node)].append(node)
        self._tags: dict[Property, set[Node]] = {}

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
        return list(self._by_level[level]) if 0 <= level <= self.max_level else []

    def __iter__(self) -> Iterator[Node]:
        """All nodes level by level (bottom first), in id order within a level."""
        for nodes in self._by_level:
            yield from nodes

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

    # -- predictive properties ----------------------------------------------------------------
    def has(self, node: Node, prop: Property) -> bool:
        return node in self._tags.get(prop, ())

    def clear_tags(self) -> None:
        self._tags.clear()

    def tagged(self, prop: Property) -> set[Node]:
        return set(self._tags.get(prop, ()))

    def tag(self, node: Node, prop: Property) -> int:
        """Tag ``node`` and, by the property's direction, its generalizations or specializations.

        Returns the number of nodes newly tagged. Spreading stops at nodes that already hold the
        property (their own neighbours hold it already).
        """
        tags = self._tags.setdefault(prop, set())
        if node in tags:
            return 0
        step = {Direction.UP: self.successors, Direction.DOWN: self.predecessors}.get(
            prop.direction)
        tags.add(node)
        added, stack = 1, [node]
        while step is not None and stack:
            for nxt in step(stack.pop()):
                if nxt not in tags:
                    tags.add(nxt)
                    added += 1
                    stack.append(nxt)
        return added
