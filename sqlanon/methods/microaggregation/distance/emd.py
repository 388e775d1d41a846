"""Earth mover's distance of a cluster's confidential values to the whole table, in exact integers.

The distances are those of sqlanon's t-closeness checker (:mod:`sqlanon.domain.models.t_closeness`), so a
partition built here is verified by the checker:

* ``ordered``: values ranked 0..r-1 over the r distinct values of the table (NULL last), ground
  distance |i − j|/(r − 1), ``EMD = 1/(r−1) · Σ_{i<r−1} |F_C(i) − F_X(i)|`` with F the cumulative
  shares (Domingo-Ferrer, Sánchez, Soria-Comas, Database Anonymization, 2016, section 6.2, with the
  inner sum running over j ≤ i as corrected in erratum E1);
* ``equal``: every two distinct values at distance 1, ``EMD = ½ Σ_v |p_v − q_v|``;
* ``hierarchical``: :mod:`sqlanon.methods.microaggregation.distance.emd_hierarchical`.

For a cluster of m rows in a table of n rows, both are ratios of integers: the ordered one is
``Σ_i |j_i·n − m·G_i| / (m·n·(r−1))`` (j_i: cluster rows with rank ≤ i, G_i: table rows with rank ≤ i),
the equal one ``Σ_v |c_v·n − m·g_v| / (2·m·n)``. Numerators are kept as integers, so comparisons with
``t`` do not depend on rounding. The ordered numerator of a cluster is computed in O(m log r) from
prefix sums of G (F_C is a step function with m steps), never over all r values.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from sqlanon.errors import SpecError, did_you_mean
from sqlanon.methods.microaggregation.records import NominalColumn, Records

DISTANCES = ("ordered", "equal", "hierarchical")


def the_confidential_attribute(records: Records, attribute: object) -> str:
    """``attribute``, or when it is None the records' only confidential attribute.

    Raises:
        SpecError: None while the records hold no or several confidential attributes, or an
            attribute the records do not hold.
    """
    if attribute is not None:
        if not isinstance(attribute, str) or attribute not in records.sensitive:
            known = ", ".join(sorted(records.sensitive)) or "none"
            raise SpecError(f"confidential attribute {attribute!r} is not among the records' "
                            f"sensitive attributes ({known})"
                            + did_you_mean(str(attribute), records.sensitive),
                            path="transformation.attribute")
        return attribute
    if len(records.sensitive) == 1:
        return next(iter(records.sensitive))
    if not records.sensitive:
        raise SpecError("no confidential attribute: declare one attribute with role sensitive",
                        path="transformation.attribute")
    raise SpecError(f"several confidential attributes ({', '.join(sorted(records.sensitive))}); "
                    "name the one to protect with `attribute`", path="transformation.attribute")


def confidential_ranks(records: Records, attribute: object, distance: str,
                       order: Sequence[object] | None = None) -> tuple[np.ndarray, int]:
    """Dense ranks ``0..r-1`` of the confidential attribute per row, and r.

    ``attribute`` None means the records' only confidential attribute. Numeric values rank by
    value (NaN, i.e. NULL, last). Nominal ones rank by ``order`` (values lowest first, NULL last), or
    by value when every value is a number; with the ``equal`` distance any fixed order of the
    distinct values serves.

    Raises:
        SpecError: the attribute is missing, the distance is unknown, or the ordered distance has no
            order for a text attribute (or the order misses values).
    """
    if distance not in DISTANCES:
        raise SpecError(f"unknown distance {distance!r}; use one of {', '.join(DISTANCES)}."
                        + did_you_mean(str(distance), DISTANCES), path="transformation.distance")
    attribute = the_confidential_attribute(records, attribute)
    column = records.sensitive[attribute]
    if isinstance(column, NominalColumn):
        keys = _nominal_keys(column, attribute, distance, order)
        _, inverse = np.unique(keys[column.codes], return_inverse=True)
    else:
        values = np.asarray(column, dtype=np.float64)
        _, inverse = np.unique(values, return_inverse=True, equal_nan=True)
    ranks = inverse.reshape(-1).astype(np.int64)
    if len(ranks) != records.n:
        raise SpecError(f"confidential attribute {attribute!r} has {len(ranks)} values for "
                        f"{records.n} records", path="transformation.attribute")
    return ranks, int(ranks.max()) + 1 if len(ranks) else 0


def _nominal_keys(column: NominalColumn, attribute: str, distance: str,
                  order: Sequence[object] | None) -> np.ndarray:
    """A sort key per distinct value of a nominal column (NULL after every value)."""
    values = column.values
    if order is not None:
        position = {str(v): i for i, v in enumerate(order)}
        missing = [v for v in values if v is not None and str(v) not in position]
        if missing:
            raise SpecError(f"{len(missing)} value(s) of {attribute!r} are missing from `order`",
                            path="transformation.order")
        return np.array([len(position) if v is None else position[str(v)] for v in values],
                        dtype=np.int64)
    numbers = _as_numbers(values)
    if numbers is not None:
        return numbers
    if distance != "ordered":
        return np.arange(len(values), dtype=np.int64)
    raise SpecError(f"the ordered distance needs an order for text attribute {attribute!r}: pass "
                    "`order` (its values lowest first) or use distance `equal`",
                    path="transformation.order")


def _as_numbers(values: Sequence[Any]) -> np.ndarray | None:
    out = []
    for v in values:
        if v is None:
            out.append(np.inf)
            continue
        try:
            out.append(float(v))
        except (TypeError, ValueError):
            return None
    return np.array(out)


def threshold(t: float) -> Fraction:
    """``t`` as the decimal number it prints as (0.6 is 3/5, not the double just below it).

    An EMD equal to the t a user wrote is t-close, as the checker's EMD <= t (computed in doubles,
    with a slack of 1e-12) finds it.
    """
    return Fraction(repr(float(t)))


@dataclass
class ClusterEMD:
    """EMD of clusters (given as row numbers) to the table, for one confidential attribute."""

    ranks: np.ndarray
    """``(n,)`` int64 rank of each row's value."""
    r: int
    distance: str = "ordered"

    def __post_init__(self) -> None:
        self.ranks = np.asarray(self.ranks, dtype=np.int64)
        self.n = len(self.ranks)
        self.global_counts = np.bincount(self.ranks, minlength=self.r).astype(np.int64)
        # G_i for the boundaries i = 0..r-2 and its prefix sums P (P[0] = 0)
        self.cum = np.cumsum(self.global_counts)[:-1]
        self.prefix = np.concatenate([[0], np.cumsum(self.cum)]).astype(np.int64)

    def denominator(self, m: int) -> int:
        if self.distance == "equal":
            return 2 * m * self.n
        return m * self.n * max(self.r - 1, 1)

    def numerator(self, rows: np.ndarray) -> int:
        """The integer numerator of the EMD of the cluster holding ``rows``."""
        return self.numerator_of_ranks(self.ranks[np.asarray(rows, dtype=np.int64)])

    def numerator_of_ranks(self, ranks: np.ndarray) -> int:
        m = len(ranks)
        if m == 0 or self.r <= 1:
            return 0
        n = self.n
        if self.distance == "equal":
            values, counts = np.unique(ranks, return_counts=True)
            g = self.global_counts[values]
            inside = np.abs(counts * n - m * g).sum()
            return int(inside + m * (n - g.sum()))
        c = np.sort(ranks)
        # boundaries [lo_j, hi_j) where j cluster rows have rank <= i
        lo = np.concatenate([[0], c])
        hi = np.concatenate([c, [self.r - 1]])
        lo = np.minimum(lo, self.r - 1)
        j = np.arange(m + 1, dtype=np.int64)
        a = j * n
        # first boundary with m·G_i >= j·n, clipped to the interval
        split = np.searchsorted(self.cum, -(-a // m), side="left")
        split = np.clip(split, lo, np.maximum(hi, lo))
        hi = np.maximum(hi, lo)
        p = self.prefix
        below = a * (split - lo) - m * (p[split] - p[lo])
        above = m * (p[hi] - p[split]) - a * (hi - split)
        return int(below.sum() + above.sum())

    def emd(self, rows: np.ndarray) -> float:
        rows = np.asarray(rows, dtype=np.int64)
        if not len(rows):
            return 0.0
        return self.numerator(rows) / self.denominator(len(rows))

    def beyond(self, numerator: int, size: int, t: Fraction) -> bool:
        """Whether the EMD ``numerator / denominator(size)`` exceeds ``t``, exactly."""
        return numerator * t.denominator > t.numerator * self.denominator(size)

    def exceeds(self, rows: np.ndarray, t: float | Fraction) -> bool:
        """Whether EMD(rows) > t, exactly (t as :func:`threshold` reads it)."""
        rows = np.asarray(rows, dtype=np.int64)
        bound = t if isinstance(t, Fraction) else threshold(t)
        return self.beyond(self.numerator(rows), len(rows), bound)

    def swap_deltas(self, cluster: np.ndarray, candidates: np.ndarray) -> np.ndarray:
        """Numerator change of replacing each member of ``cluster`` by each candidate row.

        Returns a ``(len(candidates), len(cluster))`` int64 matrix: entry (a, b) is
        numerator(cluster − {cluster[b]} + {candidates[a]}) − numerator(cluster).
        """
        cr = self.ranks[cluster]
        yr = self.ranks[candidates]
        m, n = len(cluster), self.n
        if self.r <= 1:
            return np.zeros((len(candidates), m), dtype=np.int64)
        if self.distance == "equal":
            counts = np.bincount(cr, minlength=self.r).astype(np.int64)
            term = np.abs(counts * n - m * self.global_counts)
            gain = np.abs((counts + 1) * n - m * self.global_counts) - term
            loss = np.abs((counts - 1) * n - m * self.global_counts) - term
            delta = gain[yr][:, None] + loss[cr][None, :]
            return np.where(yr[:, None] == cr[None, :], 0, delta)
        # scaled gaps D_i = j_i·n − m·G_i on the boundaries; a swap moves j by ±1 on a range
        j = np.searchsorted(np.sort(cr), np.arange(self.r - 1), side="right")
        d = j * n - m * self.cum
        up = np.concatenate([[0], np.cumsum(np.abs(d + n) - np.abs(d))])
        down = np.concatenate([[0], np.cumsum(np.abs(d - n) - np.abs(d))])
        y, out = yr[:, None], cr[None, :]
        # y below the removed value: boundaries [y, out) gain a row; above: [out, y) lose one
        gained = up[np.maximum(out, y)] - up[y]
        lost = down[np.maximum(y, out)] - down[out]
        return np.where(y < out, gained, np.where(y > out, lost, 0))
