"""MDAV microaggregation with the exact semantics of sdcMicro 5.8.1 (``microaggregation(method = "mdav")``).

Domingo-Ferrer J, Torra V. Ordinal, continuous and heterogeneous k-anonymity through microaggregation.
Data Mining and Knowledge Discovery 11(2), 195-212, 2005; Domingo-Ferrer J, Sanchez D, Soria-Comas J.
Database Anonymization, Morgan & Claypool 2016, section 3.2 (MDAV); Templ M, Meindl B, Kowarik A.
Statistical Disclosure Control for Micro-Data Using the R Package sdcMicro, Journal of Statistical
Software 67(4), 2015.

The algorithm, as sdcMicro's C++ ``Mdav`` runs it:

* every column is weighted by 1 / its population variance (``sum(x^2)/n - mean^2``, sums taken in row
  order; weight 1 for a column with zero variance);
* distances are weighted squared Euclidean distances stored as float32 (each term rounded to float32,
  terms added in float32, column by column);
* while at least ``2k`` rows are unassigned: ``r`` = the row farthest from the mean of the unassigned
  rows (the mean is a row-order sum divided by the count); the group of ``r`` is the ``k`` unassigned rows
  nearest to ``r``; if at least ``3k`` rows were unassigned at the start of the round, ``s`` = the row
  farthest from ``r`` (found before ``r``'s group is removed) and its group is the ``k`` rows nearest to
  ``s`` among those still unassigned;
* the rows left (``k .. 2k-1`` of them) form the last group;
* ties: the farthest row is the first in row order; among rows at the same distance, the nearest rows
  are taken from the last in row order (sdcMicro's hash list inserts equal distances in front);
* every value is replaced by its group's mean on the original scale.

sdcMicro encodes a missing value as -999 inside its C++ code, so a genuine -999 is treated as missing
there; here every value is a value, and NaN is refused.

The search is exact but fast. Farthest rows come from a list sorted by distance to a reference point
(:mod:`sqlanon.methods.microaggregation.algorithms.radial`, triangle bound), nearest rows from a k-d tree that
skips assigned rows (:mod:`sqlanon.methods.microaggregation.algorithms.nearest`); both evaluate sdcMicro's
float32 distance for every row that a float64 bound, widened by a relative 1e-5, cannot rule out. The mean of
the unassigned rows is kept as a running sum; when two candidate rows are so close that its rounding could
change the answer, the mean is recomputed in sdcMicro's order (unless every float32 term of the close
candidates is provably the same for both means). A row with ``k`` unassigned exact copies gets them as its
group directly. Cost per round: one matrix-vector product on a prefix of the sorted list and two k-d tree
queries, instead of four passes over all unassigned rows.

Use from a database: pull the quasi-identifier columns once into an ``(n, m)`` float64 array in a
fixed row order (``ORDER BY`` a key; sdcMicro breaks ties by row order), together with the key; call
:func:`mdav` (cluster ids) or :func:`microaggregate` (cluster ids and group means, ``.masked`` per
row); then write ``(key, cluster id)`` or the masked values back in one statement (for example a
join of the table with an Arrow or DuckDB relation holding ``key, cluster`` or ``key, means``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sqlanon.methods.microaggregation.algorithms.nearest import NearestIndex
from sqlanon.methods.microaggregation.algorithms.radial import RadialList
from sqlanon.methods.microaggregation.distance.qi_space import sdc_weights
from sqlanon.methods.microaggregation.validate import as_matrix

_U = 2.0 ** -53


@dataclass(frozen=True)
class Microaggregation:
    """The result of a microaggregation.

    Attributes:
        labels: ``(n,)`` int64 group number of each row (groups numbered in the order they were formed).
        means: ``(g, m)`` float64 group means on the original scale.
    """

    labels: np.ndarray
    means: np.ndarray

    @property
    def masked(self) -> np.ndarray:
        """``(n, m)``: every row replaced by its group's mean."""
        return self.means[self.labels]

    @property
    def sizes(self) -> np.ndarray:
        """``(g,)`` number of rows of each group."""
        return np.bincount(self.labels, minlength=len(self.means))

    def sse(self, x: np.ndarray) -> float:
        """Sum over rows and columns of ``(x - masked)^2`` on the original scale."""
        diff = np.asarray(x, dtype=np.float64) - self.masked
        return float(np.sum(diff * diff))


class _Remaining:
    """The unassigned rows: a running sum, a radial list (farthest rows) and a k-d tree (nearest rows)."""

    def __init__(self, x: np.ndarray, w: np.ndarray, k: int) -> None:
        self.x = x
        self.w = w
        self.k = k
        n = x.shape[0]
        self.left = n
        self.alive = np.ones(n, dtype=bool)
        self.total = np.cumsum(x, axis=0)[-1]
        # |running sum - row-order sum| <= 4 n u sum|x| per column; its effect on a distance:
        self.error = 4.0 * n * _U * np.abs(x).sum(axis=0)
        reach = x.max(axis=0) - x.min(axis=0)
        self.slack = (2.0 * float(np.sum(w * reach * self.error)), float(np.sum(w * self.error ** 2)))
        rows = np.arange(n)
        self.near = NearestIndex(x, w, rows)
        self.radial = RadialList(x, w, rows, self.total / n)
        self.center_scan = 0
        self._copies(x, w, k)

    def _copies(self, x: np.ndarray, w: np.ndarray, k: int) -> None:
        """Index identical rows when there are many: a query row with ``k`` unassigned copies has them
        as its group (distance 0, the last rows first) without a tree query.

        Valid only when two different rows can never be at float32 distance 0, i.e. the smallest
        difference between two values of a column, squared and weighted, does not underflow.
        """
        self.copies = None
        values, ids, counts = np.unique(x, axis=0, return_inverse=True, return_counts=True)
        if counts.max() < 2 * k:
            return
        for j in range(x.shape[1]):
            gaps = np.diff(np.unique(values[:, j]))
            if len(gaps) and float(gaps.min()) ** 2 * w[j] < 2.0 ** -120:
                return
        ids = ids.ravel()
        self.copies = np.lexsort((-np.arange(len(ids)), ids))
        self.copy_class = ids
        self.copy_start = np.concatenate([[0], np.cumsum(counts)[:-1]])
        self.copy_head = self.copy_start.copy()
        self.copy_end = np.cumsum(counts)

    def _copies_of(self, row: int) -> np.ndarray | None:
        """The ``k`` unassigned copies of ``row`` with the largest row numbers, if it has ``k``."""
        if self.copies is None:
            return None
        c = self.copy_class[row]
        head, end = int(self.copy_head[c]), int(self.copy_end[c])
        while head < end and not self.alive[self.copies[head]]:
            head += 1
        self.copy_head[c] = head
        rows = self.copies[head:end]
        rows = rows[self.alive[rows]][: self.k]
        return rows if len(rows) == self.k else None

    def remove(self, rows: np.ndarray) -> None:
        self.alive[rows] = False
        self.left -= len(rows)
        self.total = self.total - self.x[rows].sum(0)
        self.near.remove(rows)
        self.radial.remove(rows)

    def refresh(self) -> None:
        """Rebuild the structures that assigned rows have made slow."""
        if self.near.stale() and self.left >= 2 * self.k:
            self.near = NearestIndex(self.x, self.w, np.flatnonzero(self.alive))
        if self.center_scan > 512:
            self.radial = RadialList(self.x, self.w, np.flatnonzero(self.alive), self.total / self.left)
            self.center_scan = 0
        else:
            self.radial.compact()

    def exact_mean(self) -> np.ndarray:
        """The mean of the unassigned rows as sdcMicro computes it (sum in row order)."""
        return np.cumsum(self.x[self.alive], axis=0)[-1] / self.left

    def farthest_from_mean(self) -> int:
        """sdcMicro's ``r``: exact, with the row-order mean only when the running one could differ."""
        center = self.total / self.left
        row, top, runner = self.radial.farthest(center, exact=False)
        self.center_scan = self.radial.scanned
        slack = self.slack[0] / self.left + self.slack[1] / self.left ** 2
        runner = max(runner, top * (1.0 - 0.9e-5))
        if top - runner > 2.0 * slack + (self.x.shape[1] + 2) * 2.0 ** -21 * top:
            return row
        # rows outside the candidates stay below them when the mean's error moves them by < 2.5e-6 top
        if slack < 2.5e-6 * top and self._same_float32(center, self.radial.candidates):
            return row
        return self.radial.farthest(self.exact_mean())[0]

    def _same_float32(self, center: np.ndarray, rows: np.ndarray) -> bool:
        """Whether every float32 term of the rows' distances is the same for any mean within the
        running sum's error bound (then so are the distances and the farthest row)."""
        delta = self.error / self.left
        diff = self.x[rows] - center
        terms = diff * diff * self.w
        spread = self.w * (2.0 * np.abs(diff) * delta + delta * delta) + 8.0 * _U * terms
        return np.array_equal((terms - spread).astype(np.float32), (terms + spread).astype(np.float32))

    def nearest_pair(self, r: int, s: int | None) -> list[np.ndarray]:
        """The group of ``r`` and then, if ``s`` is given, the group of ``s`` among the rows left."""
        k = self.k
        queries = [r] if s is None else [r, s]
        group = self._copies_of(r)
        if group is not None:
            self.remove(group)
            if s is None:
                return [group]
            return [group, *self.nearest_pair(s, None)]
        kk = 4 * k + 4
        scaled = self.near.scaled(self.x[queries])
        kq = min(kk, len(self.near.rows))
        dist, idx = self.near.tree.query(scaled, k=kq)
        dist, idx = dist.reshape(len(queries), -1), idx.reshape(len(queries), -1)
        groups = []
        for i, row in enumerate(queries):
            q = self.x[row]
            horizon = np.inf if kq == len(self.near.rows) else float(dist[i, -1]) ** 2
            group = self.near.select(q, k, idx[i], horizon)
            if group is None:
                group = self.near.nearest(q, k, 2 * kk)
            groups.append(group)
            self.remove(group)
        return groups


def mdav_groups(x: np.ndarray, k: int) -> list[np.ndarray]:
    """The MDAV groups in the order sdcMicro forms them.

    Args:
        x: ``(n, m)`` numeric data, no NaN.
        k: the minimum group size, ``1 <= k <= n``.

    Returns:
        One array of row numbers per group; each group's rows are listed in sdcMicro's hash order
        (the last group in row order), which is the order its mean is summed in.

    Raises:
        SpecError: ``k`` or ``x`` is invalid.
    """
    x = as_matrix(x, k, "mdav")
    rest = _Remaining(x, sdc_weights(x), k)
    groups: list[np.ndarray] = []
    while rest.left >= 2 * k:
        r = rest.farthest_from_mean()
        s = rest.radial.farthest(x[r], exact=False)[0] if rest.left >= 3 * k else None
        groups.extend(rest.nearest_pair(r, s))
        rest.refresh()
    if rest.left:
        groups.append(np.flatnonzero(rest.alive))
    return groups


def microaggregate(x: np.ndarray, k: int) -> Microaggregation:
    """MDAV groups and their means (sdcMicro's masked values).

    Args:
        x: ``(n, m)`` numeric data, no NaN.
        k: the minimum group size, ``1 <= k <= n``.

    Returns:
        Labels per row and group means on the original scale.
    """
    data = as_matrix(x, k, "mdav")
    groups = mdav_groups(data, k)
    return from_groups(data, groups)


def from_groups(x: np.ndarray, groups: list[np.ndarray]) -> Microaggregation:
    """Labels and means of given groups, each mean summed in the group's listed order."""
    order = np.concatenate(groups)
    sizes = np.array([len(g) for g in groups])
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    labels = np.empty(x.shape[0], dtype=np.int64)
    labels[order] = np.repeat(np.arange(len(groups)), sizes)
    means = np.add.reduceat(x[order], starts, axis=0) / sizes[:, None]
    return Microaggregation(labels=labels, means=means)


def mdav(x: np.ndarray, k: int) -> np.ndarray:
    """Cluster id of every row under sdcMicro's MDAV.

    Args:
        x: ``(n, m)`` numeric data (rows = records, columns = quasi-identifiers), no NaN.
        k: the minimum group size, ``1 <= k <= n``.

    Returns:
        ``(n,)`` int64 group numbers, ``0 .. g-1`` in the order the groups were formed; every group has
        ``k`` rows except the last, which has ``k .. 2k-1`` (all ``n`` rows when ``n < 2k``).

    >>> mdav(np.array([[0.0], [1.0], [10.0], [11.0], [12.0]]), 2).tolist()
    [0, 0, 1, 1, 1]
    """
    groups = mdav_groups(x, k)
    labels = np.empty(sum(len(g) for g in groups), dtype=np.int64)
    for g, rows in enumerate(groups):
        labels[rows] = g
    return labels
