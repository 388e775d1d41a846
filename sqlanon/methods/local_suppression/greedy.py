"""The cheapest-pattern heuristic (``heuristic: pattern``; also what ``cover`` falls back to).

With ``alpha = 1`` suppressing a cell never lowers any row's wildcard frequency, so safe rows stay
safe and one pass suffices (with ``alpha < 1`` a suppressed row counts less for others, and passes
repeat while rows are unsafe and a pass changes something). The unsafe combinations are taken in
ascending frequency; each gets the cheapest set of its cells (by the sum of
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

from sqlanon.methods.local_suppression.combos import (
    MISSING,
    Combos,
    Suppression,
    weights_of,
    wildcard_frequencies,
)

ABANDON = 2.0
"""A donor run whose cells, before the give-back phase, cost more than this times the best result so
far is abandoned (on Adult the run without donors would fix thousands of combinations one by one)."""
MAX_PATTERN_WIDTH = 16
"""Up to this many attributes every pattern is considered (2^16 patterns per combination)."""


def _bits(width: int) -> np.ndarray:
    return np.int64(1) << np.arange(width, dtype=np.int64)


def _covered_counts(mismatch: np.ndarray, rows: np.ndarray, width: int) -> np.ndarray:
    """For every pattern p: the rows whose mismatch set is a subset of p."""
    f = np.bincount(mismatch, weights=rows, minlength=1 << width)
    for j in range(width):
        bit = 1 << j
        idx = np.arange(1 << width)
        has = (idx & bit) != 0
        f[has] += f[idx[has] ^ bit]
    return f


def _mismatch(codes: np.ndarray, row: np.ndarray) -> np.ndarray:
    differs = (codes != row) & (codes != MISSING) & (row != MISSING)
    return (differs.astype(np.int64) * _bits(codes.shape[1])).sum(axis=1)


def best_of_donors(combos: Combos, k: int, weights: np.ndarray, alpha: float = 1.0) -> Suppression:
    """The cheapest of :func:`cheapest_patterns` after m = k-1, ..., 0 *donor* rows: the least frequent
    unsafe combinations with every cell suppressed first (with ``alpha = 1`` a row of wildcards
    matches every row, so k-1 of them make the whole table k-anonymous); the give-back phase then
    restores the donors' cells that no row needs."""
    fk = wildcard_frequencies(combos.codes, combos.counts, alpha)
    unsafe = np.flatnonzero(fk < k)
    unsafe = unsafe[np.lexsort((fk[unsafe], combos.counts[unsafe]))]
    best: Suppression | None = None
    best_key = (np.inf, np.inf)
    for m in reversed(range(k if alpha > 0 else 1)):  # the most donors first: quick, and often best
        taken = np.cumsum(combos.counts[unsafe]) - combos.counts[unsafe] < m
        donors = unsafe[taken]
        if m and (len(donors) == 0 or combos.counts[donors].sum() < m):
            continue
        s = _patterns_or_none(combos, k, weights, donors, alpha,
                              ABANDON * best_key[1] if best is not None else None)
        if s is None:
            continue
        key = (-min(s.achieved_k(combos, alpha), k), s.cost(combos, weights))
        if key < best_key:
            best, best_key = s, key
    assert best is not None
    return best


def cheapest_patterns(combos: Combos, k: int, weights: np.ndarray, *, give_back: bool = True,
                      donors: np.ndarray | None = None, alpha: float = 1.0) -> Suppression:
    s = _patterns_or_none(combos, k, weights, donors, alpha, None, give_back=give_back)
    assert s is not None  # only a run with a cost limit gives up
    return s


def _patterns_or_none(combos: Combos, k: int, weights: np.ndarray, donors: np.ndarray | None,
                      alpha: float, give_up_above: float | None, *, give_back: bool = True,
                      max_passes: int = 50) -> Suppression | None:
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
    own_weight = np.where(patterns != 0, alpha, 1.0)
    spent = _cost(combos, codes, weights)
    for _ in range(max_passes):
        fk = wildcard_frequencies(codes, counts, alpha)
        unsafe = np.flatnonzero(fk < k)
        changed = False
        for i in unsafe[np.argsort(fk[unsafe], kind="stable")]:
            own = _bits(d)[codes[i] == MISSING].sum()
            w = weights_of(codes, counts, alpha)
            covered = _covered_counts(_mismatch(codes, codes[i]), w, d) - w[i] + counts[i] * own_weight
            ok = (covered >= k) & ((patterns & own) == own)
            if not ok.any():
                continue  # no pattern of its own makes it safe
            cost = np.where(ok, pattern_cost, np.inf)
            best = np.flatnonzero(cost == cost.min())
            p = best[np.argmax(covered[best])]
            changed |= bool(p != own)
            codes[i, pattern_bits[p]] = MISSING
            spent += counts[i] * (pattern_cost[p] - pattern_cost[own])
            if give_up_above is not None and spent > give_up_above:
                return None
        if not changed or alpha == 1:
            break
    if give_back:
        codes = restore_cells(combos, codes, k, weights, alpha)
    return Suppression.per_combination(codes == MISSING, counts.copy())


def _cost(combos: Combos, codes: np.ndarray, weights: np.ndarray) -> float:
    new = (codes == MISSING) & (combos.codes != MISSING)
    return float((new * combos.counts[:, None] * weights[None, :]).sum())


def restore_cells(combos: Combos, codes: np.ndarray, k: int, weights: np.ndarray, alpha: float = 1.0
                  ) -> np.ndarray:
    """Give back suppressed cells, most important first, while no row's frequency falls below k (or
    below what it was, for a row that is unsafe already)."""
    counts = combos.counts
    added = np.argwhere((codes == MISSING) & (combos.codes != MISSING))
    if len(added) == 0:
        return codes
    fk = wildcard_frequencies(codes, counts, alpha)
    w = weights_of(codes, counts, alpha)
    for i, j in sorted(added.tolist(), key=lambda c: (-weights[c[1]], c[0], c[1])):
        before = codes[i].copy()
        after = before.copy()
        after[j] = combos.codes[i, j]
        now_weight = counts[i] * (alpha if (after == MISSING).any() else 1.0)
        was = _matches(codes, before)
        now = _matches(codes, after)
        new = fk - w[i] * was + now_weight * now
        new[i] = float((w * now).sum() - w[i] * now[i] + now_weight)
        live = counts > 0
        if (new[live] < np.minimum(k, fk[live]) - 1e-9).any():
            continue
        codes[i] = after
        fk = new
        w[i] = now_weight
    return codes


def _matches(codes: np.ndarray, row: np.ndarray) -> np.ndarray:
    return ((codes == row) | (codes == MISSING) | (row == MISSING)).all(axis=1)
