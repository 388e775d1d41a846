"""sdcMicro's ``localSuppression`` (sdcMicro 5.x, ``suppSubset`` and ``cpp_calcSuppInds``), on the
frequency table.

1. Combinations with more than k rows count as k rows while the algorithm runs (sdcMicro drops the
   surplus rows of such keys and adds them back at the end).
2. A pass: the unsafe rows (wildcard frequency < k) in ascending frequency (sdcMicro orders its
   records by decreasing individual risk, which is 1/f without sampling weights). For each: the
   rows at the smallest positive distance (the number of attributes where both are present and
   differ) are its candidates; the first attribute, least important first, where a candidate holds
   another present value is suppressed. Later rows of the pass see the suppressions made.
3. Frequencies are computed again; passes repeat until every combination is safe (or, as can happen
   with ``alpha < 1``, a pass suppresses nothing).

Decisions are per row, as sdcMicro's: rows of one combination can lose different cells (a later
twin finds the earlier one at distance 0 and its candidates changed). The rows of the frequency
table are taken in the order of their values, so ties of the order are broken by the values instead
of the source's row order. On sdcMicro's ``testdata2`` (93 rows, 7 key variables, k = 2) this gives
the 97 new suppressions its own test suite expects.
"""

from __future__ import annotations

import numpy as np

from sqlanon.methods.local_suppression.combos import MISSING, Combos, Suppression, wildcard_frequencies


def default_order(combos: Combos) -> list[int]:
    """sdcMicro's default importance: attributes with more distinct values are suppressed first (ties:
    the later attribute first)."""
    return _by_distinct([len(v) for v in combos.values])


def _by_distinct(distinct: list[int]) -> list[int]:
    importance = sorted(range(len(distinct)), key=lambda j: distinct[j])  # stable: ascending, ties in order
    return list(reversed(importance))


def weighted_order(combos: Combos, weights: np.ndarray) -> list[int]:
    """Least important (lowest weight) first; ties as sdcMicro's default."""
    return importance_order([len(v) for v in combos.values], list(weights))


def importance_order(distinct: list[int], weights: list[float]) -> list[int]:
    """:func:`weighted_order` from each attribute's number of distinct values."""
    default = _by_distinct(distinct)
    return sorted(range(len(distinct)), key=lambda j: (weights[j], default.index(j)))


def sdcmicro(combos: Combos, k: int, order: list[int], alpha: float = 1.0, max_passes: int = 1000
             ) -> Suppression:
    counts = combos.counts
    complete = (combos.codes != MISSING).all(axis=1)
    work = np.where(complete, np.minimum(counts, k), counts)
    row_combo = np.repeat(np.arange(len(counts)), work)  # the rows, in the order of their values
    codes = combos.codes[row_combo].copy()
    ones = np.ones(len(row_combo))
    for _ in range(max_passes):
        fk = wildcard_frequencies(codes, ones, alpha)
        problem = np.flatnonzero(fk < k)
        if len(problem) == 0:
            break
        problem = problem[np.argsort(fk[problem], kind="stable")]
        changed = False
        for i in problem:
            row = codes[i]
            differs = (codes != row) & (codes != MISSING) & (row != MISSING)
            dist = differs.sum(axis=1)
            positive = dist[dist > 0]
            if len(positive) == 0:
                continue  # everything matches already (fewer than k rows in all)
            candidates = codes[dist == positive.min()]
            for j in order:
                if row[j] != MISSING and ((candidates[:, j] != row[j]) & (candidates[:, j] != MISSING)).any():
                    codes[i, j] = MISSING
                    changed = True
                    break
        if not changed:
            break  # nothing left to suppress that a candidate differs in
    return _units(combos, row_combo, codes == MISSING, counts - work)


def _units(combos: Combos, row_combo: np.ndarray, masks: np.ndarray, surplus: np.ndarray) -> Suppression:
    """The rows' decisions as units: rows of one combination with one mask; the surplus rows of
    combinations larger than k keep their values."""
    units: dict[tuple[int, bytes], int] = {}
    shapes: dict[tuple[int, bytes], np.ndarray] = {}
    for c, mask in zip(row_combo.tolist(), masks):
        key = (c, mask.tobytes())
        units[key] = units.get(key, 0) + 1
        shapes[key] = mask
    for c in np.flatnonzero(surplus):
        key = (int(c), (combos.codes[c] == MISSING).tobytes())
        units[key] = units.get(key, 0) + int(surplus[c])
        shapes[key] = combos.codes[c] == MISSING
    keys = list(units)
    d = combos.width
    return Suppression(np.array([c for c, _ in keys], dtype=np.int64),
                       np.array([shapes[key] for key in keys], dtype=bool).reshape(len(keys), d),
                       np.array([units[key] for key in keys], dtype=np.int64))
