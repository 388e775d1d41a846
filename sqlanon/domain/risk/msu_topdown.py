"""Minimal sample uniques found top-down, from the set of every QI to the single QIs.

A combination unique on all QIs can be unique on a subset S only if it is unique on every superset
of S, so S is checked only for the combinations unique on each of its *parents* (S and one more
QI), and not at all when there are none. S is an MSU of a combination unique on S when it is unique
on none of S's children (S less one QI), which the next level down tells.

Each checked subset keeps its table of distinct values, built from its smallest parent's by
dropping one QI, so it never reads more rows than that parent has. A combination's values are packed
in one 64-bit number: each QI's codes in its own bits (the last QI's lowest), and below them a tag,
1 + the combination's place among the uniques, or 0 for a combination of several records. Dropping
a QI clears its bits; the table is sorted and equal numbers are merged, a merged number losing its
tag, so the tags left are the combinations unique on the subset. A parent's table with the dropped
QI in last place gives its child's table already sorted; otherwise numpy's stable sort orders it
again, running on the parent's sorted stretches. The tables shrink fast away from the top (on Adult
grown to 10M rows, 797,941 combinations on all 9 QIs, 4,509 on a median subset of 4), which is what
makes this search cheaper than counting every subset over all the combinations. The QIs' code bits
and the tag bits must fit in 63 (:func:`fits`).
"""

from __future__ import annotations

from itertools import combinations

import numpy as np


def fits(widths: list[int], uniques: int) -> bool:
    """Whether the packed numbers over QIs of ``widths`` values, with ``uniques`` tags, fit in int64."""
    return sum(int(w - 1).bit_length() for w in widths) + int(uniques).bit_length() < 63


def _dedupe(packed: np.ndarray, bits: int, uniques: int) -> tuple[np.ndarray, np.ndarray]:
    """The distinct numbers (``packed >> bits``) of sorted ``packed``, their tag cleared when they
    repeat; and which uniques are alone (tagged and not repeated)."""
    n, tag = len(packed), (1 << bits) - 1
    new = np.empty(n + 1, dtype=bool)
    new[0] = new[n] = True
    np.greater(packed[1:] ^ packed[:-1], tag, out=new[1:n])
    starts = np.flatnonzero(new)
    out = packed[starts[:-1]]
    tags = out & tag
    tags *= np.diff(starts) == 1
    out &= ~tag
    out |= tags
    alone = np.zeros(uniques + 1, dtype=bool)
    alone[tags] = True
    return out, alone[1:]


def find_msus_topdown(codes: np.ndarray, count: np.ndarray, max_size: int
                      ) -> tuple[np.ndarray, dict[tuple[int, ...], np.ndarray]]:
    """``(by_size, subsets)`` as :func:`sqlanon.domain.risk.msu.find_msus` returns them."""
    n, q = codes.shape
    by_size = np.zeros((n, max_size + 1), dtype=np.int64)
    found: dict[tuple[int, ...], np.ndarray] = {}
    uniques = np.flatnonzero(count == 1)
    if not len(uniques):
        return by_size, found
    widths = (codes.max(axis=0) + 2).tolist()  # NULL (-1) is a value, 0
    bits = int(len(uniques)).bit_length()
    missing = np.asfortranarray(codes[uniques] < 0)
    has_missing = [bool(missing[:, v].any()) for v in range(q)]
    full = tuple(range(q))
    fields, low = [0] * q, bits  # each QI's bits, the last QI's lowest, above the uniques' tags
    packed = np.zeros(n, dtype=np.int64)
    for v in reversed(full):
        width = int(widths[v] - 1).bit_length()
        fields[v] = ((1 << width) - 1) << low
        packed |= (codes[:, v].astype(np.int64) + 1) << low
        low += width
    packed[uniques] += np.arange(1, len(uniques) + 1)
    packed.sort()
    tables: dict[tuple[int, ...], np.ndarray] = {full: packed}
    unique_on: dict[tuple[int, ...], np.ndarray] = {full: np.ones(len(uniques), dtype=bool)}

    def settle(level: dict[tuple[int, ...], np.ndarray], below: dict[tuple[int, ...], np.ndarray]
               ) -> None:
        """Record the MSUs of ``level``'s subsets: unique there, on none of the children."""
        for subset, unique in level.items():
            if len(subset) > max_size:
                continue
            msu = unique.copy()
            for i in range(len(subset)):
                if (child := below.get(subset[:i] + subset[i + 1:])) is not None:
                    np.greater(msu, child, out=msu)
            for v in subset:
                if has_missing[v]:
                    np.greater(msu, missing[:, v], out=msu)
            rows = uniques[np.flatnonzero(msu)]
            if len(rows):
                found[subset] = rows
                by_size[rows, len(subset)] += 1

    for size in range(q - 1, 0, -1):
        next_tables: dict[tuple[int, ...], np.ndarray] = {}
        next_unique: dict[tuple[int, ...], np.ndarray] = {}
        for subset in combinations(range(q), size):
            parents = [(tuple(sorted((*subset, x))), x) for x in range(q) if x not in subset]
            if not all(p in unique_on for p, _ in parents):
                continue  # a parent without uniques: none is unique here either
            candidates = unique_on[parents[0][0]].copy()
            for p, _ in parents[1:]:
                candidates &= unique_on[p]
            if not candidates.any():
                continue
            table, unique = _derive(tables, parents, fields, bits, len(uniques))
            if unique.any():
                next_unique[subset] = unique
                next_tables[subset] = table
        settle(unique_on, next_unique)
        tables, unique_on = next_tables, next_unique
        if not unique_on:
            break
    settle(unique_on, {})
    return by_size, found


SORT_COST = 1.5
"""The cost of a table built by sorting again, against one that comes out of its parent sorted."""


def _derive(tables: dict[tuple[int, ...], np.ndarray], parents: list[tuple[tuple[int, ...], int]],
            fields: list[int], bits: int, uniques: int) -> tuple[np.ndarray, np.ndarray]:
    """The sorted table of a subset from its cheapest parent's, the parent's extra QI's bits
    cleared, and the uniques alone in it."""
    def cost(entry: tuple[tuple[int, ...], int]) -> float:
        p, x = entry
        return len(tables[p]) * (1.0 if x == p[-1] else SORT_COST)

    parent, x = min(parents, key=cost)
    child = tables[parent] & ~fields[x]
    if x != parent[-1]:
        child.sort(kind="stable")
    return _dedupe(child, bits, uniques)
