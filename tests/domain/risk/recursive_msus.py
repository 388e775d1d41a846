"""SUDA2's recursive search over sub-tables (Manning, Haglin & Keane), vectorized over the
distinct combinations: a second, independent search for the MSUs that
:func:`sqlanon.domain.risk.msu.find_msus` finds, to check it against on random tables.

The QI subsets form SUDA2's set-enumeration tree: the QIs are ranked (by decreasing number of
values) and a subset's children add one QI ranked after all of its own. A subset S splits the table
into *sub-tables*, the combinations sharing their values on S, and a child splits each of its
parent's sub-tables once more by the values of its added QI. As in SUDA2, a sub-table is searched
further only while it can still hold an MSU: it must contain a combination unique on all QIs that is
unique neither on S nor on any subset of S (a *live* one). A child S + b is a candidate MSU for a
live combination of S when the combination is also live on every other subset of S + b one QI
smaller (SUDA2's minimality check); it is an MSU when no other combination of its sub-table has its
value on b. The tree is walked level by level so that a level's sub-tables are split together.

It is not the library's search because it is never faster there: on Adult (grown to 1M rows,
216,390 combinations) the sub-tables still holding a live combination keep 90-100 % of the
combinations up to five QIs (subsets of low-cardinality QIs have few, large sub-tables), so the
sub-tables cost what the whole table costs, plus their bookkeeping.

Manning, Haglin & Keane, A recursive search algorithm for statistical disclosure assessment,
Data Min Knowl Disc 16, 2008.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sqlanon.domain.risk.msu import Msus, extensions


@dataclass(frozen=True)
class _SubTables:
    """A QI subset's sub-tables that still hold a live combination."""

    live: np.ndarray
    """The live combinations (sorted indices)."""
    where: np.ndarray
    """Each live combination's place in ``rows``."""
    rows: np.ndarray | None
    """The combinations of those sub-tables (sorted indices; None: all of them)."""
    group: np.ndarray
    """Each of ``rows``' sub-table, numbered below ``groups``."""
    groups: int


def _dense(raw: np.ndarray, bound: int) -> tuple[np.ndarray, int]:
    """``raw`` (values in [0, bound)) renumbered 0, 1, ... keeping equal values equal, and the new
    bound: by marking and a running count when ``bound`` is small against the rows, else by sorting."""
    if bound <= 8 * len(raw) + 1024:
        present = np.zeros(bound, dtype=bool)
        present[raw] = True
        rank = np.cumsum(present) - 1
        return rank[raw], int(rank[-1]) + 1 if bound else 0
    distinct, inverse = np.unique(raw, return_inverse=True)
    return inverse.reshape(-1), len(distinct)


def _split(parent: _SubTables, column: np.ndarray, width: int) -> tuple[np.ndarray, int]:
    """The parent's rows numbered by their sub-table and their value of ``column`` (equal pairs,
    equal numbers), and the bound of the numbers, kept within a few times the rows."""
    group, groups = parent.group, parent.groups
    if groups * width > 4 * len(group) + 1024:
        group, groups = _dense(group, groups)
    values = column if parent.rows is None else column[parent.rows]
    return group * width + values, groups * width


def find_msus_recursive(codes: np.ndarray, count: np.ndarray, max_size: int) -> Msus:
    """The MSUs of size ≤ ``max_size`` of each combination (``codes``: -1 for missing values),
    the same as :func:`sqlanon.domain.risk.msu.find_msus` finds."""
    n, q = codes.shape
    order = np.argsort(-(codes.max(axis=0, initial=-1) + 2), kind="stable") if n else np.arange(q)
    widths = [int(codes[:, v].max(initial=-1)) + 2 for v in order]  # NULL (-1) is a value, 0
    columns = [np.ascontiguousarray(codes[:, v] + 1, dtype=np.int64) for v in order]
    present = [c > 0 if (c == 0).any() else None for c in columns]
    by_size = np.zeros((n, max_size + 1), dtype=np.int64)
    found: dict[tuple[int, ...], np.ndarray] = {}
    scratch = np.zeros(n, dtype=bool)
    uniques = np.flatnonzero(count == 1)
    level: dict[tuple[int, ...], _SubTables] = {
        (): _SubTables(uniques, uniques, None, np.zeros(n, dtype=np.int64), 1)}
    for size in range(1, max_size + 1):
        following: dict[tuple[int, ...], _SubTables] = {}
        for subset in extensions(level, q, size):
            parent, added = level[subset[:-1]], subset[-1]
            candidates, where = parent.live, parent.where
            if (has := present[added]) is not None:
                keep = has[candidates]
                candidates, where = candidates[keep], where[keep]
            for i in range(size - 1):
                other = level[subset[:i] + subset[i + 1:]].live
                scratch[other] = True
                keep = scratch[candidates]
                scratch[other] = False
                candidates, where = candidates[keep], where[keep]
            if not len(candidates):
                continue
            numbers, bound = _split(parent, columns[added], widths[added])
            mine = numbers[where]
            alone = np.bincount(numbers, minlength=bound)[mine] == 1
            if alone.any():
                msu = candidates[alone]
                found[tuple(sorted(int(order[v]) for v in subset))] = msu
                by_size[msu, size] += 1
            if alone.all() or size == max_size:
                continue
            live, where = candidates[~alone], where[~alone]
            kept = np.zeros(bound, dtype=bool)
            kept[mine[~alone]] = True
            inside = kept[numbers]
            held = int(np.count_nonzero(inside))
            if 2 * held > len(numbers):  # most rows stay: keep them all, numbered as they are
                following[subset] = _SubTables(live, where, parent.rows, numbers, bound)
                continue
            rank = np.cumsum(kept) - 1
            rows = np.flatnonzero(inside) if parent.rows is None else parent.rows[inside]
            following[subset] = _SubTables(live, (np.cumsum(inside) - 1)[where], rows,
                                           rank[numbers[inside]], int(rank[-1]) + 1)
        level = following
        if not level:
            break
    return Msus(by_size, found)
