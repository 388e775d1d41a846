"""V-MDAV: multivariate microaggregation with variable group size.

Solanas A, Martinez-Balleste A. V-MDAV: a multivariate microaggregation with variable group size.
Proc. 17th COMPSTAT Symposium of the IASC, Rome, 2006, 917-925 (also Domingo-Ferrer, Sanchez,
Soria-Comas, Database Anonymization, 2016, section 7.1, where it is named).

Each round builds one group and may grow it beyond ``k``:

1. ``e`` = the unassigned row farthest from the mean of the unassigned rows; the group is ``e`` and
   its ``k - 1`` nearest unassigned rows (as in MDAV);
2. extension: ``e_min`` = the unassigned row nearest to the group (distance to its nearest member,
   ``d_in``), and ``d_out`` = the distance from ``e_min`` to its nearest other unassigned row; while
   ``d_in < gamma * d_out`` and the group has fewer than ``2k - 1`` rows, ``e_min`` joins the group.
   A small gain factor suits scattered data (the authors suggest 0.2), a value near 1.1 clustered data.
3. when fewer than ``2k`` rows are left they form the last group.

Distances are Euclidean on the columns divided by their population standard deviation (sdcMicro's
MDAV scaling). One deviation from the paper keeps every group within ``k .. 2k - 1`` rows: a group
never grows so far that fewer than ``k`` rows would be left (the paper instead adds the last fewer
than ``k`` rows to their nearest groups, which may exceed ``2k - 1``). Ties go to the lower row number.
Cost: O(n^2 / k) distance evaluations, like a plain MDAV.
"""

from __future__ import annotations

import math

import numpy as np

from sqlanon.errors import SpecError
from sqlanon.methods.microaggregation.algorithms.mdav import Microaggregation, from_groups
from sqlanon.methods.microaggregation.distance.qi_space import sdc_weights
from sqlanon.methods.microaggregation.validate import as_matrix


def _squared(z: np.ndarray, q: np.ndarray) -> np.ndarray:
    diff = z - q
    return np.einsum("ij,ij->i", diff, diff)


def _grow(z: np.ndarray, group: list[int], unassigned: np.ndarray, limit: int, gamma: float) -> None:
    """Extend ``group`` in place with V-MDAV's rule; ``unassigned`` excludes the group's rows."""
    if len(group) >= limit or not len(unassigned):
        return
    to_group = np.min([_squared(z[unassigned], z[g]) for g in group], axis=0)
    while len(group) < limit and len(unassigned) > 1:
        j = int(np.argmin(to_group))
        e = int(unassigned[j])
        others = np.delete(unassigned, j)
        d_out = math.sqrt(float(_squared(z[others], z[e]).min()))
        if not math.sqrt(float(to_group[j])) < gamma * d_out:
            return
        group.append(e)
        unassigned = others
        to_group = np.minimum(np.delete(to_group, j), _squared(z[others], z[e]))


def vmdav_groups(x: np.ndarray, k: int, gamma: float = 0.2) -> list[np.ndarray]:
    """The V-MDAV groups in formation order.

    Args:
        x: ``(n, m)`` numeric data, no NaN.
        k: the minimum group size, ``1 <= k <= n``.
        gamma: the gain factor (>= 0); 0 gives groups of exactly ``k`` (except the last).

    Returns:
        One array of row numbers per group; each group has ``k .. 2k - 1`` rows (all rows when ``n < 2k``).

    Raises:
        SpecError: ``x``, ``k`` or ``gamma`` is invalid.
    """
    data = as_matrix(x, k, "vmdav")
    if isinstance(gamma, bool) or not isinstance(gamma, (int, float)) or not gamma >= 0 \
            or not math.isfinite(gamma):
        raise SpecError(f"gamma must be a finite number >= 0, got {gamma!r}", path="vmdav.gamma")
    z = data * np.sqrt(sdc_weights(data))
    unassigned = np.arange(len(z))
    groups: list[np.ndarray] = []
    while len(unassigned) >= 2 * k:
        pts = z[unassigned]
        e = int(unassigned[np.argmax(_squared(pts, pts.mean(axis=0)))])
        d = _squared(pts, z[e])
        nearest = np.lexsort((unassigned, d))[:k]
        group = [int(i) for i in unassigned[nearest]]
        unassigned = np.delete(unassigned, nearest)
        _grow(z, group, unassigned, min(2 * k - 1, len(unassigned) + len(group) - k), gamma)
        unassigned = np.setdiff1d(unassigned, group, assume_unique=True)
        groups.append(np.array(group, dtype=np.int64))
    if len(unassigned):
        groups.append(unassigned)
    return groups


def vmdav(x: np.ndarray, k: int, gamma: float = 0.2) -> np.ndarray:
    """Cluster id of every row under V-MDAV (groups numbered in formation order).

    >>> x = np.array([[0.0], [0.1], [0.2], [0.3], [9.0], [9.1], [9.2], [9.3]])
    >>> vmdav(x, 3, gamma=1.1).tolist()
    [0, 0, 0, 0, 1, 1, 1, 1]
    >>> vmdav(x, 3, gamma=0.0).tolist()
    [0, 0, 0, 1, 1, 1, 1, 1]
    """
    groups = vmdav_groups(x, k, gamma)
    labels = np.empty(sum(len(g) for g in groups), dtype=np.int64)
    for g, rows in enumerate(groups):
        labels[rows] = g
    return labels


def vmicroaggregate(x: np.ndarray, k: int, gamma: float = 0.2) -> Microaggregation:
    """V-MDAV groups and their means on the original scale."""
    data = as_matrix(x, k, "vmdav")
    return from_groups(data, vmdav_groups(data, k, gamma))
