"""The ``rounds`` heuristic: sdcMicro's rule applied to every unsafe combination at once.

sdcMicro's ``localSuppression`` (:mod:`.sdcmicro`) fixes the unsafe rows one after the other, each
seeing the suppressions of the rows before it, so no set-based statement can reproduce it. This
heuristic keeps its rule and drops the order: in every round, each unsafe combination (wildcard
frequency below k) of the current release finds the combinations at the smallest positive distance
(attributes where both have a value and differ) and suppresses the first attribute, least important
first, where one of them holds another value; all choices are made on the release as the round
found it and applied together. Rounds repeat until no unsafe combination has a cell to suppress.
With ``alpha = 1`` every unsafe combination loses a cell per round, and a combination without
values matches every row, so at most d + 1 rounds run.

This is the in-memory form; :mod:`.rounds_sql` runs the same rounds as SQL on the engine over the
frequency table, and both give the same cells (tests compare them).
"""

from __future__ import annotations

import numpy as np

from sqlanon.methods.local_suppression.combos import MISSING, Combos, Suppression, wildcard_frequencies

TOLERANCE = 1e-9
"""A frequency counts as below k when it is below k - TOLERANCE (sums of ``alpha`` in any order)."""


BLOCK_CELLS = 4_000_000
"""Unsafe combinations × combinations compared at once."""


def choices(current: np.ndarray, rows: np.ndarray, k: int, order: list[int], alpha: float
            ) -> np.ndarray:
    """(U,) per distinct current combination: the attribute it loses this round, -1 for none."""
    fk = wildcard_frequencies(current, rows, alpha)
    out = np.full(len(current), -1, dtype=np.int64)
    present = current != MISSING
    unsafe = np.flatnonzero(fk < k - TOLERANCE)
    rank = np.empty(current.shape[1], dtype=np.int64)
    rank[list(order)] = np.arange(len(order))
    block = max(1, BLOCK_CELLS // max(1, len(current)))
    for lo in range(0, len(unsafe), block):
        us = unsafe[lo:lo + block]
        d = current.shape[1]
        differs = [(current[us, j][:, None] != current[None, :, j]) & present[us, j][:, None]
                   & present[None, :, j] for j in range(d)]  # d × (b, C)
        dist = np.zeros(differs[0].shape, dtype=np.int16)
        for x in differs:
            dist += x
        nearest = np.where(dist > 0, dist, d + 1).min(axis=1)
        at = dist == nearest[:, None]
        near = np.stack([(x & at).any(axis=1) for x in differs], axis=1)  # (b, d)
        has = near.any(axis=1)
        first = np.argmin(np.where(near, rank[None, :], len(rank)), axis=1)
        out[us[has]] = first[has]
    return out


def bound(width: int, combinations: int) -> int:
    """Rounds never needed: every round but the last suppresses a cell."""
    return width * combinations + 1


def rounds(combos: Combos, k: int, order: list[int], alpha: float = 1.0, max_rounds: int | None = None
           ) -> Suppression:
    codes = combos.codes.copy()
    counts = combos.counts
    for _ in range(max_rounds if max_rounds is not None else bound(combos.width, len(codes))):
        if len(codes) == 0:
            break
        current, inverse = np.unique(codes, axis=0, return_inverse=True)
        inverse = inverse.reshape(-1)
        rows = np.bincount(inverse, weights=counts, minlength=len(current))
        chosen = choices(current, rows, k, order, alpha)[inverse]
        hit = np.flatnonzero(chosen >= 0)
        if len(hit) == 0:
            break
        codes[hit, chosen[hit]] = MISSING
    return Suppression.per_combination(codes == MISSING, counts.copy())
