"""The continuous Laplace mechanism made floating-point safe by snapping (Mironov 2012, §5.2)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from sqlanon.errors import SpecError
from sqlanon.methods.dp.mechanisms.bits import full_precision_bits
from sqlanon.methods.dp.mechanisms.checks import check_epsilon, float_values, positive

# Mironov's Theorem 1 is proved for lambda < B < 2**46 * lambda.
_SNAP_MAX_BOUND_RATIO = 2.0 ** 46
_SNAP_ERROR = 2.0 ** -49

_SAMPLE_CHUNK = 1 << 16


def sample_laplace(rng: np.random.Generator, size: int, scale: float) -> np.ndarray:
    """Raw Laplace(0, scale) draws S·scale·ln(U*) (Mironov's sampler before snapping).

    For tests and for building other samplers. Never add these to data directly: use
    :func:`laplace`, which snaps the sum.
    """
    out = np.empty(size)
    # in pieces whose temporaries stay in cache: the bit operations below are a dozen passes each
    # (5.5 ns a draw in pieces of 2^16 against 6.3–12 ns over arrays of 2^20)
    for low in range(0, size, _SAMPLE_CHUNK):
        raw = rng.bit_generator.random_raw(min(_SAMPLE_CHUNK, size - low))
        part = np.log(full_precision_bits(rng, raw))               # < 0: U* lies in (0, 1)
        # bit 0, unused by U*, is the sign: set, it flips ln(U*) to −ln(U*) (exact, as is · scale)
        part.view(np.uint64)[...] ^= (~raw & np.uint64(1)) << np.uint64(63)
        np.multiply(part, scale, out=out[low:low + len(raw)])
    return out


def snapping_parameters(sensitivity: float, epsilon: float, bound: float) -> tuple[float, float]:
    """The Laplace scale λ and the grid Λ (both in units of the sensitivity) for :func:`laplace`.

    λ is inflated from 1/ε to (1 + 2^-49·B)/ε, B the bound in units of the sensitivity, so that
    Mironov's guarantee (1/λ + 2^-49·B/λ)-DP equals the requested ε exactly; Λ is the smallest
    power of two ≥ λ.
    """
    analysis_bound = max(bound / sensitivity, 4.0 / epsilon)   # the theorem needs B > λ
    scale = (1.0 + _SNAP_ERROR * analysis_bound) / epsilon
    if analysis_bound >= _SNAP_MAX_BOUND_RATIO * scale:
        raise SpecError(
            f"the bound is more than 2^46 times the noise scale ({bound:g} vs "
            f"{scale * sensitivity:g}); the snapping mechanism's guarantee does not hold there",
            path="bound")
    grid = 2.0 ** math.ceil(math.log2(scale))
    return scale, grid


def laplace(values: Any, sensitivity: float, epsilon: float, rng: np.random.Generator, *,
            bound: float | tuple[float, float]) -> np.ndarray:
    """ε-DP Laplace mechanism made floating-point safe by snapping (Mironov 2012, §5.2).

    Seed 000 Thm 8.5: adding Laplace(Δ/ε) noise to a quantity with global l1 sensitivity Δ gives
    ε-DP. Each value is an independent release with sensitivity ``sensitivity`` (a vector with
    l1 sensitivity Δ needs ``sensitivity=Δ`` for every coordinate).

    Computed in units of the sensitivity (x/Δ) with ``bound`` B: clamp x to [−B, B]; add
    S·λ·ln(U*) with U* uniform over all doubles in (0, 1) (:func:`uniform_full_precision`) and S a
    fair sign; round to the nearest multiple of Λ, the smallest power of two ≥ λ; clamp to [−B, B];
    multiply back by Δ (post-processing). Mironov's Theorem 1 gives (1/λ + 2^-49·B/λ)-DP for
    λ < B < 2^46·λ; λ is set to (1 + 2^-49·B)/ε so the guarantee is ε itself (B is taken as at least
    4/ε in the analysis). Outputs lie on the grid c + Δ·Λ·ℤ (c the centre of the bounds, 0 for a
    symmetric B) or at a bound. The proof assumes a correctly rounded logarithm; numpy's is
    accurate to within one ulp but not proven correctly rounded.

    Args:
        bound: B (the interval [−B, B]) or a public ``(low, high)`` interval, which is shifted to be
            symmetric around its centre. It must be fixed before seeing the data.

    Raises:
        SpecError: a parameter is not positive and finite, the bound is empty or too wide, or the
            values are not finite numbers.
    """
    delta_f = positive(sensitivity, "sensitivity")
    eps = check_epsilon(epsilon)
    x = float_values(values)
    if isinstance(bound, (tuple, list)):
        if len(bound) != 2:
            raise SpecError("must be a number or a (low, high) pair", path="bound")
        low, high = (float(b) for b in bound)
        if not (math.isfinite(low) and math.isfinite(high) and low < high):
            raise SpecError(f"must be a finite interval with low < high, got {bound!r}",
                            path="bound")
        centre, half = (low + high) / 2.0, (high - low) / 2.0
    else:
        centre, half = 0.0, positive(bound, "bound")
    scaled_bound = half / delta_f
    scale, grid = snapping_parameters(1.0, eps, scaled_bound)
    shifted = np.clip((x - centre) / delta_f, -scaled_bound, scaled_bound)
    noisy = shifted + sample_laplace(rng, x.size, scale).reshape(x.shape)
    snapped = np.clip(np.rint(noisy / grid) * grid, -scaled_bound, scaled_bound)
    return snapped * delta_f + centre
