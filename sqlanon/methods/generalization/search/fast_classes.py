"""A node's equivalence classes in memory, and the views the models' and metrics' in-memory forms read."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from sqlanon.domain.factorize import code_dtype
from sqlanon.domain.metrics.memory import MemoryTable


@dataclass(frozen=True)
class LeafCounts:
    """One attribute's leaves present in the table (:class:`~sqlanon.domain.metrics.memory.Leaves`)."""

    keys: Sequence[Any]
    rows: np.ndarray
    labels: list[np.ndarray]


@dataclass
class Classes:
    """The equivalence classes of one node: sizes and sensitive histograms, and the class of each
    member (a frequency row, or a class of the finer node the classes were rolled up from)."""

    k: int
    sizes: np.ndarray
    hists: dict[str, np.ndarray]
    inv: np.ndarray
    """The class of each member."""
    member_sizes: np.ndarray
    """The rows each member stands for (int64)."""
    members: np.ndarray | None
    """The frequency row representing each member (None: member ``i`` is row ``i``)."""

    @functools.cached_property
    def rep(self) -> np.ndarray:
        """One frequency row of each class (built on first use: only roll-ups need it)."""
        if self.members is not None:
            rep = np.empty(self.k, dtype=self.members.dtype)
            rep[self.inv] = self.members
        else:
            rep = np.empty(self.k, dtype=code_dtype(len(self.inv), signed=True))
            rep[self.inv] = np.arange(len(self.inv), dtype=rep.dtype)
        return rep

    def rows_of(self, classes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(frequency rows, rows each stands for)`` of the members of the classes marked in the
        boolean array ``classes``: Σ over them equals Σ over those classes."""
        idx = np.flatnonzero(classes[self.inv])
        return (idx if self.members is None else self.members[idx]), self.member_sizes[idx]


class RecentClasses:
    """The classes of the last ``size`` checked nodes that may serve a roll-up: only tables of at most
    half the rows pay off (measured on Adult), so no other table takes a place (or its memory)."""

    def __init__(self, rows: int, size: int) -> None:
        self.rows, self.size = rows, size
        self._kept: dict[tuple[int, ...], Classes] = {}

    def keep(self, node: tuple[int, ...], c: Classes) -> None:
        if c.k * 2 > self.rows:
            return
        self._kept[node] = c
        if len(self._kept) > self.size:
            del self._kept[next(iter(self._kept))]

    def finer(self, node: tuple[int, ...]) -> Classes | None:
        """The kept classes with the fewest classes among nodes that ``node`` generalizes."""
        best = None
        for levels, t in self._kept.items():
            if all(a <= b for a, b in zip(levels, node)) and (best is None or t.k < best.k):
                best = t
        return best


class NodeClasses:
    """The classes of one node as the statistics' in-memory forms read them
    (:class:`~sqlanon.domain.models.base.ClassTable`).

    Args:
        c: the node's classes.
        n: the table's rows.
        sensitive: per sensitive attribute, (value codes of the frequency rows, number of values,
            each value's count over the table).
        trees: per attribute read with its hierarchy, the hierarchy over its values.
        populations: per population table read, its records in each class of the node.
        numbers: per attribute read as numbers, each value's number (NaN for NULL).
        subsets: per research subset read (by plan step), its matched rows in each class.
    """

    __slots__ = ("_c", "_sensitive", "_trees", "_populations", "_numbers", "_subsets", "sizes", "n")

    def __init__(self, c: Classes, n: int, sensitive: Mapping[str, tuple[np.ndarray, int, np.ndarray]],
                 trees: Mapping[str, list[np.ndarray]],
                 populations: Callable[[str, np.ndarray], np.ndarray] | None = None,
                 numbers: Mapping[str, np.ndarray] | None = None,
                 subsets: Callable[[str, np.ndarray], np.ndarray] | None = None) -> None:
        self._c, self._sensitive, self._trees = c, sensitive, trees
        self._populations, self._numbers, self._subsets = populations, numbers or {}, subsets
        self.sizes = c.sizes
        self.n = n

    def histogram(self, attribute: str) -> np.ndarray:
        return self._c.hists[attribute]

    def global_counts(self, attribute: str) -> np.ndarray:
        return self._sensitive[attribute][2]

    def tree(self, attribute: str) -> list[np.ndarray]:
        return self._trees[attribute]

    def population(self, relation: str) -> np.ndarray:
        if self._populations is None:
            raise KeyError(relation)
        return self._populations(relation, self._c.rep)

    def numbers(self, attribute: str) -> np.ndarray:
        return self._numbers[attribute]

    def matched(self, step: str) -> np.ndarray:
        if self._subsets is None:
            raise KeyError(step)
        return self._subsets(step, self._c.rep)


class CheckedNode:
    """One checked node as the metrics' in-memory forms read it
    (:class:`~sqlanon.domain.metrics.memory.MemoryNode`)."""

    __slots__ = ("table", "levels", "_c", "sizes", "keep", "suppressed", "classes")

    def __init__(self, table: MemoryTable, levels: tuple[int, ...], c: Classes, keep: np.ndarray,
                 suppressed: int, classes: int) -> None:
        self.table, self.levels, self._c = table, levels, c
        self.sizes, self.keep, self.suppressed, self.classes = c.sizes, keep, suppressed, classes

    def suppressed_members(self) -> tuple[np.ndarray, np.ndarray]:
        rows, sizes = self._c.rows_of(~self.keep)
        return sizes, rows
