"""Randomized response over a fixed list of categories, and unbiased frequencies from its reports."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from sqlanon.errors import SpecError
from sqlanon.methods.dp.mechanisms.checks import check_epsilon
from sqlanon.methods.rng import make_rng


def rr_keep_probability(epsilon: float, n_categories: int) -> float:
    """The keep probability e^ε/(e^ε + K − 1) that makes K-ary randomized response ε-DP."""
    eps = check_epsilon(epsilon)
    return 1.0 / (1.0 + (n_categories - 1) * math.exp(-eps))


def rr_epsilon(keep_probability: float, n_categories: int) -> float:
    """The ε of K-ary randomized response with the given keep probability (∞ when p is 0 or 1)."""
    p = keep_probability
    if p >= 1.0 or p <= 0.0:
        return math.inf
    q = (1.0 - p) / (n_categories - 1)
    return abs(math.log(p / q))


def _rr_parameters(n_categories: int, epsilon: float | None,
                   keep_probability: float | None) -> float:
    if n_categories < 2:
        raise SpecError("randomized response needs at least 2 categories", path="categories")
    if (epsilon is None) == (keep_probability is None):
        raise SpecError("give exactly one of epsilon and keep_probability", path="epsilon")
    if epsilon is not None:
        return rr_keep_probability(epsilon, n_categories)
    p = keep_probability
    if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0.0 <= p <= 1.0:
        raise SpecError(f"must be a probability in [0, 1], got {p!r}", path="keep_probability")
    if abs(p - 1.0 / n_categories) < 1e-12:
        raise SpecError(f"1/K = {1.0 / n_categories:g} makes the answers independent of the truth "
                        "and the frequencies impossible to estimate", path="keep_probability")
    return float(p)


def _category_codes(values: Any, categories: Sequence[Any]) -> tuple[np.ndarray, np.ndarray]:
    cats = np.asarray(list(categories), dtype=object)
    if len(set(cats.tolist())) != cats.size:
        raise SpecError("categories must be distinct", path="categories")
    lookup = {c: i for i, c in enumerate(cats.tolist())}
    vals = np.asarray(values, dtype=object).ravel()
    codes = np.fromiter((lookup.get(v, -1) for v in vals.tolist()), dtype=np.int64,
                        count=vals.size)
    missing = int(np.count_nonzero(codes < 0))
    if missing:
        raise SpecError(f"{missing} value(s) are not among the {cats.size} categories",
                        path="values")
    return cats, codes


def randomized_response(values: Any, categories: Sequence[Any], epsilon: float | None = None,
                        rng: np.random.Generator | None = None, *,
                        keep_probability: float | None = None) -> np.ndarray:
    """K-ary randomized response (Warner 1965 for K = 2; seed 001 §4.3).

    Each value is kept with probability p and otherwise replaced by one of the other K − 1
    categories uniformly. With ``epsilon``, p = e^ε/(e^ε + K − 1) and each record's answer is ε-DP
    (local DP: the ratio p/q ≤ e^ε, q = (1−p)/(K−1)); with ``keep_probability`` the guarantee is
    :func:`rr_epsilon`. The categories are public and must not be derived from the data.
    Estimate the true frequencies with :func:`rr_frequencies`.

    Raises:
        SpecError: not exactly one of ε / keep_probability, fewer than 2 categories, or values
            outside the categories.
    """
    rng = make_rng() if rng is None else rng
    cats, codes = _category_codes(values, categories)
    p = _rr_parameters(cats.size, epsilon, keep_probability)
    change = rng.random(codes.size) >= p
    offset = rng.integers(1, cats.size, size=codes.size)
    out = np.where(change, (codes + offset) % cats.size, codes)
    return cats[out].reshape(np.shape(values))


def rr_frequencies(reported: Any, categories: Sequence[Any], *, epsilon: float | None = None,
                   keep_probability: float | None = None) -> np.ndarray:
    """Unbiased estimates of the true category proportions from randomized responses.

    E[f̂_j] = q + (p − q)·π_j, so π̂_j = (f̂_j − q)/(p − q) is unbiased (Warner's estimator for
    K = 2, seed 001 §4.3). Estimates may fall outside [0, 1]; they sum to 1.
    """
    cats, codes = _category_codes(reported, categories)
    p = _rr_parameters(cats.size, epsilon, keep_probability)
    q = (1.0 - p) / (cats.size - 1)
    observed = np.bincount(codes, minlength=cats.size) / max(codes.size, 1)
    return (observed - q) / (p - q)
