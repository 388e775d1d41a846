"""Pitman's estimate of the population uniques (ARX's ``ModelPitman``, after Hoshino 2001).

The class sizes follow Pitman's sampling formula with parameters θ ≥ 0 and α; their maximum-likelihood
estimates solve two equations (the score functions), which Newton–Raphson solves from a closed-form
start point and then from ARX's grid of start points. The equations and their Jacobian are first
taken in closed form with ARX's digamma/trigamma series; a root is accepted only if the equations,
evaluated accurately, also hold to 1e-6 there, else the accurate form is solved again (ARX's
"iterative" form, Σ 1/(θ+iα) and the like, which equals the accurate polygamma form used here).
The population uniques are Γ(θ+1)/Γ(θ+α) · N^α.

Hoshino N. Applying Pitman's sampling formula to microdata disclosure risk assessment. Journal of
Official Statistics 17(4), 2001.
"""

from __future__ import annotations

import math

import numpy as np

from sqlanon.domain.risk.histogram import SizeHistogram
from sqlanon.domain.risk.newton import ACCURACY, Matrix, Solution, System, Vector, solve
from sqlanon.domain.risk.special import digamma, digamma_array, gamma, log_gamma, trigamma, trigamma_array


def pitman(histogram: SizeHistogram, population: int) -> float:
    """The estimated number of population uniques, NaN when no valid solution was found."""
    root = pitman_parameters(histogram)
    return _result(root.x, root.y, float(population))


def start_point(histogram: SizeHistogram) -> Vector:
    c1 = float(histogram.classes_of_size(1))
    c2 = float(histogram.classes_of_size(2)) or 1.0  # ARX: an overestimate when there is no pair
    u, n = float(histogram.classes), float(histogram.records)
    with np.errstate(all="ignore"):
        c = np.float64(c1 * (c1 - 1)) / c2
        t = (n * u * c - c1 * (n - 1) * (2 * u + c)) / ((2 * c1 * u + c1 * c) - n * c)
        a = (t * (c1 - n) + (n - 1) * c1) / (n * u)
    return float(t), float(a)


def pitman_parameters(histogram: SizeHistogram) -> Solution:
    """(θ, α) as ARX's solver finds them."""
    start = start_point(histogram)
    u, n = float(histogram.classes), float(histogram.records)
    multi = histogram.sizes != 1
    keys, weights = histogram.sizes[multi].astype(np.float64), histogram.counts[multi].astype(np.float64)
    closed = _closed(keys, weights, u, n)
    accurate = _accurate(keys, weights, u, n)
    root = solve(closed, start, _theta_not_negative)
    if not root.converged:
        return solve(accurate, start, _theta_not_negative)
    (g1, g2), _ = accurate(root.x, root.y)
    if math.isnan(g1) or math.isnan(g2) or abs(g1) > ACCURACY or abs(g2) > ACCURACY:
        return solve(accurate, start, _theta_not_negative)
    return root


def _theta_not_negative(t: float, _a: float) -> bool:
    return t >= 0


def _closed(keys: np.ndarray, weights: np.ndarray, u: float, n: float) -> System:
    """ARX's closed form, in Python floats summed in ARX's order (a few histogram entries cost less
    than numpy's overhead; many go through the array forms of the same series)."""
    few = len(keys) <= 64
    key_list, weight_list = keys.tolist(), weights.tolist()

    def per_class(a: float) -> tuple[float, float]:
        v6, v7 = digamma(1.0 - a), trigamma(1.0 - a)
        if few:
            d4 = o4 = 0.0
            for key, w in zip(key_list, weight_list, strict=True):
                d4 += w * (v7 - trigamma(key - a))
                o4 += w * (digamma(key - a) - v6)
            return d4, o4
        shifted = keys - a
        return (float(np.sum(weights * (v7 - trigamma_array(shifted)))),
                float(np.sum(weights * (digamma_array(shifted) - v6))))

    def evaluate(t: float, a: float) -> tuple[Vector, Matrix]:
        try:
            v0 = u - 1.0
            v1 = digamma(v0 + t / a + 1.0)
            v2 = trigamma((a + t + a * v0) / a)
            v3 = trigamma(t / a + 1.0)
            v4 = digamma(t / a + 1.0)
            v5 = a * a
            d1 = (v3 - v2) / v5
            d5 = ((a * v1 + t * v2) - a * v4 - t * v3) / (v5 * a)
            d3 = ((((v5 * v0) - t * t * v2) + t * t * v3) - 2.0 * a * t * v1 + 2.0 * a * t * v4) / (v5 * v5)
            o1 = (v1 - v4) / a
            o3 = (-t * v1 + a * v0 + t * v4) / (a * a)
            o2 = digamma(n + t) - digamma(t + 1.0)
            d2 = trigamma(t + 1.0) - trigamma(n + t)
            d4, o4 = per_class(a)
        except (ZeroDivisionError, OverflowError, ValueError):  # Java: ±Infinity or NaN, never a throw
            return _NAN
        return (o1 - o2, o3 - o4), (d2 - d1, -d5, -d5, -d3 - d4)
    return evaluate


_NAN: tuple[Vector, Matrix] = ((math.nan, math.nan), (math.nan, math.nan, math.nan, math.nan))


def _accurate(keys: np.ndarray, weights: np.ndarray, u: float, n: float) -> System:
    """The score functions and Jacobian with accurate polygamma values (Σ_{i<u} 1/(θ+iα) and so on)."""
    from scipy import special as sc  # scipy takes a third of a second to import: only when solving

    def evaluate(t: float, a: float) -> tuple[Vector, Matrix]:
        with np.errstate(all="ignore"):
            t64, a64 = np.float64(t), np.float64(a)
            if a64 == 0.0:
                i = np.arange(1.0, u)
                o1 = np.sum(1.0 / (t64 + i * a64))
                o3 = np.sum(i / (t64 + i * a64))
                d1 = np.sum(1.0 / (t64 + i * a64) ** 2)
                d5 = np.sum(i / (t64 + i * a64) ** 2)
                d3 = np.sum(i * i / (t64 + i * a64) ** 2)
            else:
                s0, s1 = t64 / a64 + 1.0, t64 / a64 + u
                p0, p1 = sc.digamma(s1) - sc.digamma(s0), sc.polygamma(1, s0) - sc.polygamma(1, s1)
                o1 = p0 / a64                                   # Σ 1/(t+ia)
                o3 = (u - 1.0 - t64 * o1) / a64                  # Σ i/(t+ia)
                d1 = p1 / (a64 * a64)                           # Σ 1/(t+ia)²
                d5 = (o1 - t64 * d1) / a64                       # Σ i/(t+ia)²
                d3 = (o3 - t64 * d5) / a64                       # Σ i²/(t+ia)²
            o2 = sc.digamma(n + t64) - sc.digamma(t64 + 1.0)
            d2 = sc.polygamma(1, t64 + 1.0) - sc.polygamma(1, n + t64)
            shifted = keys - a64
            o4 = np.sum(weights * (sc.digamma(shifted) - sc.digamma(1.0 - a64)))
            d4 = np.sum(weights * (sc.polygamma(1, 1.0 - a64) - sc.polygamma(1, shifted)))
            return ((float(o1 - o2), float(o3 - o4)),
                    (float(d2 - d1), float(-d5), float(-d5), float(-d3 - d4)))
    return evaluate


def _result(t: float, a: float, p: float) -> float:
    if math.isnan(a) or math.isnan(t) or a == 0:
        return math.nan
    with np.errstate(all="ignore"):
        power = float(np.power(np.float64(p), np.float64(a)))
        v1 = float(np.exp(np.float64(log_gamma(t + 1.0) - log_gamma(t + a)))) * power
        v2 = float(np.float64(gamma(t + 1.0)) / np.float64(gamma(t + a))) * power
    v1 = v1 if 0.0 <= v1 <= p else math.nan
    v2 = v2 if 0.0 <= v2 <= p else math.nan
    if math.isnan(v1):
        return v2
    return v1 if math.isnan(v2) else max(v1, v2)
