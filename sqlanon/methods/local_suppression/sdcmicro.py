"""sdcMicro's ``localSuppression`` (sdcMicro 5.x, ``suppSubset`` and ``cpp_calcSuppInds``), on the
frequency table.

1. Combinations with more than k rows count as k rows while the algorithm runs (sdcMicro drops the
   surplus rows of such keys and adds them back at the end).
2. A pass: the unsafe combinations (wildcard frequency < k) in ascending frequency (sdcMicro orders
   its records by decreasing individual risk, which is 1/f without sampling weights). For each: the
   rows at the smallest positive distance (the number of attributes where both are present and
   differ) are its candidates; the first attribute, least important first, where a candidate holds
   another present value is suppressed. Later combinations of the pass see the suppressions made.
3. Frequencies are computed again; passes repeat until every combination is safe (or, as can happen
   with ``alpha < 1``, a pass suppresses nothing).

sdcMicro decides per record; here the rows of one combination share a decision (its records are
interchangeable and would take the same attribute), and ties of the order are broken by the codes
instead of the row order.
"""

from __future__ import annotations

import numpy as np

from sqlanon.methods.local_suppression.combos import MISSING, Combos, Suppression, wildcard_frequencies


def default_order(combos: Combos) -> list[int]:
    """sdcMicro's default importance: attributes with more distinct values are suppressed first (ties:
    the later attribute first)."""
    distinct = [len(v) for v in combos.values]
    importance = sorted(range(combos.width), key=lambda j: distinct[j])  # stable: ascending, ties in order
    return list(reversed(importance))


def weighted_order(combos: Combos, weights: np.ndarray) -> list[int]:
    """Least important (lowest weight) first; ties as sdcMicro's default."""
    default = default_order(combos)
    return sorted(range(combos.width), key=lambda j: (weights[j], default.index(j)))


def sdcmicro(combos: Combos, k: int, order: list[int], alpha: float = 1.0, max_passes: int = 1000
             ) -> Suppression:
    codes = combos.codes.copy()
    counts = combos.counts.copy()
    complete = (codes != MISSING).all(axis=1)
    work = np.where(complete, np.minimum(counts, k), counts)
    for _ in range(max_passes):
        fk = wildcard_frequencies(codes, work, alpha)
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
    masks = (codes == MISSING) & (combos.codes != MISSING)
    return Suppression.per_combination(masks | (combos.codes == MISSING), counts)
