"""MDAV for mixed numeric, ordinal and nominal records (registered as ``mdav_mixed``).

Domingo-Ferrer J, Sanchez D, Soria-Comas J. Database Anonymization, Morgan & Claypool 2016,
section 3.2 (MDAV) with the categorical extensions of sections 9.4-9.6; Domingo-Ferrer J, Torra V.
Ordinal, continuous and heterogeneous k-anonymity through microaggregation, Data Mining and
Knowledge Discovery 11(2), 2005; Abril D, Navarro-Arribas G, Torra V. Towards semantic
microaggregation of categorical data for confidential documents, MDAI 2010.

The classic MDAV loop, on the distance of eq. 9.7
(:mod:`sqlanon.methods.microaggregation.distance.heterogeneous`):

* while at least ``2k`` rows are unassigned: the centroid of the unassigned rows is their mean on
  numeric and ordinal-rank columns and, per nominal attribute, the least marginal concept of eq.
  9.4 (the mode without a hierarchy); ``r`` = the unassigned row farthest from it; ``r`` and its
  ``k - 1`` nearest unassigned rows form a group; if at least ``3k`` rows were unassigned at the
  start of the round, ``s`` = the row farthest from ``r`` among those still unassigned, and ``s``
  with its ``k - 1`` nearest form another group (the book picks ``s`` before ``r``'s group is taken;
  the two agree unless ``s`` would be in that group, which only a tie at the largest distance
  allows);
* the rows left (``k .. 2k - 1``) form the last group;
* ties: the farthest row is the first in row order; among rows at the same distance the nearest are
  taken in row order; a group always contains the row it is built around.

Cost: O(n^2 / k) distance evaluations: each round computes distances from three points to all
unassigned rows, column by column, with nominal distances looked up per distinct value.

The pipeline replaces numeric values by group means, ordinal ones by the value of the group's lower
median rank (:func:`~sqlanon.methods.microaggregation.distance.categorical.ordinal_centroid`) and nominal ones
by :func:`~sqlanon.methods.microaggregation.distance.categorical.nominal_centroid`.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from sqlanon.errors import SpecError
from sqlanon.methods.microaggregation.algorithms.registry import ALGORITHMS
from sqlanon.methods.microaggregation.distance.heterogeneous import MixedRecords, Point
from sqlanon.methods.microaggregation.records import Records


def nearest(d: np.ndarray, k: int) -> np.ndarray:
    """Positions of the ``k`` smallest values of ``d``, ties taken in position order (O(n))."""
    if k >= len(d):
        return np.arange(len(d))
    kth = np.partition(d, k - 1)[k - 1]
    below = np.flatnonzero(d < kth)
    at = np.flatnonzero(d == kth)[: k - len(below)]
    return np.concatenate([below, at])


@ALGORITHMS.register("mdav_mixed", nominal=True)
def mdav_mixed(records: Records, k: int, *,
               bounds: Mapping[str, tuple[float, float]] | None = None) -> np.ndarray:
    """Group numbers of MDAV on mixed records (eq. 9.7 distance, eq. 9.4 centroids).

    Args:
        records: numeric and ordinal-rank columns in ``x``, nominal attributes in ``nominal``.
        k: the minimum group size.
        bounds: public domain bounds ``{attribute: (a_b, a_t)}`` of numeric and ordinal-rank
            columns (default: each column's minimum and maximum).

    Returns:
        ``(n,)`` int64 group numbers, in the order the groups were formed; every group has
        ``k .. 2k - 1`` rows (all rows form one group when ``n < 2k``).

    Raises:
        SpecError: ``k`` not an integer in ``1..n``, bad bounds, or bad data.
        HierarchyError: a nominal value missing from its hierarchy.
    """
    space = MixedRecords(records, bounds=bounds)
    n = space.n
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise SpecError(f"k must be an integer >= 1, got {k!r}", path="transformation.k")
    if k > n:
        raise SpecError(f"k = {k} is larger than the number of rows ({n})", path="transformation.k")
    return _Loop(space, int(k)).run()


class _Loop:
    """The unassigned rows, kept compact (column by column) as groups are taken."""

    def __init__(self, space: MixedRecords, k: int) -> None:
        self.space = space
        self.k = k
        self.rows = np.arange(space.n)
        self.columns = [c.copy() for c in space.columns]
        self.codes = [c.copy() for c in space.codes]
        self.counts = [np.bincount(c, minlength=len(s.column.values)).astype(np.float64)
                       for c, s in zip(space.codes, space.spaces)]
        # eq. 9.4 sums of the unassigned rows, kept up to date as groups leave (linear in the rows)
        self.marginalities = [None if s.taxonomy is None else s.marginalities(n)
                              for s, n in zip(space.spaces, self.counts)]
        self.labels = np.full(space.n, -1, dtype=np.int64)
        self.groups = 0

    def run(self) -> np.ndarray:
        k = self.k
        while len(self.rows) >= 2 * k:
            both = len(self.rows) >= 3 * k
            centre = self.space.centroid(self.columns, self.counts, self.marginalities)
            r = int(np.argmax(self.squared(centre)))
            from_r = self.around(r)
            if both:
                s = int(np.argmax(from_r))
                self.around(s)
        if len(self.rows):
            self.labels[self.rows] = self.groups
        return self.labels

    def squared(self, point: Point) -> np.ndarray:
        return self.space.squared(point, self.columns, self.codes)

    def around(self, position: int) -> np.ndarray:
        """Take the group of the unassigned row at ``position``; the distances from it to the rows
        still unassigned afterwards."""
        d = self.squared(self.space.point(int(self.rows[position])))
        d[position] = -1.0
        taken = nearest(d, self.k)
        self.labels[self.rows[taken]] = self.groups
        self.groups += 1
        keep = np.ones(len(self.rows), dtype=bool)
        keep[taken] = False
        for count, codes, space, m in zip(self.counts, self.codes, self.space.spaces,
                                          self.marginalities):
            count -= np.bincount(codes[taken], minlength=len(count))
            if m is not None:
                space.remove_rows(m, codes[taken])
        self.rows = self.rows[keep]
        self.columns = [c[keep] for c in self.columns]
        self.codes = [c[keep] for c in self.codes]
        return d[keep]
