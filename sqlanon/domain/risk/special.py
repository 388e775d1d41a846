"""Special functions as ARX's population models evaluate them.

ARX computes the digamma and trigamma functions with its own series (``risk/Gamma.java``). They are
reproduced here term for term because the Newton–Raphson iterates, and so the estimates, depend on
them: the trigamma series omits its asymptotic tail for arguments below 12 (it reduces the argument
to 8 but adds the tail only from 12), and both use their small-argument Taylor form for every
argument ≤ 1e-6 (digamma) or ≤ 1e-4 (trigamma), negative ones included. The Jacobians built from
them are therefore approximations; the roots are not affected (the equations use digamma, which is
accurate), only the path to them.
"""

from __future__ import annotations

import math

import numpy as np

_DIGAMMA_1 = -0.57721566490153286060651209008240243104215933593992
_TRIGAMMA_1 = math.pi * math.pi / 6.0
_TETRAGAMMA_1 = -2.0 * 1.202056903159594285399738161511449990764986292
_S3, _S4, _S5, _S6, _S7 = 1.0 / 12.0, 1.0 / 120.0, 1.0 / 252.0, 1.0 / 240.0, 1.0 / 132.0
_B2, _B4, _B6, _B8, _B10 = 1.0 / 6.0, -1.0 / 30.0, 1.0 / 42.0, -1.0 / 30.0, 5.0 / 66.0


def digamma(x: float) -> float:
    if math.isinf(x) or math.isnan(x):
        return math.nan
    if x == 0.0:
        return -math.inf
    if x <= 1e-6:
        return (_DIGAMMA_1 - 1.0 / x) + _TRIGAMMA_1 * x
    result = 0.0
    while x < 12.0:
        result -= 1.0 / x
        x += 1.0
    r = 1.0 / x
    result += math.log(x) - 0.5 * r
    r *= r
    return result - r * (_S3 - r * (_S4 - r * (_S5 - r * (_S6 - r * _S7))))


def trigamma(x: float) -> float:
    if math.isinf(x) or math.isnan(x):
        return math.nan
    if x == 0.0:
        return -math.inf
    if x <= 1e-4:
        return 1.0 / (x * x) + _TRIGAMMA_1 + _TETRAGAMMA_1 * x
    result = 0.0
    while x < 8.0:
        result += 1.0 / (x * x)
        x += 1.0
    if x >= 12.0:
        r = 1.0 / (x * x)
        result += 0.5 * r + (1.0 + r * (_B2 + r * (_B4 + r * (_B6 + r * (_B8 + r * _B10))))) / x
    return result


def hypergeometric_one(population: int, sizes: np.ndarray, sample: int) -> np.ndarray:
    """P(X = 1) for X ~ Hypergeometric(population, size, sample), for every size in ``sizes``.

    P = size·n/(N−size+1) · Π_{i<size−1} (N−n−i)/(N−i), summed in logs (log1p of −n/(N−i)) so that
    no lgamma of a population-sized argument cancels away the precision.
    """
    sizes = np.asarray(sizes, dtype=np.int64)
    if len(sizes) == 0:
        return np.zeros(0)
    big_n, n = float(population), float(sample)
    top = int(sizes.max())
    i = np.arange(max(top - 1, 0), dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        steps = np.log1p(-n / (big_n - i))
    steps = np.where(np.isnan(steps), -np.inf, steps)
    logs = np.concatenate(([0.0], np.cumsum(steps)))  # logs[k] = Σ_{i<k} log((N−n−i)/(N−i))
    s = sizes.astype(np.float64)
    with np.errstate(divide="ignore"):
        head = np.log(s) + math.log(n) - np.log(big_n - s + 1.0)
    return np.exp(head + logs[sizes - 1])


def digamma_array(x: np.ndarray) -> np.ndarray:
    """:func:`digamma` elementwise, with the same operations in the same order."""
    x = np.array(x, dtype=np.float64)
    out = np.zeros_like(x)
    bad = ~np.isfinite(x)
    small = ~bad & (x <= 1e-6)
    zero = x == 0.0
    rest = ~bad & ~small
    with np.errstate(divide="ignore", invalid="ignore"):
        out[small] = (_DIGAMMA_1 - 1.0 / x[small]) + _TRIGAMMA_1 * x[small]
        v, acc = x[rest], np.zeros(int(rest.sum()))
        for _ in range(13):
            low = v < 12.0
            if not low.any():
                break
            acc[low] -= 1.0 / v[low]
            v[low] += 1.0
        r = 1.0 / v
        acc += np.log(v) - 0.5 * r
        r *= r
        out[rest] = acc - r * (_S3 - r * (_S4 - r * (_S5 - r * (_S6 - r * _S7))))
    out[bad] = np.nan
    out[zero] = -np.inf
    return out


def trigamma_array(x: np.ndarray) -> np.ndarray:
    """:func:`trigamma` elementwise, with the same operations in the same order."""
    x = np.array(x, dtype=np.float64)
    out = np.zeros_like(x)
    bad = ~np.isfinite(x)
    small = ~bad & (x <= 1e-4)
    zero = x == 0.0
    rest = ~bad & ~small
    with np.errstate(divide="ignore", invalid="ignore"):
        xs = x[small]
        out[small] = 1.0 / (xs * xs) + _TRIGAMMA_1 + _TETRAGAMMA_1 * xs
        v, acc = x[rest], np.zeros(int(rest.sum()))
        for _ in range(9):
            low = v < 8.0
            if not low.any():
                break
            acc[low] += 1.0 / (v[low] * v[low])
            v[low] += 1.0
        big = v >= 12.0
        r = 1.0 / (v[big] * v[big])
        acc[big] += 0.5 * r + (1.0 + r * (_B2 + r * (_B4 + r * (_B6 + r * (_B8 + r * _B10))))) / v[big]
        out[rest] = acc
    out[bad] = np.nan
    out[zero] = -np.inf
    return out


def log_gamma(x: float) -> float:
    """Commons Math's ``Gamma.logGamma``: NaN for x ≤ 0 (where math.lgamma would give log|Γ|)."""
    if math.isnan(x) or x <= 0.0:
        return math.nan
    return math.inf if math.isinf(x) else math.lgamma(x)


def gamma(x: float) -> float:
    """Γ(x) with Java's floating-point outcomes: +∞ on overflow, NaN at the poles."""
    try:
        return math.gamma(x)
    except OverflowError:
        return math.inf
    except ValueError:
        return math.nan
