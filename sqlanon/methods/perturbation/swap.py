"""Rank swapping restricted to p % (Greenberg; seed 000 §3.2, Algorithm 1; sdcMicro ``rankSwap(P = p)``).

Per attribute, independently: sort the non-missing values (ties in row order); take the lowest
unswapped rank i, choose uniformly an unswapped rank j in [i + 1, M] with M = min(N, i + ⌊p·N/100⌋),
and exchange the two values. A rank with no unswapped partner left in its window keeps its value
(the book leaves this case open). Other attributes of each record stay in place, so each column keeps
its multiset of values. sdcMicro's top/bottom grouping (TopPercent, BottomPercent) and its K0/R0
parameterisations are not reproduced.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from sqlanon.errors import SpecError


def check_percent(p: Any) -> float:
    if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0 < p <= 100:
        raise SpecError(f"must be a percentage in (0, 100], got {p!r}", path="p")
    return float(p)


class _Unswapped:
    """A Fenwick tree over ranks 0..n-1 counting the ranks still unswapped."""

    def __init__(self, n: int) -> None:
        self.n = n
        tree = [0] * (n + 1)
        for i in range(1, n + 1):
            tree[i] += 1
            parent = i + (i & -i)
            if parent <= n:
                tree[parent] += tree[i]
        self.tree = tree
        self.top = 1 << (n.bit_length() - 1) if n else 0

    def remove(self, rank: int) -> None:
        i, n, tree = rank + 1, self.n, self.tree
        while i <= n:
            tree[i] -= 1
            i += i & -i

    def before(self, rank: int) -> int:
        """How many unswapped ranks are < ``rank``."""
        i, total, tree = rank, 0, self.tree
        while i > 0:
            total += tree[i]
            i -= i & -i
        return total

    def kth(self, k: int) -> int:
        """The rank of the k-th unswapped rank (1-based)."""
        pos, step, tree, n = 0, self.top, self.tree, self.n
        while step:
            nxt = pos + step
            if nxt <= n and tree[nxt] < k:
                pos = nxt
                k -= tree[nxt]
            step >>= 1
        return pos


def rank_swap_column(values: Any, p: float, rng: np.random.Generator) -> np.ndarray:
    """One column rank-swapped within p % of the ranks; NaN stays in place and is not swapped."""
    pct = check_percent(p)
    x = np.asarray(values, dtype=np.float64)
    present = np.flatnonzero(~np.isnan(x))
    order = present[np.argsort(x[present], kind="stable")]
    n = order.size
    window = int(pct * n // 100)
    partner = np.arange(n)
    if n > 1 and window > 0:
        free = _Unswapped(n)
        draws = rng.random(n).tolist()
        is_free = [True] * n
        for i in range(n):
            if not is_free[i]:
                continue
            is_free[i] = False
            free.remove(i)
            last = min(n - 1, i + window)
            first_after = free.before(i + 1)
            available = free.before(last + 1) - first_after
            if available == 0:
                continue
            j = free.kth(first_after + 1 + int(draws[i] * available))
            is_free[j] = False
            free.remove(j)
            partner[i], partner[j] = j, i
    out = x.copy()
    out[order] = x[order[partner]]
    return out


def rank_swap(x: Any, p: float, rng: np.random.Generator) -> np.ndarray:
    """Every column of ``x`` (n × m) rank-swapped independently within p % of the ranks."""
    data = np.asarray(x, dtype=np.float64)
    if data.ndim == 1:
        return rank_swap_column(data, p, rng)
    return np.column_stack([rank_swap_column(data[:, j], p, rng) for j in range(data.shape[1])])
