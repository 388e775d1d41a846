"""Minimal sample uniques (MSUs) over the distinct combinations of the quasi-identifiers.

A record is *unique* on a set S of QIs when no other record has its values on S; S is a *minimal*
sample unique when no proper subset of S is unique for the record (uniqueness only grows with S, so
checking the subsets one QI smaller suffices). Only records unique on all QIs have MSUs, and a
record's MSUs never use a QI where its value is missing: sdcMicro's SUDA2 makes no item of a missing
value, and a missing value matches only itself.

Both searches work on the table of distinct combinations with their record counts, so a table of
many repeated combinations is never read row by row. When most QI subsets are searched, the search
runs top-down (:mod:`sqlanon.domain.risk.msu_topdown`); otherwise it runs level by level over the QI
subsets up to ``max_size`` (Apriori order: a subset is visited only when every subset one QI smaller
left some record without an MSU), which stops at ``max_size``. There, a subset's combinations are
numbered from its prefix's numbers and its last QI's codes (the QIs taken by decreasing number of
values, so that the numbers stay below a few times the combinations and need no sort), and
renumbered densely only when they would outgrow that.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from math import comb

import numpy as np

from sqlanon.domain.risk.msu_topdown import find_msus_topdown, fits


@dataclass(frozen=True)
class Msus:
    """Per distinct combination: its MSUs counted by size, and per QI the MSUs containing it."""

    by_size: np.ndarray
    """``(combinations, max_size + 1)``: column s counts the combination's MSUs of size s."""
    subsets: dict[tuple[int, ...], np.ndarray]
    """Each QI subset holding an MSU: the combinations for which it is one."""


def _dense(raw: np.ndarray, bound: int) -> tuple[np.ndarray, int]:
    """``raw`` (values in [0, bound)) renumbered 0, 1, ... keeping equal values equal, and the new
    bound: by marking and a running count when ``bound`` is small against the rows (linear), else
    by sorting."""
    if bound <= 8 * len(raw) + 1024:
        present = np.zeros(bound, dtype=bool)
        present[raw] = True
        rank = np.cumsum(present) - 1
        return rank[raw], int(rank[-1]) + 1 if bound else 0
    distinct, inverse = np.unique(raw, return_inverse=True)
    return inverse.reshape(-1), len(distinct)


class _Keys:
    """Numbers of the combinations' values on QI subsets (equal values, equal numbers), each built
    from its prefix's numbers and its last QI's codes. They are renumbered densely only when their
    range would outgrow a few times the combinations: counting into an array that long is cheaper
    than renumbering. Only the numbers of the subsets still live are kept, one level at a time: the
    numbers of a level's subsets are built from the previous level's."""

    def __init__(self, columns: list[np.ndarray], widths: list[int], rows: int) -> None:
        self.columns, self.widths = columns, widths
        self.limit = 4 * rows + 1024
        self.cache: dict[tuple[int, ...], tuple[np.ndarray, int]] = {
            (v,): (c, w) for v, (c, w) in enumerate(zip(columns, widths))}

    def prepare(self, subsets: list[tuple[int, ...]]) -> None:
        """Renumber densely the prefixes of ``subsets`` whose numbers would outgrow the limit."""
        for head in {s[:-1] for s in subsets if len(s) > 1}:
            numbers, bound = self.cache[head]
            if bound <= len(numbers):  # dense already, or nearly
                continue
            widest = max(self.widths[s[-1]] for s in subsets if s[:-1] == head)
            if bound * widest > self.limit:
                self.cache[head] = _dense(numbers, bound)

    def __call__(self, subset: tuple[int, ...]) -> tuple[np.ndarray, int]:
        """The numbers on ``subset`` (its prefix's kept) and their bound (every number is below it)."""
        if len(subset) == 1:
            return self.cache[subset]
        prefix, bound = self.cache[subset[:-1]]
        width = self.widths[subset[-1]]
        entry = (prefix * width + self.columns[subset[-1]], bound * width)
        return _dense(*entry) if entry[1] > self.limit else entry

    def keep(self, subsets: dict[tuple[int, ...], tuple[np.ndarray, int]]) -> None:
        """Hold the numbers of the next level's prefixes, and only those."""
        self.cache = subsets


def extensions(live: Mapping[tuple[int, ...], object], q: int, size: int) -> Iterator[tuple[int, ...]]:
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

    Searched top-down (:mod:`sqlanon.domain.risk.msu_topdown`) when the subsets of up to
    ``max_size`` QIs are more than a quarter of all QI subsets and its numbers fit in 64 bits, else
    level by level from the single QIs (:func:`find_msus_levelwise`): the top-down search has to
    visit the subsets above ``max_size`` to know those below, while the level-wise one stops at
    ``max_size``."""
    n, q = codes.shape
    below = sum(comb(q, k) for k in range(1, max_size + 1))
    widths = (codes.max(axis=0, initial=-1) + 2).tolist()
    if 4 * below > 2 ** q and fits(widths, int((count == 1).sum())):
        return Msus(*find_msus_topdown(codes, count, max_size))
    return find_msus_levelwise(codes, count, max_size)


def find_msus_levelwise(codes: np.ndarray, count: np.ndarray, max_size: int) -> Msus:
    """The MSUs of size ≤ ``max_size`` of each combination, searched level by level.

    A combination can have an MSU on S only if it is unique on all QIs, has values on S and is
    unique on no subset of S one QI smaller, so it is still *live* (not unique) on each of them: S
    is only counted for the combinations live on all its subsets, and not at all when there are
    none, which ends the search early. A live combination occurs once (it is unique), so it is
    unique on S exactly when no other combination shares its numbers on S: the combinations are
    counted without their record counts, and only the live ones are looked up."""
    n, q = codes.shape
    # QIs by decreasing number of values: a subset's last QI, which multiplies the numbers of its
    # prefix, is then its smallest, and the numbering stays linear
    order = np.argsort(-(codes.max(axis=0, initial=-1) + 2), kind="stable") if n else np.arange(q)
    widths = [int(codes[:, v].max(initial=-1)) + 2 for v in order]  # NULL (-1) is a value, 0
    columns = [np.ascontiguousarray(codes[:, v] + 1, dtype=np.int64) for v in order]
    by_size = np.zeros((n, max_size + 1), dtype=np.int64)
    found: dict[tuple[int, ...], np.ndarray] = {}
    present: list[np.ndarray | None] = [c > 0 if (c == 0).any() else None for c in columns]
    keys = _Keys(columns, widths, n)
    live: dict[tuple[int, ...], np.ndarray] = {(): count == 1}

    def check(subset: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray, tuple[np.ndarray, int]] | None:
        """The candidates unique on ``subset``, the others and the numbers on it (None: no
        candidate). Reads only the previous level's live combinations and numbers."""
        candidates = live[subset[1:]].copy()
        for i in range(1, len(subset)):
            candidates &= live[subset[:i] + subset[i + 1:]]
        for v in subset:
            if (has := present[v]) is not None:
                candidates &= has
        rows = np.flatnonzero(candidates)
        if not len(rows):
            return None
        numbers, bound = entry = keys(subset)
        alone = np.bincount(numbers, minlength=bound)[numbers[rows]] == 1
        return rows[alone], rows[~alone], entry

    for size in range(1, max_size + 1):
        subsets = list(extensions(live, q, size))
        keys.prepare(subsets)
        following: dict[tuple[int, ...], np.ndarray] = {}
        numbered: dict[tuple[int, ...], tuple[np.ndarray, int]] = {}
        for subset in subsets:
            if (checked := check(subset)) is None:
                continue
            msu, rest, entry = checked
            if len(msu):
                found[tuple(sorted(int(order[v]) for v in subset))] = msu
                by_size[msu, size] += 1
            if len(rest):
                following[subset] = np.zeros(n, dtype=bool)
                following[subset][rest] = True
                numbered[subset] = entry
        live = following
        keys.keep(numbered)
        if not live:
            break
    return Msus(by_size, found)
