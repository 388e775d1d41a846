"""Exact nearest-row queries under sdcMicro's float32 MDAV distance, on a k-d tree.

The tree (``scipy.spatial.cKDTree`` on the columns centred and scaled by the square roots of the
weights, so that a large common offset costs no precision) holds the rows unassigned when it was
built; assigned rows are flagged and skipped, and the tree is rebuilt once half of its rows are
assigned. A query asks the tree for the ``kk`` nearest rows, keeps the
unassigned ones, and evaluates their exact float32 distances (:func:`sdc_distance`). The answer is
complete when the ``kk``-th distance the tree returned exceeds the ``k``-th exact distance by a
relative margin (far larger than float32 rounding) — every row the tree did not return is then
farther — otherwise ``kk`` doubles.
"""

from __future__ import annotations

import numpy as np
from scipy.spatial import cKDTree

_REL = 1e-5          # relative margin (a float32 distance is within (m + 1) * 2**-24 of the exact one)
_ABS = 1e-40         # absolute margin (float32 underflow of tiny squared differences)


def sdc_distance(points: np.ndarray, q: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Weighted squared distances exactly as sdcMicro's C++ ``Dist``: float32 sums of float32 terms.

    Each term ``(x_j - q_j)^2 * w_j`` is computed in float64 and rounded to float32; the terms are
    added in column order in float32 (``cumsum`` accumulates sequentially).

    Args:
        points: ``(c, m)`` float64 rows.
        q: the ``(m,)`` query point.
        w: the ``(m,)`` column weights.

    Returns:
        ``(c,)`` float32 distances.
    """
    diff = points - q
    diff *= diff
    diff *= w
    return np.cumsum(diff.astype(np.float32), axis=1)[:, -1]


class NearestIndex:
    """Unassigned rows in a k-d tree, for exact ``k``-nearest queries with sdcMicro's tie-breaking.

    Args:
        x: ``(n, m)`` float64 data (all original rows).
        w: ``(m,)`` positive column weights.
        rows: the original row numbers to index (ascending).
    """

    def __init__(self, x: np.ndarray, w: np.ndarray, rows: np.ndarray) -> None:
        self.x = x
        self.w = w
        self.scale = np.sqrt(w)
        self.shift = x[rows].mean(axis=0)
        self.rows = rows
        self.tree = cKDTree(self.scaled(x[rows]))
        self.alive = np.ones(len(rows), dtype=bool)
        self.position = np.full(x.shape[0], -1, dtype=np.int64)
        self.position[rows] = np.arange(len(rows))
        self.left = len(rows)

    def scaled(self, points: np.ndarray) -> np.ndarray:
        """Points in the tree's coordinates."""
        return (points - self.shift) * self.scale

    def remove(self, rows: np.ndarray) -> None:
        """Flag original rows as assigned."""
        self.alive[self.position[rows]] = False
        self.left -= len(rows)

    def stale(self) -> bool:
        """Whether at least half of the indexed rows are assigned (time to rebuild)."""
        return 2 * self.left < len(self.rows)

    def candidates(self, q: np.ndarray, kk: int) -> tuple[np.ndarray, float]:
        """The ``kk`` indexed rows nearest to ``q`` (assigned or not) and the ``kk``-th squared distance."""
        kk = min(kk, len(self.rows))
        dist, idx = self.tree.query(self.scaled(q), k=kk)
        dist, idx = np.atleast_1d(dist), np.atleast_1d(idx)
        return idx, np.inf if kk == len(self.rows) else float(dist[-1]) ** 2

    def select(self, q: np.ndarray, k: int, idx: np.ndarray, horizon: float) -> np.ndarray | None:
        """The ``k`` nearest unassigned rows among tree positions ``idx``, or None if that set may miss one.

        sdcMicro lists rows by float32 distance and, among equal distances, the row numbered last first.

        Args:
            q: the query point.
            k: how many rows.
            idx: tree positions returned for ``q``.
            horizon: every indexed row not in ``idx`` is at least this (squared, scaled) far from ``q``.

        Returns:
            Original row numbers in sdcMicro's order, or None.
        """
        idx = idx[self.alive[idx]]
        if len(idx) < k:
            return None
        rows = self.rows[idx]
        d = sdc_distance(self.x[rows], q, self.w)
        if float(np.partition(d, k - 1)[k - 1]) * (1.0 + _REL) + _ABS >= horizon:
            return None
        return rows[np.lexsort((-rows, d))[:k]]

    def nearest(self, q: np.ndarray, k: int, kk: int) -> np.ndarray:
        """The ``k`` nearest unassigned rows (original numbers, sdcMicro's order); asks ``kk`` first."""
        while True:
            idx, horizon = self.candidates(q, kk)
            found = self.select(q, k, idx, horizon)
            if found is not None:
                return found
            kk *= 2
