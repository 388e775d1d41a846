"""Additive noise for masking (not differential privacy): uncorrelated and correlated Gaussian noise.

Seed 000 §3.2 ("Noise addition"): y = x + e. Uncorrelated noise draws e^j ~ N(0, α·Var(x^j))
independently per attribute: means and covariances are preserved in expectation, variances grow to
(1 + α)·Var and correlations shrink to ρ/(1 + α) (erratum E2). Correlated noise draws
e ~ N(0, α·Σ_X): the covariance becomes (1 + α)·Σ_X and correlations are preserved.

sdcMicro's ``addNoise(noise = q)`` uses a standard deviation of q/100 times the attribute's
(method "additive": α = (q/100)²) and a noise covariance of q/100 times Σ_X (method
"correlated": α = q/100).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from sqlanon.errors import SpecError


def check_alpha(alpha: Any) -> float:
    """α, the noise variance as a fraction of the data's, after checking it is a positive number."""
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float, np.integer, np.floating)) \
            or not np.isfinite(alpha) or alpha <= 0:
        raise SpecError(f"must be a positive number (noise variance as a fraction of the "
                        f"attribute's variance), got {alpha!r}", path="alpha")
    return float(alpha)


def uncorrelated_sd(variances: np.ndarray, alpha: float) -> np.ndarray:
    """Per-attribute noise standard deviations √(α·Var)."""
    return np.sqrt(check_alpha(alpha) * np.asarray(variances, dtype=np.float64))


def correlated_factor(covariance: np.ndarray, alpha: float) -> np.ndarray:
    """A matrix L with L·Lᵀ = α·Σ, so that z·Lᵀ for standard normal rows z has covariance α·Σ.

    From the symmetric eigen-decomposition (negative eigenvalues from rounding are cut to 0), so a
    singular Σ, e.g. of a constant or collinear column, still works.
    """
    sigma = np.atleast_2d(np.asarray(covariance, dtype=np.float64))
    values, vectors = np.linalg.eigh(check_alpha(alpha) * (sigma + sigma.T) / 2.0)
    return vectors * np.sqrt(np.clip(values, 0.0, None))


def uncorrelated_noise(x: Any, alpha: float, rng: np.random.Generator) -> np.ndarray:
    """x plus independent N(0, α·Var(x^j)) noise per column (sample variance, n − 1)."""
    data = _matrix(x)
    sd = uncorrelated_sd(data.var(axis=0, ddof=1), alpha)
    return data + rng.standard_normal(data.shape) * sd


def correlated_noise(x: Any, alpha: float, rng: np.random.Generator) -> np.ndarray:
    """x plus N(0, α·Σ_X) noise, Σ_X the sample covariance (n − 1)."""
    data = _matrix(x)
    factor = correlated_factor(np.cov(data, rowvar=False, ddof=1), alpha)
    return data + rng.standard_normal(data.shape) @ factor.T


def _matrix(x: Any) -> np.ndarray:
    data = np.asarray(x, dtype=np.float64)
    if data.ndim == 1:
        data = data.reshape(-1, 1)
    if data.ndim != 2 or data.shape[0] < 2:
        raise SpecError(f"needs a 2-D array with at least 2 rows, got shape {data.shape}",
                        path="values")
    if not np.isfinite(data).all():
        raise SpecError("holds NaN or infinite values", path="values")
    return data
