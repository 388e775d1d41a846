"""Exact farthest-row queries for MDAV: rows sorted by their distance to a fixed reference point.

With ``rho(x)`` the scaled distance of row ``x`` to the reference ``c0``, the triangle inequality gives
``||x - q|| <= rho(x) + ||q - c0||``, so only a prefix of the rows sorted by decreasing ``rho`` can hold the
row farthest from ``q``. On that prefix the float64 distances come from one matrix-vector product
(``||x - q||^2 = rho^2 + ||q - c0||^2 - 2 (x - c0).(q - c0)``); only the rows within a relative margin of the
largest are evaluated exactly with sdcMicro's float32 formula (:func:`sdc_distance`). The prefix is
set by a lower bound of the largest distance, taken from the first 32 rows and then from 8 times as
many while the prefix is still more than 4 times longer than the rows looked at. The list is rebuilt
around the current mean when the mean has moved (long scans for it), and assigned rows are dropped
from it once they are an eighth of it.
"""

from __future__ import annotations

import math

import numpy as np

from sqlanon.methods.microaggregation.algorithms.nearest import sdc_distance

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
        self.scale2 = 2.0 * np.sqrt(w)
        self.center = center
        z = (x[rows] - center) * np.sqrt(w)
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
        self.candidates = np.empty(0, dtype=np.int64)

    def remove(self, rows: np.ndarray) -> None:
        """Mark original rows as assigned."""
        self.alive[self.position[rows]] = False
        self.dead += len(rows)
        while self.head < len(self.alive) and not self.alive[self.head]:
            self.head += 1

    def farthest(self, q: np.ndarray, exact: bool = True) -> tuple[int, float, float]:
        """The unassigned row farthest from ``q``; ties go to the smallest original row number.

        Args:
            q: the query point.
            exact: compute float32 distances even when a single row is within the margin of the
                largest distance (with ``False``, ``top`` is then a float64 value).

        Returns:
            ``(row, top, runner)``: the original row number, its distance, and the largest
            distance of any other unassigned row (exact if it is within a relative 1e-5 of ``top``,
            otherwise a value below ``top * (1 - 1e-5)``).
        """
        zq2 = (q - self.center) * self.scale2
        r2 = 0.25 * float(zq2 @ zq2)
        h = self.head
        slack = 1e-12 * (float(self.rho2[h]) + r2)
        best, stop, end = -np.inf, h, h + _FIRST
        while True:
            # a better lower bound of the largest distance from a longer head shortens the prefix
            chunk = slice(stop, min(end, len(self.alive)))
            part = (self.rho2[chunk] - self.z[chunk] @ zq2)[self.alive[chunk]]
            if len(part):
                best = max(best, float(part.max()) + r2)
            stop = chunk.stop
            limit = math.sqrt(max(best * (1.0 - _REL) - slack, 0.0)) - math.sqrt(r2)
            end = max(int(self.neg_rho.searchsorted(-limit, side="right")), stop)
            if end - h <= 4 * (stop - h):
                break
            end = h + 8 * (stop - h)
        alive = self.alive[h:end]
        part = np.where(alive, self.rho2[h:end] - self.z[h:end] @ zq2, -np.inf)
        self.scanned = end - h
        top = float(part.max()) + r2
        rows = self.rows[h:end][part >= top * (1.0 - _REL) - slack - r2]
        self.candidates = rows
        if len(rows) == 1 and not exact:
            return int(rows[0]), top, -np.inf
        d = sdc_distance(self.x[rows], q, self.w)
        top = d.max()
        runner = float(np.partition(d, -2)[-2]) if len(d) > 1 else -np.inf
        return int(rows[d == top].min()), float(top), runner

    def compact(self) -> None:
        """Drop assigned rows from the list once they are an eighth of it (order and reference kept)."""
        if 8 * self.dead <= len(self.alive):
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
