"""The row-cover heuristic: single rows as partial wildcards, chosen by deficit covered per cost.

Every row r with wildcard frequency f(r) < k lacks ``k - f(r)`` matches; the deficit is their sum.
Moving *one* row of a unit (rows published alike) to a pattern p of suppressed cells makes it match
every row that agrees with it outside p: each unsafe row it newly matches lacks one match less, and
the moved row's own deficit changes with its new frequency. Repeatedly the move with the largest
deficit reduction per unit of cost (the importance of the cells it suppresses) is made, until no row
is unsafe; then cells no row needs are given back
(:func:`~sqlanon.methods.local_suppression.greedy.restore_cells`).

The gains of all patterns of one unit come from one subset-sum transform over the mismatch sets, so
one step costs units² · d. With ``alpha < 1`` a move can lower other rows' frequencies and the
cover can get stuck short of k; the caller then also runs the cheapest-pattern heuristic
(:func:`~sqlanon.methods.local_suppression.solve.suppress`), which also does when the cover runs
out of :data:`WORK_BUDGET`; on frequency tables too large for :data:`MIN_STEPS` steps within it
(Adult's 6,072 combinations of 5 attributes) only the pattern heuristic runs.
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

WORK_BUDGET = 3e8
"""The cover stops after this many cell comparisons (steps × units² × d) and the caller falls back
(about 1,900 steps on 200 combinations of 4 attributes)."""
MIN_STEPS = 50
"""The cover is not tried when its budget allows fewer steps (above about 1,100 combinations of 5
attributes): ``heuristic: cover`` then runs the cheapest-pattern heuristic."""


def affordable(units: int, width: int) -> bool:
    return units <= largest(width)


def largest(width: int) -> int:
    """The most combinations of ``width`` attributes the cover is tried on."""
    return int((WORK_BUDGET / (MIN_STEPS * max(1, width))) ** 0.5)


def _subset_sums(values: np.ndarray, masks: np.ndarray, width: int) -> np.ndarray:
    """(P,) for every pattern p: the sum of ``values`` whose mask is a subset of p."""
    f = np.bincount(masks, weights=values, minlength=1 << width)
    idx = np.arange(1 << width)
    for j in range(width):
        has = (idx >> j) & 1 == 1
        f[has] += f[idx[has] ^ (1 << j)]
    return f


CHUNK_CELLS = 4_000_000
"""Units × units × d compared at once (memory of one block of candidate moves)."""


def _best_move(codes: np.ndarray, rows: np.ndarray, fk: np.ndarray, deficit: np.ndarray, k: int,
               alpha: float, pattern_cost: np.ndarray) -> tuple[int, int]:
    """The move (unit, pattern) with the largest deficit reduction per cost; (-1, -1) if none lowers
    the deficit. Candidates are scored in blocks of units, all their patterns at once."""
    n, d = codes.shape
    size = 1 << d
    patterns = np.arange(size)
    bits = np.int64(1) << np.arange(d, dtype=np.int64)
    missing = (codes == MISSING)
    per_row = np.where(missing.any(axis=1), alpha, 1.0)
    w = weights_of(codes, rows, alpha)
    live = rows > 0
    helped = np.where(live, rows * (deficit - np.maximum(0.0, deficit - alpha)), 0.0)
    # a row of a unit without missing cells leaves the rows matching it: their frequency drops 1 - alpha
    dropped = np.where(live, deficit - np.maximum(0.0, k - fk - (alpha - 1.0)), 0.0)
    own_bits = (missing.astype(np.int64) * bits).sum(axis=1)
    best, best_c, best_p = 1e-9, -1, -1
    block = max(1, CHUNK_CELLS // max(1, n * d))
    candidates = np.flatnonzero(live)
    for lo in range(0, len(candidates), block):
        cs = candidates[lo:lo + block]
        b = len(cs)
        present = ~missing[cs][:, None, :] & ~missing[None, :, :]
        differs = (codes[cs][:, None, :] != codes[None, :, :]) & present
        mm = (differs.astype(np.int64) * bits).sum(axis=2)  # (b, n)
        other = (mm != 0) & live[None, :]
        flat = (np.arange(b)[:, None] * size + mm)[other]
        gains = np.bincount(flat, weights=np.broadcast_to(helped, mm.shape)[other], minlength=b * size)
        weight = np.bincount(flat, weights=np.broadcast_to(w, mm.shape)[other], minlength=b * size)
        gains, weight = gains.reshape(b, size), weight.reshape(b, size)
        for j in range(d):
            has = (patterns >> j) & 1 == 1
            gains[:, has] += gains[:, patterns[has] ^ (1 << j)]
            weight[:, has] += weight[:, patterns[has] ^ (1 << j)]
        complete = per_row[cs] == 1.0
        zero = (mm == 0) & live[None, :]
        base = np.where(complete, (zero * (rows * dropped)[None, :]).sum(axis=1) - dropped[cs], 0.0)
        shift = alpha - per_row[cs]
        moved_fk = (fk[cs] + shift)[:, None] + weight
        gain = base[:, None] + gains + deficit[cs][:, None] - np.maximum(0.0, k - moved_fk)
        own = own_bits[cs]
        valid = ((patterns[None, :] & own[:, None]) == own[:, None]) & (patterns[None, :] != own[:, None])
        cost = pattern_cost[None, :] - pattern_cost[own][:, None]
        score = np.where(valid & (gain > 1e-9), gain / np.where(cost > 0, cost, np.inf), 0.0)
        i = int(np.argmax(score))
        if score.flat[i] > best:
            best, best_c, best_p = float(score.flat[i]), int(cs[i // size]), i % size
    return best_c, best_p


def row_cover(combos: Combos, k: int, weights: np.ndarray, alpha: float = 1.0,
              max_steps: int | None = None) -> Suppression:
    from sqlanon.methods.local_suppression.greedy import restore_cells

    d = combos.width
    origin = list(range(len(combos.counts)))
    codes = combos.codes.copy()
    rows = combos.counts.astype(np.int64).copy()
    patterns = np.arange(1 << d)
    pattern_bits = ((patterns[:, None] >> np.arange(d)) & 1).astype(bool)
    pattern_cost = pattern_bits.astype(float) @ weights
    fk = wildcard_frequencies(codes, rows, alpha)
    if max_steps is None:
        max_steps = max(1, int(WORK_BUDGET / (max(1, len(rows)) ** 2 * d)))
    for _ in range(max_steps):
        deficit = np.maximum(0.0, k - fk) * (rows > 0)
        if not (deficit > 1e-9).any():
            break
        c, p = _best_move(codes, rows, fk, deficit, k, alpha, pattern_cost)
        if c < 0:
            break  # no move lowers the deficit
        moved = codes[c].copy()
        moved[pattern_bits[p]] = MISSING
        same = np.flatnonzero((codes == moved).all(axis=1) & (np.array(origin) == origin[c]))
        rows[c] -= 1
        if len(same):
            rows[same[0]] += 1
        else:
            codes = np.vstack([codes, moved])
            rows = np.append(rows, 1)
            origin.append(origin[c])
        live = rows > 0
        fk = np.zeros(len(rows))
        fk[live] = wildcard_frequencies(codes[live], rows[live], alpha)
    live = rows > 0
    units = Combos(combos.codes[np.array(origin)][live], rows[live], combos.values)
    kept = restore_cells(units, codes[live], k, weights, alpha)
    return Suppression(np.array(origin)[live], kept == MISSING, rows[live].copy())
