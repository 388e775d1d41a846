"""The exponential mechanism: one candidate chosen with probability growing with its score."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from sqlanon.errors import SpecError
from sqlanon.methods.dp.mechanisms.checks import check_epsilon, float_values, positive


def exponential(candidates: Sequence[Any] | np.ndarray, scores: Any, sensitivity: float, epsilon: float,
                rng: np.random.Generator) -> Any:
    """ε-DP exponential mechanism (seed 000 Defs 8.19–8.20, Thm 8.21; erratum E14).

    Chooses candidate r with probability ∝ exp(ε·u(r) / (2Δu)), Δu the largest change of any
    score when one record changes; this is ε-DP. (The book's exp(ε·u/2) gives ε·Δu-DP.) The
    candidate set must not depend on the data.

    ``scores`` of shape ``(m,)`` returns one chosen candidate; of shape ``(n, m)`` returns an array of
    n independent choices (one per row, e.g. one per record).

    Raises:
        SpecError: empty candidates, scores of the wrong shape or not finite, ε or Δu not positive.
    """
    delta_u = positive(sensitivity, "sensitivity")
    eps = check_epsilon(epsilon)
    cands = np.asarray(candidates, dtype=object)
    if cands.ndim != 1 or cands.size == 0:
        raise SpecError("must be a non-empty list", path="candidates")
    u = float_values(scores, "scores")
    single = u.ndim == 1
    u = np.atleast_2d(u)
    if u.ndim != 2 or u.shape[1] != cands.size:
        raise SpecError(f"must have one score per candidate ({cands.size}) in its last dimension, "
                        f"got shape {np.shape(scores)}", path="scores")
    logits = eps * u / (2.0 * delta_u)
    logits -= logits.max(axis=1, keepdims=True)
    weights = np.exp(logits)
    cumulative = np.cumsum(weights, axis=1)
    draws = rng.random(u.shape[0]) * cumulative[:, -1]
    chosen = np.minimum((cumulative <= draws[:, None]).sum(axis=1), cands.size - 1)
    picked = cands[chosen]
    return picked[0] if single else picked
