"""The cheapest-pattern heuristic (``heuristic: pattern``, the default).

Suppressing a cell never lowers any row's wildcard frequency, so safe rows stay safe. The unsafe
combinations are taken in ascending frequency; each gets the cheapest set of its cells (by the sum of
the attributes' importance; among equally cheap sets, the one matching most rows) that makes it safe
against the rows as released so far. The frequency of every pattern of one combination is read at
once: each unit's mismatch with the combination is a bit set, and a pattern's frequency is the sum
over the mismatch sets it covers (a subset-sum transform over the 2^d patterns).

A second phase gives back cells: every suppressed cell, most important first, is restored when every
row stays safe without it (the first phase may have suppressed a cell that a later suppression made
unnecessary).
"""

from __future__ import annotations

import numpy as np

from sqlanon.methods.local_suppression.combos import MISSING, Combos, Suppression, wildcard_frequencies

MAX_PATTERN_WIDTH = 16
"""Up to this many attributes every pattern is considered (2^16 patterns per combination)."""


def _bits(width: int) -> np.ndarray:
    return np.int64(1) << np.arange(width, dtype=np.int64)


def _covered_counts(mismatch: np.ndarray, rows: np.ndarray, width: int) -> np.ndarray:
    """For every pattern p: the rows whose mismatch set is a subset of p."""
    f = np.bincount(mismatch, weights=rows, minlength=1 << width).astype(np.int64)
    for j in range(width):
        bit = 1 << j
        idx = np.arange(1 << width)
        has = (idx & bit) != 0
        f[has] += f[idx[has] ^ bit]
    return f


def _mismatch(codes: np.ndarray, row: np.ndarray) -> np.ndarray:
    differs = (codes != row) & (codes != MISSING) & (row != MISSING)
    return (differs.astype(np.int64) * _bits(codes.shape[1])).sum(axis=1)


def best_of_donors(combos: Combos, k: int, weights: np.ndarray) -> Suppression:
    """The cheapest of :func:`cheapest_patterns` after m = 0 .. k-1 *donor* rows: the least frequent
    unsafe combinations with every cell suppressed first (a row of wildcards matches every row, so
    k-1 of them make the whole table k-anonymous); the give-back phase then restores the donors'
    cells that no row needs."""
    fk = wildcard_frequencies(combos.codes, combos.counts)
    unsafe = np.flatnonzero(fk < k)
    unsafe = unsafe[np.lexsort((fk[unsafe], combos.counts[unsafe]))]
    best: Suppression | None = None
    best_cost = np.inf
    for m in range(k):
        taken = np.cumsum(combos.counts[unsafe]) - combos.counts[unsafe] < m
        donors = unsafe[taken]
        if m and (len(donors) == 0 or combos.counts[donors].sum() < m):
            break
        s = cheapest_patterns(combos, k, weights, donors=donors)
        cost = s.cost(combos, weights)
        if cost < best_cost:
            best, best_cost = s, cost
    assert best is not None
    return best


def cheapest_patterns(combos: Combos, k: int, weights: np.ndarray, *, give_back: bool = True,
                      donors: np.ndarray | None = None) -> Suppression:
    d = combos.width
    if d > MAX_PATTERN_WIDTH:
        raise ValueError(f"the pattern heuristic handles up to {MAX_PATTERN_WIDTH} attributes")
    counts = combos.counts
    codes = combos.codes.copy()
    if donors is not None and len(donors):
        codes[donors] = MISSING
    patterns = np.arange(1 << d)
    pattern_bits = ((patterns[:, None] >> np.arange(d)) & 1).astype(bool)
    pattern_cost = pattern_bits.astype(float) @ weights
    fk = wildcard_frequencies(codes, counts)
    for i in np.flatnonzero(fk < k)[np.argsort(fk[fk < k], kind="stable")]:
        own = _bits(d)[codes[i] == MISSING].sum()
        covered = _covered_counts(_mismatch(codes, codes[i]), counts, d)
        ok = (covered >= k) & ((patterns & own) == own)
        if not ok.any():
            continue  # fewer than k rows in all
        cost = np.where(ok, pattern_cost, np.inf)
        best = np.flatnonzero(cost == cost.min())
        p = best[np.argmax(covered[best])]
        codes[i, pattern_bits[p]] = MISSING
    if give_back:
        codes = restore_cells(combos, codes, k, weights)
    return Suppression.per_combination(codes == MISSING, counts.copy())


def restore_cells(combos: Combos, codes: np.ndarray, k: int, weights: np.ndarray) -> np.ndarray:
    counts = combos.counts
    added = np.argwhere((codes == MISSING) & (combos.codes != MISSING))
    if len(added) == 0:
        return codes
    fk = wildcard_frequencies(codes, counts)
    for i, j in sorted(added.tolist(), key=lambda c: (-weights[c[1]], c[0], c[1])):
        before = codes[i].copy()
        after = before.copy()
        after[j] = combos.codes[i, j]
        was = _matches(codes, before)
        now = _matches(codes, after)
        now[i] = True
        lost = was & ~now
        own = int(counts[now].sum())
        if own < k or (lost.any() and (fk[lost] - counts[i] < k).any()):
            continue
        codes[i] = after
        fk = fk - np.where(lost, counts[i], 0)
        fk[i] = own
    return codes


def _matches(codes: np.ndarray, row: np.ndarray) -> np.ndarray:
    return ((codes == row) | (codes == MISSING) | (row == MISSING)).all(axis=1)


def check(combos: Combos, s: Suppression, k: int) -> bool:
    return s.achieved_k(combos) >= min(k, combos.rows)
