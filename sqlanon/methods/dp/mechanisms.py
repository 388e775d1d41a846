"""Differential-privacy mechanisms: each one function stating its guarantee and what it assumes.

Every mechanism takes a :class:`numpy.random.Generator` (see :func:`sqlanon.methods.rng.make_rng`),
checks its parameters (a :class:`~sqlanon.errors.SpecError` names the parameter) and works on whole
numpy arrays. "Sensitivity" is always the global sensitivity of the released quantity under the
neighbouring relation the caller uses (seed 000 Def 8.4: the largest change when one record
changes); the mechanisms cannot check it.

Floating-point safety: the continuous Laplace mechanism is Mironov's *snapping mechanism*
(Mironov 2012, "On significance of the least significant bits for differential privacy", §5.2).
Adding textbook floating-point Laplace noise to a value leaks it: the set of doubles the sum can take
depends on the value's low-order bits. Snapping clamps, adds Laplace noise drawn from a uniform
variate with the full precision of a double, and rounds to a power-of-two grid Λ, so the possible
outputs are the same for every input. The discrete mechanisms produce integers, whose support has no
gaps to leak through. The Gaussian and staircase mechanisms release on a power-of-two grid γ
(:func:`granularity`): the value is rounded to the grid, and the noise, calibrated to the
sensitivity plus the rounding's γ, is rounded to the grid too, so their outputs are grid points
whatever the input's low-order bits.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from scipy import special

from sqlanon.errors import SpecError
from sqlanon.methods.rng import make_rng

# Mironov's Theorem 1 is proved for lambda < B < 2**46 * lambda.
_SNAP_MAX_BOUND_RATIO = 2.0 ** 46
_SNAP_ERROR = 2.0 ** -49


# ----------------------------------------------------------------------------- parameter checks

def _positive(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise SpecError(f"must be a positive number, got {type(value).__name__}", path=name)
    value = float(value)
    if not math.isfinite(value) or value <= 0:
        raise SpecError(f"must be a positive finite number, got {value!r}", path=name)
    return value


def check_epsilon(epsilon: Any, name: str = "epsilon") -> float:
    """``epsilon`` as a float after checking it is positive and finite."""
    return _positive(epsilon, name)


def check_delta(delta: Any, name: str = "delta") -> float:
    """``delta`` as a float after checking it lies strictly between 0 and 1."""
    if isinstance(delta, bool) or not isinstance(delta, (int, float, np.integer, np.floating)):
        raise SpecError(f"must be a number in (0, 1), got {type(delta).__name__}", path=name)
    delta = float(delta)
    if not 0.0 < delta < 1.0:
        raise SpecError(f"must lie strictly between 0 and 1, got {delta!r}", path=name)
    return delta


def _float_values(values: Any, name: str = "values") -> np.ndarray:
    arr = np.asarray(values)
    if arr.dtype == bool or not (np.issubdtype(arr.dtype, np.integer)
                                 or np.issubdtype(arr.dtype, np.floating)):
        raise SpecError(f"must be numeric, got dtype {arr.dtype}", path=name)
    arr = arr.astype(np.float64)
    bad = int(np.count_nonzero(~np.isfinite(arr)))
    if bad:
        raise SpecError(f"{bad} value(s) are NaN or infinite; remove or impute them first",
                        path=name)
    return arr


def _integer_values(values: Any, name: str = "values") -> np.ndarray:
    arr = np.asarray(values)
    if np.issubdtype(arr.dtype, np.integer) and arr.dtype != bool:
        return arr.astype(np.int64)
    if np.issubdtype(arr.dtype, np.floating):
        finite = np.isfinite(arr)
        if finite.all() and np.array_equal(arr, np.round(arr)):
            return arr.astype(np.int64)
    raise SpecError(f"must be integers, got dtype {arr.dtype} with non-integer values", path=name)


# ----------------------------------------------------------------------------- Laplace (snapping)

def uniform_full_precision(rng: np.random.Generator, size: int) -> np.ndarray:
    """Uniform draws on (0, 1) where every double u is drawn with probability ulp(u).

    This is the U* of Mironov 2012 §5.2: the binade [2^-e, 2^(1-e)) is chosen with probability
    2^-e (e − 1 = the length of a run of random zero bits), then its 52 mantissa bits uniformly,
    and the double is assembled from its bits. ``rng.random()`` instead returns multiples of 2^-53 and
    never the small doubles whose logarithms the Laplace tail needs. Binades below 2^-1022
    (probability 2^-1021) are folded into the lowest normal one.
    """
    return _full_precision_bits(rng, rng.bit_generator.random_raw(size))


def _full_precision_bits(rng: np.random.Generator, raw: np.ndarray) -> np.ndarray:
    # Each 64-bit word gives U*'s 52 mantissa bits (its top bits), the start of the zero run that
    # picks the binade (bits 1..11), and a spare bit 0 (the Laplace sampler's sign).
    run = (raw >> np.uint64(1)) & np.uint64(0x7FF)
    field = binade_fields(run, rng.bit_generator.random_raw, width=11)
    return ((field << np.uint64(52)) | (raw >> np.uint64(12))).view(np.float64)


def binade_fields(words: np.ndarray, more: Callable[[int], np.ndarray], width: int = 64
                  ) -> np.ndarray:
    """The exponent fields of U*: 1023 − e where e − 1 counts the trailing zero bits of ``words``
    (each holding ``width`` random bits, higher bits 0), continued into ``more(k)`` fresh 64-bit
    words while all of them are zero; at least 1."""
    lowest = words & (~words + np.uint64(1))                        # lowest set bit, 0 if none
    # A power of two converts to a double exactly, its exponent field being 1023 + its position p;
    # U*'s exponent field is then 1023 − (p + 1) = 2045 − that field.
    field = np.uint64(2045) - (lowest.astype(np.float64).view(np.uint64) >> np.uint64(52))
    empty = np.flatnonzero(lowest == 0)                             # probability 2^-width each
    zeros = np.full(empty.size, width, dtype=np.int64)              # trailing zeros seen so far
    while empty.size:
        extra = more(empty.size)
        low = extra & (~extra + np.uint64(1))
        found = low != 0
        position = (low[found].astype(np.float64).view(np.uint64) >> np.uint64(52)).astype(np.int64) - 1023
        field[empty[found]] = np.maximum(1022 - zeros[found] - position, 1).astype(np.uint64)
        empty, zeros = empty[~found], zeros[~found] + 64
    return field


def random_signs(rng: np.random.Generator, size: int) -> np.ndarray:
    """Independent fair ±1.0 draws."""
    return np.where(rng.bit_generator.random_raw(size) >> np.uint64(63), 1.0, -1.0)


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
        part = np.log(_full_precision_bits(rng, raw))               # < 0: U* lies in (0, 1)
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
    delta_f = _positive(sensitivity, "sensitivity")
    eps = check_epsilon(epsilon)
    x = _float_values(values)
    if isinstance(bound, (tuple, list)):
        if len(bound) != 2:
            raise SpecError("must be a number or a (low, high) pair", path="bound")
        low, high = (float(b) for b in bound)
        if not (math.isfinite(low) and math.isfinite(high) and low < high):
            raise SpecError(f"must be a finite interval with low < high, got {bound!r}",
                            path="bound")
        centre, half = (low + high) / 2.0, (high - low) / 2.0
    else:
        centre, half = 0.0, _positive(bound, "bound")
    scaled_bound = half / delta_f
    scale, grid = snapping_parameters(1.0, eps, scaled_bound)
    shifted = np.clip((x - centre) / delta_f, -scaled_bound, scaled_bound)
    noisy = shifted + sample_laplace(rng, x.size, scale).reshape(x.shape)
    snapped = np.clip(np.rint(noisy / grid) * grid, -scaled_bound, scaled_bound)
    return snapped * delta_f + centre


# ----------------------------------------------------------------------------- discrete Laplace

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
    x = _integer_values(values)
    return x + sample_discrete_laplace(rng, x.shape, eps / int(sensitivity))


def sample_discrete_laplace(rng: np.random.Generator, shape: Any, rate: float) -> np.ndarray:
    """Two-sided geometric draws with Pr(N = i) ∝ exp(−rate·|i|)."""
    p = -math.expm1(-rate)                       # 1 − α without cancellation for small rates
    return (rng.geometric(p, size=shape) - rng.geometric(p, size=shape)).astype(np.int64)


# ----------------------------------------------------------------------------- Gaussian

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
    sens = _positive(sensitivity, "sensitivity")
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
                                      integer=_is_integer(values))
    x = _float_values(values)
    noise = rng.standard_normal(x.shape) * (sigma / grid)
    return (np.rint(x / grid) + round_half_up(noise)) * grid


def granularity(sensitivity: float, coordinates: int = 1) -> float:
    """γ, the grid of the Gaussian and staircase releases: the largest power of two not above
    Δ/(1024·√d) for a d-value release, so that rounding to it raises the sensitivity by at most
    Δ/1024."""
    return 2.0 ** math.floor(math.log2(sensitivity / (1024.0 * math.sqrt(coordinates))))


def release_grid(sensitivity: float, coordinates: int = 1, *, integer: bool = False
                 ) -> tuple[float, float]:
    """The grid γ of a release of ``coordinates`` values and the l2 sensitivity of those values
    once rounded to it, Δ + γ·√d (per coordinate the rounding moves each of two neighbours' values
    by at most γ/2).

    ``integer``: the values are integers (an integer type, a public fact) and Δ is an integer, so
    they lie on the grid γ = 1 already and keep their sensitivity. The choice never depends on the
    values themselves.
    """
    if integer and float(sensitivity).is_integer():
        return 1.0, sensitivity
    d = max(1, int(coordinates))
    grid = granularity(sensitivity, d)
    return grid, sensitivity + grid * math.sqrt(d)


def gaussian_parameters(sensitivity: float, epsilon: float, delta: float, coordinates: int = 1,
                        *, integer: bool = False) -> tuple[float, float]:
    """The grid γ and the σ of :func:`gaussian` for a release of ``coordinates`` values."""
    grid, released = release_grid(_positive(sensitivity, "sensitivity"), coordinates,
                                  integer=integer)
    return grid, gaussian_sigma(released, epsilon, delta)


def _is_integer(values: Any) -> bool:
    return np.asarray(values).dtype.kind in "iu"


def round_half_up(scaled: np.ndarray) -> np.ndarray:
    """⌊q + 1/2⌋ computed exactly: k·γ + round(N/γ)·γ is then exactly k·γ + N rounded to the grid
    (rounding half up commutes with integer shifts; numpy's rint, half to even, does not)."""
    low = np.floor(scaled)
    return low + (scaled - low >= 0.5)


# ----------------------------------------------------------------------------- staircase

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
    delta_f = _positive(sensitivity, "sensitivity")
    eps = check_epsilon(epsilon)
    if gamma is None:
        gamma = staircase_optimal_gamma(eps)
    elif isinstance(gamma, bool) or not isinstance(gamma, (int, float)) or not 0.0 <= gamma <= 1.0:
        raise SpecError(f"must be a number in [0, 1], got {gamma!r}", path="gamma")
    # each value is a release of its own: one coordinate
    grid, released_sensitivity = release_grid(delta_f, integer=_is_integer(values))
    x = _float_values(values)
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


# ----------------------------------------------------------------------------- exponential

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
    delta_u = _positive(sensitivity, "sensitivity")
    eps = check_epsilon(epsilon)
    cands = np.asarray(candidates, dtype=object)
    if cands.ndim != 1 or cands.size == 0:
        raise SpecError("must be a non-empty list", path="candidates")
    u = _float_values(scores, "scores")
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


# ----------------------------------------------------------------------------- randomized response

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
