"""Uncorrelated and correlated noise against seed 000 §3.2's moment identities."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from sqlanon.errors import SpecError
from sqlanon.methods.perturbation.perturb import correlated_factor, correlated_noise, uncorrelated_noise
from tests.methods.perturbation.helpers import seeded

N = 200_000


@pytest.fixture(scope="module")
def data() -> np.ndarray:
    rng = np.random.default_rng(11)
    cov = np.array([[4.0, 2.4, -1.0], [2.4, 9.0, 0.5], [-1.0, 0.5, 1.0]])
    return rng.multivariate_normal([10.0, -3.0, 100.0], cov, size=N)


def test_uncorrelated_noise_preserves_means_and_shrinks_correlations(data):
    alpha = 0.5
    y = uncorrelated_noise(data, alpha, seeded(1))
    var = data.var(axis=0, ddof=1)
    se = np.sqrt(alpha * var / N)
    assert np.all(np.abs(y.mean(axis=0) - data.mean(axis=0)) < 4 * se)
    np.testing.assert_allclose(y.var(axis=0, ddof=1), (1 + alpha) * var, rtol=0.02)
    rho_x = np.corrcoef(data, rowvar=False)[0, 1]
    rho_y = np.corrcoef(y, rowvar=False)[0, 1]
    assert rho_y == pytest.approx(rho_x / (1 + alpha), abs=0.01)  # erratum E2
    # the noise of each column is N(0, α·Var)
    noise = y[:, 1] - data[:, 1]
    assert stats.kstest(noise, stats.norm(scale=math.sqrt(alpha * var[1])).cdf).pvalue > 0.001
    assert abs(np.corrcoef(y - data, rowvar=False)[0, 1]) < 0.01


def test_correlated_noise_preserves_correlations(data):
    alpha = 0.8
    y = correlated_noise(data, alpha, seeded(2))
    np.testing.assert_allclose(np.corrcoef(y, rowvar=False), np.corrcoef(data, rowvar=False),
                               atol=0.01)
    np.testing.assert_allclose(np.cov(y, rowvar=False), (1 + alpha) * np.cov(data, rowvar=False),
                               rtol=0.03, atol=0.03)
    se = np.sqrt(alpha * data.var(axis=0, ddof=1) / N)
    assert np.all(np.abs(y.mean(axis=0) - data.mean(axis=0)) < 4 * se)


def test_correlated_factor_reproduces_the_scaled_covariance_even_when_singular():
    sigma = np.array([[1.0, 1.0, 0.0], [1.0, 1.0, 0.0], [0.0, 0.0, 0.0]])  # collinear + constant
    factor = correlated_factor(sigma, 0.3)
    np.testing.assert_allclose(factor @ factor.T, 0.3 * sigma, atol=1e-12)


@pytest.mark.parametrize("alpha", [0, -0.5, float("nan"), "0.5", True])
def test_bad_alpha_is_refused(alpha):
    with pytest.raises(SpecError, match="alpha"):
        uncorrelated_noise(np.ones((3, 2)), alpha, seeded(0))


def test_nan_values_are_refused():
    with pytest.raises(SpecError, match="NaN"):
        correlated_noise(np.array([[1.0, 2.0], [np.nan, 1.0], [3.0, 4.0]]), 0.5, seeded(0))
