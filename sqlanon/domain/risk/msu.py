"""Minimal sample uniques (MSUs) over the distinct combinations of the quasi-identifiers.

A record is *unique* on a set S of QIs when no other record has its values on S; S is a *minimal*
sample unique when no proper subset of S is unique for the record (uniqueness only grows with S, so
checking the subsets one QI smaller suffices). Only records unique on all QIs have MSUs, and a
record's MSUs never use a QI where its value is missing: sdcMicro's SUDA2 makes no item of a missing
value, and a missing value matches only itself.

The search runs level by level over the QI subsets up to ``max_size`` (Apriori order: a subset is
visited only when every subset one QI smaller left some record without an MSU), on the table of
distinct combinations with their record counts, so a table of many repeated combinations is never
read row by row. A subset's combinations are numbered from its prefix's numbers and its last
QI's codes (the QIs taken by decreasing number of values, so that the numbers stay below a few
times the combinations and need no sort).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Msus:
    """Per distinct combination: its MSUs counted by size, and per QI the MSUs containing it."""

    by_size: np.ndarray
    """``(combinations, max_size + 1)``: column s counts the combination's MSUs of size s."""
    subsets: dict[tuple[int, ...], np.ndarray]
    """Each QI subset holding an MSU: the combinations for which it is one."""


def _dense(raw: np.ndarray, bound: int) -> np.ndarray:
    """``raw`` (values in [0, bound)) renumbered 0, 1, ... keeping equal values equal: by marking and
    a running count when ``bound`` is small against the rows (linear), else by sorting."""
    if bound <= 8 * len(raw) + 1024:
        present = np.zeros(bound, dtype=bool)
        present[raw] = True
        return (np.cumsum(present) - 1)[raw]
    return np.unique(raw, return_inverse=True)[1].reshape(-1)


def _keys(codes: np.ndarray, subset: tuple[int, ...], cache: dict[tuple[int, ...], np.ndarray]
          ) -> np.ndarray:
    """Dense numbers of the combinations' values on ``subset`` (equal values, equal numbers)."""
    if subset in cache:
        return cache[subset]
    last = codes[:, subset[-1]] + 1  # NULL (-1) is a value of its own
    if len(subset) == 1:
        keys = last
    else:
        prefix = _keys(codes, subset[:-1], cache)
        width = int(last.max()) + 1
        keys = _dense(prefix * width + last, (int(prefix.max()) + 1) * width)
    cache[subset] = keys
    return keys


def _extensions(live: dict[tuple[int, ...], np.ndarray], q: int, size: int) -> Iterator[tuple[int, ...]]:
    """The subsets of ``size`` QIs all of whose subsets one QI smaller are ``live`` (Apriori)."""
    if size == 1:
        yield from ((v,) for v in range(q))
        return
    by_prefix: dict[tuple[int, ...], list[int]] = {}
    for subset in sorted(live):
        by_prefix.setdefault(subset[:-1], []).append(subset[-1])
    for prefix, lasts in by_prefix.items():
        for i, a in enumerate(lasts):
            for b in lasts[i + 1:]:
                subset = (*prefix, a, b)
                if all(subset[:j] + subset[j + 1:] in live for j in range(size - 2)):
                    yield subset


def find_msus(codes: np.ndarray, count: np.ndarray, max_size: int) -> Msus:
    """The MSUs of size ≤ ``max_size`` of each combination (``codes``: -1 for missing values).

    A combination can have an MSU on S only if it is unique on all QIs, has values on S and is
    unique on no subset of S one QI smaller, so it is still *live* (not unique) on each of them: S
    is only counted for the combinations live on all its subsets, and not at all when there are
    none, which ends the search early."""
    n, q = codes.shape
    # QIs by decreasing number of values: a subset's last QI, which multiplies the numbers of its
    # prefix, is then its smallest, and the numbering stays linear
    order = np.argsort(-(codes.max(axis=0, initial=-1) + 2), kind="stable") if n else np.arange(q)
    codes = codes[:, order]
    by_size = np.zeros((n, max_size + 1), dtype=np.int64)
    found: dict[tuple[int, ...], np.ndarray] = {}
    present = codes >= 0
    cache: dict[tuple[int, ...], np.ndarray] = {}
    live: dict[tuple[int, ...], np.ndarray] = {(): count == 1}
    for size in range(1, max_size + 1):
        following: dict[tuple[int, ...], np.ndarray] = {}
        for subset in _extensions(live, q, size):
            candidates = present[:, list(subset)].all(axis=1)
            for i in range(size):
                candidates &= live[subset[:i] + subset[i + 1:]]
            if not candidates.any():
                continue
            keys = _keys(codes, subset, cache)
            alone = np.bincount(keys, weights=count)[keys] == 1
            msu = candidates & alone
            if msu.any():
                found[tuple(sorted(int(order[v]) for v in subset))] = np.flatnonzero(msu)
                by_size[msu, size] += 1
            if (rest := candidates & ~alone).any():
                following[subset] = rest
        live = following
        for key in [k for k in cache if len(k) < size]:
            del cache[key]
        if not live:
            break
    return Msus(by_size, found)
