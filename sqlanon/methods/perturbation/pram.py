"""PRAM, the post-randomization method (Gouweleeuw et al. 1998; seed 001 §4.3; sdcMicro ``pram``).

Each value of a categorical attribute is replaced by a draw from row k of a Markov matrix P,
p_kl = Pr(published l | true k). The published frequencies T* satisfy E[T*] = Pᵀ·T, so
T̂ = (Pᵀ)⁻¹·T* is an unbiased estimate of the true frequencies T. An *invariant* matrix has
Pᵀ·T = T: the published frequencies are then unbiased for T as they are.

Two constructions of an invariant matrix from the marginal T:

* sdcMicro's (:func:`invariant_matrix`): P has diagonal entries drawn uniformly from [pd, 1] and the
  rest of each row spread evenly; Q with q_kj = p_jk·t_j / Σ_i t_i·p_ik is its Bayesian reverse;
  R = P·Q is invariant, and α·R + (1 − α)·I is released (defaults pd = 0.8, α = 0.5).
* seed 001's (:func:`invariant_matrix_theta`): with m the rarest category,
  p_kk = 1 − θ·T_m/T_k and p_kl = θ·T_m/((K − 1)·T_k).

Both depend on the data's marginal, which the matrix therefore discloses.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from sqlanon.errors import SpecError


def check_matrix(matrix: Any, n_categories: int) -> np.ndarray:
    """A K × K transition matrix after checking it is square, non-negative, with rows summing to 1."""
    p = np.asarray(matrix, dtype=np.float64)
    if p.shape != (n_categories, n_categories):
        raise SpecError(f"must be {n_categories} x {n_categories} (one row and column per "
                        f"category), got shape {p.shape}", path="matrix")
    if not np.isfinite(p).all() or (p < 0).any():
        raise SpecError("entries must be finite probabilities >= 0", path="matrix")
    bad = np.flatnonzero(np.abs(p.sum(axis=1) - 1.0) > 1e-9)
    if bad.size:
        raise SpecError(f"row {int(bad[0]) + 1} sums to {p[bad[0]].sum():.12g}, not 1", path="matrix")
    return p


def category_codes(values: Any, categories: Sequence[Any]) -> np.ndarray:
    """Codes 0..K-1 of ``values`` in ``categories``; -1 for a missing value (None or NaN)."""
    lookup = {c: i for i, c in enumerate(categories)}
    if len(lookup) != len(categories):
        raise SpecError("categories must be distinct", path="categories")
    codes = np.empty(len(values), dtype=np.int64)
    unknown = 0
    for i, v in enumerate(values):
        if v is None or (isinstance(v, float) and v != v):
            codes[i] = -1
            continue
        code = lookup.get(v)
        if code is None:
            unknown += 1
            code = -1
        codes[i] = code
    if unknown:
        raise SpecError(f"{unknown} value(s) are not among the {len(categories)} categories",
                        path="categories")
    return codes


def pram_codes(codes: np.ndarray, matrix: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Published codes: each code k (≥ 0) replaced by a draw from row k; -1 (missing) kept."""
    cumulative = np.cumsum(matrix, axis=1)
    cumulative[:, -1] = 1.0
    out = codes.copy()
    u = rng.random(codes.size)
    for k in range(matrix.shape[0]):
        rows = np.flatnonzero(codes == k)
        if rows.size:
            out[rows] = np.searchsorted(cumulative[k], u[rows], side="right")
    return out


def pram(values: Any, categories: Sequence[Any], matrix: Any, rng: np.random.Generator) -> list[Any]:
    """``values`` post-randomized with the transition ``matrix`` (rows and columns in category order)."""
    cats = list(categories)
    p = check_matrix(matrix, len(cats))
    codes = pram_codes(category_codes(list(values), cats), p, rng)
    return [cats[c] if c >= 0 else None for c in codes.tolist()]


def estimate_frequencies(published_counts: Any, matrix: Any) -> np.ndarray:
    """The unbiased estimate T̂ = (Pᵀ)⁻¹·T* of the true category counts."""
    p = np.asarray(matrix, dtype=np.float64)
    counts = np.asarray(published_counts, dtype=np.float64)
    try:
        return np.linalg.solve(p.T, counts)
    except np.linalg.LinAlgError as err:
        raise SpecError("the transition matrix is singular: true frequencies cannot be estimated",
                        path="matrix") from err


def _frequencies(counts: Any) -> np.ndarray:
    t = np.asarray(counts, dtype=np.float64)
    if t.ndim != 1 or t.size < 2 or (t <= 0).any():
        raise SpecError("needs at least 2 categories, each present in the data", path="categories")
    return t / t.sum()


def invariant_matrix(counts: Any, rng: np.random.Generator, *, pd: float = 0.8,
                     alpha: float = 0.5) -> np.ndarray:
    """sdcMicro's invariant transition matrix for the marginal ``counts`` (see the module text)."""
    if not 0.0 <= pd <= 1.0:
        raise SpecError(f"must be a probability in [0, 1], got {pd!r}", path="pd")
    if not 0.0 <= alpha <= 1.0:
        raise SpecError(f"must lie in [0, 1], got {alpha!r}", path="alpha")
    t = _frequencies(counts)
    k = t.size
    diagonal = rng.uniform(pd, 1.0, size=k)
    p = np.repeat(((1.0 - diagonal) / (k - 1))[:, None], k, axis=1)
    np.fill_diagonal(p, diagonal)
    reach = t @ p                                  # s_l = Σ_i t_i p_il
    q = (p * t[:, None]).T / reach[:, None]        # q_lj = p_jl t_j / s_l
    r = p @ q
    return alpha * r + (1.0 - alpha) * np.eye(k)


def invariant_matrix_theta(counts: Any, theta: float) -> np.ndarray:
    """Seed 001's invariant matrix: p_kk = 1 − θT_m/T_k, p_kl = θT_m/((K−1)T_k), T_m the rarest."""
    if not 0.0 < theta <= 1.0:
        raise SpecError(f"must lie in (0, 1], got {theta!r}", path="theta")
    t = np.asarray(counts, dtype=np.float64)
    _frequencies(t)
    k = t.size
    off = theta * t.min() / ((k - 1) * t)
    p = np.repeat(off[:, None], k, axis=1)
    np.fill_diagonal(p, 1.0 - theta * t.min() / t)
    return p
