"""The exact solver (``solver: exact``): the fewest suppressed cells (weighted by importance) that
make every row k-anonymous under the wildcard semantics, as a mixed-integer program solved by HiGHS
(:func:`scipy.optimize.milp`).

Variables, for every combination c and every pattern p of cells (a superset of c's missing cells):
``y[c,p]`` the rows of c released with p suppressed (integer), ``z[c,p]`` whether any is (binary).

* ``Σ_p y[c,p] = n_c``; ``y[c,p] ≤ n_c · z[c,p]``;
* a used (c,p) has k matching rows: ``Σ_{(c',q) matching (c,p)} a(q) · y[c',q] ≥ k · z[c,p]``, where
  ``a(q)`` is ``alpha`` for a pattern with a missing cell and 1 otherwise;
* minimise ``Σ y[c,p] · w(p minus c's missing cells)``.

(c,p) and (c',q) match when c and c' agree outside p ∪ q. The matching sums are shared through
auxiliary variables ``H[q,T,v] = Σ_{c' : c' = v outside T} y[c',q]`` for every T ⊇ q, so each
k-constraint has 2^d terms and the program has C·3^d non-zeros instead of (C·2^d)^2. Rows of one
combination may be split between patterns: the result is the optimum over decisions per row.
"""

from __future__ import annotations

import itertools

import numpy as np
from scipy.optimize import Bounds, LinearConstraint, milp
from scipy.sparse import coo_matrix

from sqlanon.methods.local_suppression.combos import MISSING, Combos, Suppression

MAX_EXACT_VARIABLES = 40_000
"""The exact solver is refused when combinations × 2^attributes exceeds this (about 200 distinct
combinations of 6 attributes, 2,500 of 4)."""
MAX_EXACT_WIDTH = 8


def exact_size(combos: Combos) -> int:
    return len(combos.counts) * (1 << combos.width)


class _Rows:
    """The constraint matrix, one row at a time."""

    def __init__(self) -> None:
        self.rows: list[int] = []
        self.cols: list[int] = []
        self.vals: list[float] = []
        self.lo: list[float] = []
        self.hi: list[float] = []

    def add(self, terms: dict[int, float], lo: float, hi: float) -> None:
        r = len(self.lo)
        for col, v in terms.items():
            self.rows.append(r)
            self.cols.append(col)
            self.vals.append(v)
        self.lo.append(lo)
        self.hi.append(hi)

    def constraint(self, n_vars: int) -> LinearConstraint:
        a = coo_matrix((self.vals, (self.rows, self.cols)), shape=(len(self.lo), n_vars)).tocsr()
        return LinearConstraint(a, self.lo, self.hi)


def solve(combos: Combos, k: int, weights: np.ndarray, time_limit: float = 60.0, alpha: float = 1.0
          ) -> Suppression:
    codes, counts = combos.codes, combos.counts
    C, d = codes.shape
    P = 1 << d
    own = ((codes == MISSING).astype(np.int64) << np.arange(d)).sum(axis=1)
    pattern_bits = ((np.arange(P)[:, None] >> np.arange(d)) & 1).astype(bool)
    pairs = [(c, p) for c in range(C) for p in range(P) if (p & own[c]) == own[c]]
    index = {cp: i for i, cp in enumerate(pairs)}
    m = len(pairs)

    def key(c: int, t: int) -> tuple[int, ...]:
        return tuple(int(x) for x in codes[c][~pattern_bits[t]])

    # auxiliary H[q, T, v] (variable 2m + its number): Σ y[c',q] over c' = v outside T ⊇ q
    aux: dict[tuple[int, int, tuple[int, ...]], int] = {}
    members: dict[int, dict[int, float]] = {}
    supersets = [[t for t in range(P) if (t & q) == q] for q in range(P)]
    for (c, q), i in index.items():
        for t in supersets[q]:
            hv = aux.setdefault((q, t, key(c, t)), 2 * m + len(aux))
            members.setdefault(hv, {hv: -1.0})[i] = 1.0
    rows = _Rows()
    for terms in members.values():
        rows.add(terms, 0.0, 0.0)
    for c in range(C):  # Σ_p y = n_c
        n = float(counts[c])
        rows.add({index[(c, p)]: 1.0 for p in range(P) if (c, p) in index}, n, n)
    for (c, p), i in index.items():
        rows.add({i: 1.0, m + i: -float(counts[c])}, -np.inf, 0.0)  # y ≤ n z
        matched: dict[int, float] = {m + i: -float(k)}  # Σ a(q) y[matching] ≥ k z
        for q in range(P):
            sums = aux.get((q, p | q, key(c, p | q)))
            if sums is not None:
                matched[sums] = matched.get(sums, 0.0) + (alpha if q else 1.0)
        rows.add(matched, 0.0, np.inf)
    n_vars = 2 * m + len(aux)
    cost = np.zeros(n_vars)
    upper = np.full(n_vars, np.inf)
    for (c, p), i in index.items():
        cost[i] = float(weights[pattern_bits[p & ~own[c]]].sum())
        upper[i] = float(counts[c])
    upper[m:2 * m] = 1.0
    integrality = np.zeros(n_vars)
    integrality[:2 * m] = 1
    res = milp(cost, constraints=rows.constraint(n_vars), integrality=integrality,
               bounds=Bounds(np.zeros(n_vars), upper),
               options={"time_limit": float(time_limit), "disp": False, "mip_rel_gap": 0.0})
    if res.status == 2:
        raise ValueError("no suppression makes every row k-anonymous (with alpha < 1, rows with "
                         "suppressed cells count less)")
    if res.x is None:
        raise TimeoutError(f"the exact solver found no solution within {time_limit:g} s ({res.message})")
    y = np.rint(res.x[:m]).astype(np.int64)
    used = np.flatnonzero(y > 0)
    combo = np.array([pairs[i][0] for i in used], dtype=np.int64)
    mask = np.array([pattern_bits[pairs[i][1]] for i in used], dtype=bool).reshape(len(used), d)
    return Suppression(combo, mask, y[used], optimal=res.status == 0, status=str(res.message))


def brute_force_optimum(combos: Combos, k: int, weights: np.ndarray, alpha: float = 1.0) -> float:
    """The optimum over decisions per combination by enumeration (tiny tables; tests' reference)."""
    from sqlanon.methods.local_suppression.combos import wildcard_frequencies

    C, d = combos.codes.shape
    best = np.inf
    for choice in itertools.product(range(1 << d), repeat=C):
        masks = np.array([[(p >> j) & 1 for j in range(d)] for p in choice], dtype=bool)
        codes = combos.codes.copy()
        codes[masks] = MISSING
        if wildcard_frequencies(codes, combos.counts, alpha).min() >= k - 1e-9:
            new = masks & (combos.codes != MISSING)
            best = min(best, float((new * combos.counts[:, None] * weights[None, :]).sum()))
    return best
