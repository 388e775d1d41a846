"""Semantic distance and marginality over a taxonomy (the hierarchy of a nominal attribute).

Domingo-Ferrer J, Sanchez D, Soria-Comas J. Database Anonymization, Morgan & Claypool 2016,
section 9.4 (marginality, eq. 9.1-9.4) and section 9.5 (semantic distance, eq. 9.6, after Sanchez,
Batet, Isern, Valls 2012); marginality after Domingo-Ferrer, Sanchez, Rufian-Torrell, Information
Sciences 242, 2013.

The taxonomy is read from a hierarchy table (ARX's format: one row per leaf, column j = level j):

* a row is a path from the leaf to the top; a label repeated at consecutive levels is one concept
  (ARX rows all have the same width, so a value that is not generalized at a level repeats);
* a concept is identified by its path to the top, so equal labels under different parents are
  different concepts, and a leaf whose label is also a generalization of another leaf at the same
  place in the tree is that generalization (a value may be a category too);
* ``φ(a)``, the taxonomic ancestors of ``a`` including ``a``, is its path; ``|φ(a)|`` is its depth.

Semantic distance (eq. 9.6): with ``u = |φ(a) ∪ φ(b)|`` and ``c = |φ(a) ∩ φ(b)|``,
``δ(a, b) = log2(1 + (u - c) / u)``; it is a metric with values in ``[0, 1]``, and depends only on
``(|φ(a)|, |φ(b)|, c)``, so it is read from a small table of those triples. Concepts under
different top labels share no ancestor and are at distance 1.

NULL is a concept of its own outside the tree (distance 1 to every other concept), unless the
hierarchy lists a leaf for it (a table hierarchy's ``null_leaf``, or a materialized table whose leaf
is None).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import cached_property

import numpy as np

from sqlanon.domain.hierarchy.base import HierarchyTable

_CHUNK = 1 << 22
"""Upper bound on the number of (candidate, value, level) cells compared at once."""

_DIRECT_PAIRS = 4096
"""Above this many (candidate, sample value) pairs marginalities are summed over the tree."""

TIE_TOLERANCE = 1e-9
"""Sums of distances within this relative margin of the best are ties (their order depends on the
order of summation only)."""


def delta(size_a: int, size_b: int, common: int) -> float:
    """Eq. 9.6 from the sizes of φ(a), φ(b) and of their intersection.

    >>> round(delta(3, 3, 2), 6)  # siblings under a child of the top: log2(1 + 2/4)
    0.584963
    >>> delta(2, 2, 2)
    0.0
    """
    union = size_a + size_b - common
    return math.log2(1 + (union - common) / union)


def first_best(values: np.ndarray, *, largest: bool = False) -> int:
    """Index of the first value within :data:`TIE_TOLERANCE` of the minimum (or maximum)."""
    best = float(values.max() if largest else values.min())
    margin = TIE_TOLERANCE * max(1.0, abs(best))
    close = values >= best - margin if largest else values <= best + margin
    return int(np.flatnonzero(close)[0])


class Taxonomy:
    """The concepts of a hierarchy table as a tree, with eq. 9.6 distances between them.

    Concepts are numbered in order of first appearance, reading the table row by row from the top
    label down to the leaf; the NULL concept comes last.

    Args:
        table: the hierarchy's rows ``(leaf, level1, ..., levelH)``.
        null_leaf: the leaf label that stands for NULL in the data, if the hierarchy has one.

    Example:
        >>> t = Taxonomy(HierarchyTable((("a", "x", "*"), ("b", "x", "*"), ("c", "c", "*"))))
        >>> [t.label[i] for i in t.path(t.leaf["a"])], int(t.depth[t.leaf["c"]])
        (['*', 'x', 'a'], 2)
        >>> round(t.distance(t.leaf["a"], t.leaf["c"]), 6)  # log2(1 + 3/4)
        0.807355
    """

    def __init__(self, table: HierarchyTable, *, null_leaf: str | None = None) -> None:
        ids: dict[tuple[str | None, ...], int] = {}
        label: list[str | None] = []
        parent: list[int] = []
        leaf: dict[str | None, int] = {}
        for row in table.rows:
            path: list[str | None] = []
            for cell in reversed(row):
                if not path or path[-1] != cell:
                    path.append(cell)
            node = -1
            for depth in range(1, len(path) + 1):
                key = tuple(path[:depth])
                if key not in ids:
                    ids[key] = len(label)
                    label.append(path[depth - 1])
                    parent.append(node)
                node = ids[key]
            leaf[row[0]] = node
        self.domain = np.array(list(dict.fromkeys(leaf.values())), dtype=np.int64)
        """The distinct leaves (Dom(X) of eq. 9.1-9.3), in order of first appearance."""
        if None in leaf:
            self.null = leaf[None]
        elif null_leaf is not None and null_leaf in leaf:
            self.null = leaf[null_leaf]
        else:
            self.null = len(label)
            label.append(None)
            parent.append(-1)
        self.label = label
        """The label of each concept (None for NULL)."""
        self.leaf = leaf
        """Leaf label -> concept (the last row of a leaf listed twice wins, as in ARX)."""
        self.parent = np.array(parent, dtype=np.int64)
        self.depth = np.zeros(len(label), dtype=np.int64)
        """``|φ(a)|`` of each concept."""
        for node, up in enumerate(parent):  # parents are numbered before their children
            self.depth[node] = 1 if up < 0 else self.depth[up] + 1
        height = int(self.depth.max())
        self.ancestors = np.full((len(label), height), -1, dtype=np.int64)
        """``(concepts, height)``: column d is the ancestor at depth d + 1 (-1 past the concept)."""
        for node, up in enumerate(parent):
            if up >= 0:
                self.ancestors[node] = self.ancestors[up]
            self.ancestors[node, self.depth[node] - 1] = node
        self.table = np.zeros((height + 1, height + 1, height + 1))
        """``table[|φ(a)|, |φ(b)|, c]`` = eq. 9.6."""
        for a in range(1, height + 1):
            for b in range(1, height + 1):
                for c in range(min(a, b) + 1):
                    self.table[a, b, c] = delta(a, b, c)

    def __len__(self) -> int:
        return len(self.label)

    def path(self, node: int) -> list[int]:
        """φ(node) from the top concept down to ``node``."""
        return [int(a) for a in self.ancestors[node, : self.depth[node]]]

    def common(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """``|φ(a) ∩ φ(b)|`` for broadcastable arrays of concepts."""
        a, b = np.asarray(a), np.asarray(b)
        count = np.zeros(np.broadcast_shapes(a.shape, b.shape), dtype=np.int64)
        for level in range(self.ancestors.shape[1]):  # a loop over the few levels is fastest
            up = self.ancestors[a, level]
            count += (up == self.ancestors[b, level]) & (up >= 0)
        return count

    def common_with_all(self, nodes: np.ndarray) -> np.ndarray:
        """``(len(nodes), concepts)``: ``|φ(u) ∩ φ(a)|`` for each of ``nodes`` and every concept.

        In depth-first order every subtree is a run of concepts, so each ancestor of ``u`` adds 1
        over one run: a difference array and a running sum, O(concepts) per node.
        """
        order, start, end = self._runs
        nodes = np.atleast_1d(np.asarray(nodes, dtype=np.int64))
        paths = self.ancestors[nodes]
        row, level = np.nonzero(paths >= 0)
        up = paths[row, level]
        diff = np.zeros((len(nodes), len(self) + 1), dtype=np.int64)
        np.add.at(diff, (row, start[up]), 1)
        np.add.at(diff, (row, end[up]), -1)
        out = np.empty((len(nodes), len(self)), dtype=np.int64)
        out[:, order] = np.cumsum(diff[:, :-1], axis=1)
        return out

    @cached_property
    def _runs(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Concepts in depth-first order, and each subtree's run ``[start, end)`` in that order."""
        order = np.lexsort(self.ancestors.T[::-1])  # -1 sorts first: a concept before its subtree
        start = np.empty(len(self), dtype=np.int64)
        start[order] = np.arange(len(self))
        size = np.asarray(self._subtrees.sum(axis=1)).ravel().astype(np.int64)
        return order, start, start + size

    def distances(self, a: np.ndarray | int, b: np.ndarray | int) -> np.ndarray:
        """Eq. 9.6 between broadcastable arrays of concepts."""
        a, b = np.asarray(a), np.asarray(b)
        return self.table[self.depth[a], self.depth[b], self.common(a, b)]

    def distance(self, a: int, b: int) -> float:
        """Eq. 9.6 between two concepts."""
        return float(self.distances(a, b))

    def marginality(self, candidates: np.ndarray, sample: np.ndarray,
                    weights: np.ndarray | None = None) -> np.ndarray:
        """Eq. 9.1/9.4: for each candidate, the sum of its distances to the sample's concepts.

        Args:
            candidates: ``(c,)`` concepts.
            sample: ``(s,)`` concepts.
            weights: ``(s,)`` how many times each sample concept occurs (1 each when omitted).
        """
        candidates = np.asarray(candidates, dtype=np.int64)
        sample = np.asarray(sample, dtype=np.int64)
        w = np.ones(len(sample)) if weights is None else np.asarray(weights, dtype=np.float64)
        out = np.empty(len(candidates))
        step = max(1, _CHUNK // max(1, len(sample) * self.ancestors.shape[1]))
        for start in range(0, len(candidates), step):
            block = candidates[start:start + step]
            out[start:start + step] = self.distances(block[:, None], sample[None, :]) @ w
        return out

    def marginality_all(self, weights: np.ndarray) -> np.ndarray:
        """Eq. 9.1/9.4 for every concept at once: ``m[a] = Σ_u weights[u] · δ(a, u)``.

        Cost O(concepts · height²) instead of O(candidates · sample · height): the concepts ``u``
        sharing exactly ``c`` ancestors with ``a`` are those below ``a``'s ancestor at depth ``c``
        but not below the next one, so per-subtree weights by depth give every sum.
        """
        n, height = self.ancestors.shape
        own = np.zeros((n, height + 1))
        own[np.arange(n), self.depth] = weights
        below = np.zeros((n + 1, height + 1))  # below[v, d]: weight at depth d under v; row n: 0
        below[:n] = self._subtrees @ own
        below_path = below[self._padded]  # (concept, depth c of its ancestor, d)
        upper = np.concatenate([np.broadcast_to(own.sum(axis=0), (n, 1, height + 1)),
                                below_path[:, :-1]], axis=1)
        return np.einsum("ncd,ncd->n", upper - below_path, self._by_common)

    @cached_property
    def _subtrees(self):
        """Sparse ``(concepts, concepts)``: 1 where the row is an ancestor of (or is) the column."""
        from scipy.sparse import csr_matrix

        node, level = np.nonzero(self.ancestors >= 0)
        up = self.ancestors[node, level]
        return csr_matrix((np.ones(len(node)), (up, node)), shape=(len(self), len(self)))

    @cached_property
    def _padded(self) -> np.ndarray:
        """Ancestors by depth with one more column; missing ones point at an all-zero row."""
        n = len(self)
        padded = np.concatenate([self.ancestors, np.full((n, 1), -1)], axis=1)
        padded[padded < 0] = n
        return padded

    @cached_property
    def _by_common(self) -> np.ndarray:
        """``(concepts, c, d)``: δ to a concept of depth ``d`` sharing ``c`` ancestors."""
        return self.table[self.depth].transpose(0, 2, 1)

    def candidates(self, sample: np.ndarray) -> np.ndarray:
        """τ(S): the sample's concepts and all their ancestors, in concept order.

        Ancestors above the sample's lowest common ancestor never win eq. 9.4 (each is strictly
        farther than that ancestor from every sample value), so including them changes nothing.
        """
        up = self.ancestors[np.asarray(sample, dtype=np.int64)]
        return np.unique(up[up >= 0])

    def centroid(self, sample: Sequence[int] | np.ndarray, weights: np.ndarray | None = None,
                 allowed: np.ndarray | None = None) -> int:
        """Eq. 9.4: the concept of τ(S) with the least marginality towards the sample.

        Ties (within :data:`TIE_TOLERANCE`) go to the concept occurring most often in the sample,
        then the more specific one (larger ``|φ|``), then the first in concept order.

        Args:
            sample: the group's concepts (repeats allowed).
            weights: how many times each sample concept occurs (1 each when omitted).
            allowed: a boolean mask over the concepts restricting the candidates (the sample's own
                concepts are always allowed).

        Example:
            >>> rows = (("p", "g", "*"), ("q", "g", "*"), ("r", "g", "*"), ("s", "g", "*"))
            >>> t = Taxonomy(HierarchyTable(rows))
            >>> t.label[t.centroid([t.leaf[v] for v in "pqrs"])]  # 4 x log2(4/3) < 3 x log2(3/2)
            'g'
            >>> t.label[t.centroid([t.leaf[v] for v in "pqr"])]
            'p'
        """
        sample = np.asarray(sample, dtype=np.int64)
        w = np.ones(len(sample)) if weights is None else np.asarray(weights, dtype=np.float64)
        cands = self.candidates(sample[w > 0])
        if allowed is not None:
            keep = np.asarray(allowed, dtype=bool).copy()
            keep[sample[w > 0]] = True
            cands = cands[keep[cands]]
        count = np.zeros(len(self))
        np.add.at(count, sample, w)
        if len(cands) * len(sample) > _DIRECT_PAIRS:
            m = self.marginality_all(count)[cands]
        else:
            m = self.marginality(cands, sample, w)
        return self.least_marginal(cands, m, count)

    def least_marginal(self, candidates: np.ndarray, m: np.ndarray, count: np.ndarray) -> int:
        """The candidate of least marginality ``m``, with :meth:`centroid`'s ties (``count``: the
        sample's weight on each concept)."""
        margin = TIE_TOLERANCE * max(1.0, float(m.min()))
        tied = candidates[m <= m.min() + margin]
        order = np.lexsort((tied, -self.depth[tied], -count[tied]))
        return int(tied[order[0]])

    def boundaries(self) -> tuple[int, int, float]:
        """Eq. 9.2 and 9.3 over the domain (the hierarchy's leaves): ``(a_b, a_t, δ(a_b, a_t))``.

        ``a_b`` is the most marginal leaf, ``a_t`` the leaf farthest from it; ties go to the first
        leaf of the hierarchy. ``δ(a_b, a_t)`` normalizes the attribute in eq. 9.7.
        """
        leaves = self.domain
        per_concept = np.zeros(len(self))
        per_concept[leaves] = 1.0
        a_b = int(leaves[first_best(self.marginality_all(per_concept)[leaves], largest=True)])
        a_t = int(leaves[first_best(self.distances(a_b, leaves), largest=True)])
        return a_b, a_t, self.distance(a_b, a_t)
