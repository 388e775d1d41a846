"""The staircase mechanism (Geng and Viswanath 2014), released on the grid γ."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from sqlanon.errors import SpecError
from sqlanon.methods.dp.mechanisms.bits import random_signs
from sqlanon.methods.dp.mechanisms.checks import check_epsilon, float_values, positive
from sqlanon.methods.dp.mechanisms.grid import is_integer, release_grid, round_half_up


def staircase_expected_abs(gamma: float, sensitivity: float, epsilon: float) -> float:
    """E|N| for the staircase noise with parameter γ (closed form of the series over the steps)."""
    b = math.exp(-epsilon)
    a = (1.0 - b) / (2.0 * sensitivity * (gamma + (1.0 - gamma) * b))
    s0 = 1.0 / (1.0 - b)
    s1 = b / (1.0 - b) ** 2
    # Twice the positive half-line, whose step integrals each carry a factor 1/2.
    per_side = sensitivity ** 2 * a * (
        (2.0 * gamma + 2.0 * b * (1.0 - gamma)) * s1
        + (gamma ** 2 + b * (1.0 - gamma) * (1.0 + gamma)) * s0)
    return per_side


def staircase_optimal_gamma(epsilon: float) -> float:
    """γ* = 1/(1 + e^(ε/2)), the γ that minimises the expected absolute noise E|N|.

    Geng and Viswanath (2014, "The optimal noise-adding mechanism in differential privacy"), for
    the l1 cost; it does not depend on Δ.
    """
    eps = check_epsilon(epsilon)
    return 1.0 / (1.0 + math.exp(eps / 2.0))


def staircase(values: Any, sensitivity: float, epsilon: float, rng: np.random.Generator,
              gamma: float | None = None) -> np.ndarray:
    """ε-DP staircase mechanism: the optimal data-independent noise (seed 000 §8.2, Thms 8.9–8.10).

    The density is M on [−d, d] and M·e^(−iε) on the i-th step of width Δ beyond d (i = 1, 2, ...),
    with d = γΔ; Δ is the global l1 sensitivity of each value. (The book indexes the steps from
    i ∈ ℕ with the first step at M·e^0; the steps must start at e^(−ε) for the density to be the
    staircase of Thm 8.9 and satisfy f(x) ≤ e^ε f(x+Δ).) Sampling follows Geng and Viswanath
    (2014): sign S, geometric G with Pr(G = i) = (1−b)b^i, b = e^(−ε), uniform U, and a Bernoulli
    B choosing the inner or outer part of the step. ``gamma`` defaults to
    :func:`staircase_optimal_gamma` (least expected absolute noise).

    Floating-point safety as in :func:`gaussian`: each value is rounded to the grid
    γ = :func:`granularity` (Δ), the noise is drawn for the sensitivity Δ + γ and rounded (half up)
    to the grid, so the outputs are multiples of γ whatever the input (integer values with an
    integer Δ keep γ = 1 and Δ).

    Raises:
        SpecError: ε or Δ not positive, γ outside [0, 1], or non-finite values.
    """
    delta_f = positive(sensitivity, "sensitivity")
    eps = check_epsilon(epsilon)
    if gamma is None:
        gamma = staircase_optimal_gamma(eps)
    elif isinstance(gamma, bool) or not isinstance(gamma, (int, float)) or not 0.0 <= gamma <= 1.0:
        raise SpecError(f"must be a number in [0, 1], got {gamma!r}", path="gamma")
    # each value is a release of its own: one coordinate
    grid, released_sensitivity = release_grid(delta_f, integer=is_integer(values))
    x = float_values(values)
    noise = sample_staircase(rng, x.shape, released_sensitivity, eps, float(gamma))
    return (np.rint(x / grid) + round_half_up(noise / grid)) * grid


def sample_staircase(rng: np.random.Generator, shape: Any, sensitivity: float, epsilon: float,
                     gamma: float) -> np.ndarray:
    """Staircase draws (Geng and Viswanath 2014, Algorithm 1)."""
    b = math.exp(-epsilon)
    size = int(np.prod(shape))
    sign = random_signs(rng, size)
    steps = rng.geometric(-math.expm1(-epsilon), size=size) - 1.0
    u = rng.random(size)
    outer = rng.random(size) < (1.0 - gamma) * b / (gamma + (1.0 - gamma) * b)
    inner_part = steps + gamma * u
    outer_part = steps + gamma + (1.0 - gamma) * u
    return (sign * np.where(outer, outer_part, inner_part) * sensitivity).reshape(shape)
