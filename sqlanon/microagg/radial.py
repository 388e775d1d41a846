"""Exact farthest-row queries for MDAV: rows sorted by their distance to a fixed reference point.

With ``rho(x)`` the scaled distance of row ``x`` to the reference ``c0``, the triangle inequality gives
``||x - q|| <= rho(x) + ||q - c0||``, so only a prefix of the rows sorted by decreasing ``rho`` can hold the
row farthest from ``q``. On that prefix the float64 distances come from one matrix-vector product
(``||x - q||^2 = rho^2 + ||q - c0||^2 - 2 (x - c0).(q - c0)``); only the rows within a relative margin of the
largest are evaluated exactly with sdcMicro's float32 formula (:func:`sdc_distance`). The list is
rebuilt around the current mean when assigned rows crowd its top.
"""

from __future__ import annotations

import math

import numpy as np

from sqlanon.microagg.nearest import sdc_distance

_REL = 1e-5
_FIRST = 32


class RadialList:
    """Unassigned rows sorted by decreasing distance to a reference point.

    Args:
        x: ``(n, m)`` float64 data (all original rows).
        w: ``(m,)`` positive column weights.
        rows: the unassigned original row numbers.
        center: the reference point (the mean of those rows).
    """

    def __init__(self, x: np.ndarray, w: np.ndarray, rows: np.ndarray, center: np.ndarray) -> None:
        self.x = x
        self.w = w
        self.scale = np.sqrt(w)
        self.center = center
        z = (x[rows] - center) * self.scale
        rho2 = np.einsum("ij,ij->i", z, z)
        order = np.argsort(-rho2, kind="stable")
        self.rows = rows[order]
        self.z = np.ascontiguousarray(z[order])
        self.rho2 = rho2[order]
        self.neg_rho = -np.sqrt(self.rho2)
        self.alive = np.ones(len(rows), dtype=bool)
        self.position = np.full(x.shape[0], -1, dtype=np.int64)
        self.position[self.rows] = np.arange(len(rows))
        self.head = 0
        self.dead = 0
        self.scanned = 0
        self.scanned_dead = 0

    def remove(self, rows: np.ndarray) -> None:
        """Mark original rows as assigned."""
        self.alive[self.position[rows]] = False
        self.dead += len(rows)
        while self.head < len(self.alive) and not self.alive[self.head]:
            self.head += 1

    def farthest(self, q: np.ndarray) -> tuple[int, float, float]:
        """The unassigned row farthest from ``q``; ties go to the smallest original row number.

        Returns:
            ``(row, top, runner)``: the original row number, its float32 distance, and the largest
            distance of any other unassigned row (exact if it is within a relative 1e-5 of ``top``,
            otherwise a value below ``top * (1 - 1e-5)``).
        """
        zq = (q - self.center) * self.scale
        r2 = float(zq @ zq)
        r = math.sqrt(r2)
        h = self.head
        block = slice(h, min(h + _FIRST, len(self.alive)))
        d = self.rho2[block] + r2 - 2.0 * (self.z[block] @ zq)
        best = float(d[self.alive[block]].max())
        slack = 1e-12 * (self.rho2[h] + r2)
        limit = math.sqrt(max(best * (1.0 - _REL) - slack, 0.0)) - r
        end = max(int(np.searchsorted(self.neg_rho, -limit, side="right")), block.stop)
        seg = slice(h, end)
        d = self.rho2[seg] + r2 - 2.0 * (self.z[seg] @ zq)
        alive = self.alive[seg]
        self.scanned = end - h
        self.scanned_dead = int(self.scanned - np.count_nonzero(alive))
        d[~alive] = -np.inf
        cand = np.flatnonzero(d >= d.max() * (1.0 - _REL) - slack) + h
        rows = self.rows[cand]
        exact = sdc_distance(self.x[rows], q, self.w)
        top = exact.max()
        runner = float(np.partition(exact, -2)[-2]) if len(exact) > 1 else -np.inf
        return int(rows[exact == top].min()), float(top), runner

    def compact(self) -> None:
        """Drop assigned rows from the list once they crowd the scanned prefix (order and reference kept)."""
        if 2 * self.scanned_dead <= max(self.scanned, 1024) and 4 * self.dead <= len(self.alive):
            return
        keep = np.flatnonzero(self.alive)
        self.rows = self.rows[keep]
        self.z = self.z[keep]
        self.rho2 = self.rho2[keep]
        self.neg_rho = self.neg_rho[keep]
        self.alive = np.ones(len(keep), dtype=bool)
        self.position[self.rows] = np.arange(len(keep))
        self.head = 0
        self.dead = 0
        self.scanned_dead = 0
