"""The analytic Gaussian mechanism, released on the grid γ."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy import special

from sqlanon.methods.dp.mechanisms.checks import check_delta, check_epsilon, float_values, positive
from sqlanon.methods.dp.mechanisms.grid import is_integer, release_grid, round_half_up


def _gaussian_delta(sigma: float, sensitivity: float, epsilon: float) -> float:
    a = sensitivity / (2.0 * sigma)
    b = epsilon * sigma / sensitivity
    return float(special.ndtr(a - b) - math.exp(epsilon + special.log_ndtr(-a - b)))


def gaussian_sigma(sensitivity: float, epsilon: float, delta: float) -> float:
    """The smallest σ for which N(0, σ²) noise gives (ε, δ)-DP at l2 sensitivity Δ.

    Analytic calibration of Balle and Wang (2018, "Improving the Gaussian mechanism for
    differential privacy", Thm 8): the mechanism is (ε, δ)-DP iff
    Φ(Δ/(2σ) − εσ/Δ) − e^ε·Φ(−Δ/(2σ) − εσ/Δ) ≤ δ. The left side decreases in σ; σ is found by
    bisection and rounded up. Valid for every ε > 0, unlike the classic σ = Δ·√(2 ln(1.25/δ))/ε,
    which needs ε < 1 and is larger.
    """
    sens = positive(sensitivity, "sensitivity")
    eps = check_epsilon(epsilon)
    dlt = check_delta(delta)
    low = high = sens
    while _gaussian_delta(high, sens, eps) > dlt:
        high *= 2.0
    while _gaussian_delta(low, sens, eps) <= dlt and low > 1e-300:
        low /= 2.0
    for _ in range(200):
        mid = math.sqrt(low * high)
        if _gaussian_delta(mid, sens, eps) > dlt:
            low = mid
        else:
            high = mid
        if high - low <= 1e-12 * high:
            break
    return high


def gaussian(values: Any, sensitivity: float, epsilon: float, delta: float,
             rng: np.random.Generator) -> np.ndarray:
    """(ε, δ)-DP Gaussian mechanism with the analytic calibration, released on a grid.

    ``sensitivity`` is the global **l2** sensitivity Δ of the released vector (its d values
    together). Floating-point safety: x + N computed in doubles would leak x's low-order bits
    (Mironov 2012), so the release is γ·(k + R): k = x/γ rounded to an integer, R = N/γ rounded
    with N ~ N(0, σ²), γ = :func:`granularity` (Δ, d). That is the exact Gaussian mechanism
    k·γ + N on the rounded vector, whose l2 sensitivity is at most Δ + γ·√d (each coordinate
    moves by at most γ/2 twice), followed by rounding to the grid (post-processing); σ is
    calibrated (:func:`gaussian_sigma`) to Δ + γ·√d, at most 1/1024 above Δ. Integer values
    (an integer dtype) with an integer Δ are on the grid γ = 1 already: they are not rounded, Δ is
    not raised, and the outputs are integers. The outputs are multiples of γ for every input; the
    probabilities of the grid points are those of the rounded normal up to the accuracy of
    numpy's normal sampler.

    Raises:
        SpecError: ε or Δ not positive, δ outside (0, 1), or non-finite values.
    """
    grid, sigma = gaussian_parameters(sensitivity, epsilon, delta, int(np.size(values)),
                                      integer=is_integer(values))
    x = float_values(values)
    noise = rng.standard_normal(x.shape) * (sigma / grid)
    return (np.rint(x / grid) + round_half_up(noise)) * grid


def gaussian_parameters(sensitivity: float, epsilon: float, delta: float, coordinates: int = 1,
                        *, integer: bool = False) -> tuple[float, float]:
    """The grid γ and the σ of :func:`gaussian` for a release of ``coordinates`` values."""
    grid, released = release_grid(positive(sensitivity, "sensitivity"), coordinates,
                                  integer=integer)
    return grid, gaussian_sigma(released, epsilon, delta)
