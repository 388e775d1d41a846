"""Condensation (seed 003 §B7): synthetic groups keep their mean and covariance."""

from __future__ import annotations

import numpy as np
from scipy import stats

from sqlanon.methods.perturbation.condensation import condensation, condense_group
from tests.methods.perturbation.helpers import seeded


def test_synthetic_group_keeps_mean_and_covariance_in_expectation():
    rng = np.random.default_rng(5)
    group = rng.multivariate_normal([1.0, 5.0, -2.0], [[2, 1, 0], [1, 3, 0.5], [0, 0.5, 1]], size=7)
    mean = group.mean(axis=0)
    cov = np.cov(group, rowvar=False, ddof=0)
    gen = seeded(6)
    draws = [condense_group(group, 7, gen) for _ in range(4000)]
    means = np.array([d.mean(axis=0) for d in draws])
    # The draws' distribution has mean x̄ and covariance C (the group's, divided by its size):
    # sample means and (n − 1)-sample covariances are unbiased for them.
    se = means.std(axis=0, ddof=1) / np.sqrt(len(draws))
    assert np.all(np.abs(means.mean(axis=0) - mean) < 4 * se)
    pooled = np.mean([np.cov(d, rowvar=False, ddof=1) for d in draws], axis=0)
    np.testing.assert_allclose(pooled, cov, atol=0.05 * np.abs(cov).max())


def test_points_are_uniform_along_each_eigenvector():
    rng = np.random.default_rng(7)
    group = rng.normal(size=(9, 2)) @ np.array([[2.0, 0.5], [0.0, 1.0]])
    values, vectors = np.linalg.eigh(np.cov(group, rowvar=False, ddof=0))
    synthetic = condense_group(group, 50_000, seeded(8))
    coords = (synthetic - group.mean(axis=0)) @ vectors
    for j, lam in enumerate(values):
        half = np.sqrt(3 * lam)
        assert stats.kstest(coords[:, j], stats.uniform(loc=-half, scale=2 * half).cdf).pvalue > 0.001


def test_groups_have_at_least_k_rows_and_synthetic_rows_are_new():
    x = np.random.default_rng(9).normal(size=(103, 3))
    synthetic, labels = condensation(x, 5, seeded(10))
    sizes = np.bincount(labels)
    assert sizes.min() >= 5 and sizes.sum() == 103
    for g in range(sizes.size):
        rows = labels == g
        np.testing.assert_allclose(synthetic[rows].mean(axis=0), x[rows].mean(axis=0),
                                   atol=4 * x.std() / np.sqrt(rows.sum()) + 1e-9)
    assert not np.isclose(synthetic, x).all(axis=1).any()
