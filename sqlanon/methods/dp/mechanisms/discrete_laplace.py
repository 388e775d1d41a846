"""The discrete Laplace (two-sided geometric) mechanism for integer-valued quantities."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from sqlanon.errors import SpecError
from sqlanon.methods.dp.mechanisms.checks import check_epsilon, integer_values


def discrete_laplace(values: Any, sensitivity: int, epsilon: float,
                     rng: np.random.Generator) -> np.ndarray:
    """ε-DP two-sided geometric mechanism for integer-valued quantities (seed 000 Def 8.11, Thm 8.12).

    Adds N with Pr(N = i) = ((1−α)/(1+α))·α^|i|, α = exp(−ε/Δ), to each value; Δ is the integer
    global l1 sensitivity. N is drawn as the difference of two independent geometric variables on
    {0, 1, ...} with success probability 1−α. Outputs are integers, so no floating-point gaps exist
    in the support; the geometric draws themselves use floating-point inversion, whose relative
    error in each probability is of the order of 2^-52.

    Raises:
        SpecError: the values are not integers, Δ is not a positive integer, or ε is not positive.
    """
    if isinstance(sensitivity, bool) or not isinstance(sensitivity, (int, np.integer)) \
            or sensitivity < 1:
        raise SpecError(f"must be a positive integer, got {sensitivity!r}", path="sensitivity")
    eps = check_epsilon(epsilon)
    x = integer_values(values)
    return x + sample_discrete_laplace(rng, x.shape, eps / int(sensitivity))


def sample_discrete_laplace(rng: np.random.Generator, shape: Any, rate: float) -> np.ndarray:
    """Two-sided geometric draws with Pr(N = i) ∝ exp(−rate·|i|)."""
    p = -math.expm1(-rate)                       # 1 − α without cancellation for small rates
    return (rng.geometric(p, size=shape) - rng.geometric(p, size=shape)).astype(np.int64)
