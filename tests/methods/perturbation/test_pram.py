"""PRAM: transition frequencies, the unbiased estimator, and invariant matrices."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from sqlanon.errors import SpecError
from sqlanon.methods.perturbation.pram import (
    check_matrix,
    estimate_frequencies,
    invariant_matrix,
    invariant_matrix_theta,
    pram,
    pram_codes,
)
from tests.methods.perturbation.helpers import seeded

P = np.array([[0.7, 0.2, 0.1], [0.1, 0.8, 0.1], [0.25, 0.25, 0.5]])


def test_transitions_follow_the_matrix_rows():
    codes = np.repeat([0, 1, 2], 30_000)
    out = pram_codes(codes, P, seeded(1))
    for k in range(3):
        observed = np.bincount(out[codes == k], minlength=3)
        assert stats.chisquare(observed, P[k] * 30_000).pvalue > 0.001


def test_estimator_is_unbiased():
    truth = np.repeat([0, 1, 2], [500, 300, 200])
    rng = seeded(2)
    estimates = np.array([estimate_frequencies(np.bincount(pram_codes(truth, P, rng), minlength=3), P)
                          for _ in range(800)])
    se = estimates.std(axis=0, ddof=1) / np.sqrt(len(estimates))
    assert np.all(np.abs(estimates.mean(axis=0) - [500, 300, 200]) < 4 * se)
    raw = np.bincount(pram_codes(truth, P, rng), minlength=3)
    assert raw[0] < 450  # the published counts alone are biased


@pytest.mark.parametrize("build", ["sdcmicro", "theta"])
def test_invariant_matrices_keep_the_marginal(build):
    counts = np.array([600.0, 250.0, 100.0, 50.0])
    r = invariant_matrix(counts, seeded(3)) if build == "sdcmicro" else invariant_matrix_theta(counts, 0.6)
    np.testing.assert_allclose(r.sum(axis=1), 1.0, atol=1e-12)
    assert (r >= 0).all()
    np.testing.assert_allclose(counts @ r, counts, rtol=1e-12)
    # applying it leaves the expected published marginal at the original one
    truth = np.repeat(np.arange(4), counts.astype(int))
    rng = seeded(4)
    published = np.array([np.bincount(pram_codes(truth, r, rng), minlength=4) for _ in range(400)])
    se = published.std(axis=0, ddof=1) / np.sqrt(len(published))
    assert np.all(np.abs(published.mean(axis=0) - counts) < 4 * se + 1e-9)
    assert (published.std(axis=0) > 0).any()  # values did move


def test_seed_construction_matches_its_formula():
    counts = np.array([50.0, 30.0, 20.0])
    r = invariant_matrix_theta(counts, 0.5)
    assert r[0, 0] == pytest.approx(1 - 0.5 * 20 / 50)
    assert r[0, 1] == pytest.approx(0.5 * 20 / (2 * 50))


def test_values_keep_missing_and_refuse_unknown():
    out = pram(["a", None, "b"], ["a", "b"], [[1, 0], [0, 1]], seeded(5))
    assert out == ["a", None, "b"]
    with pytest.raises(SpecError, match="1 value"):
        pram(["a", "z"], ["a", "b"], [[1, 0], [0, 1]], seeded(5))


@pytest.mark.parametrize(("matrix", "message"), [
    ([[0.5, 0.6], [0, 1]], "row 1 sums"), ([[1, 0]], "must be 2 x 2"), ([[-0.1, 1.1], [0, 1]], ">= 0")])
def test_bad_matrices_are_refused(matrix, message):
    with pytest.raises(SpecError, match=message):
        check_matrix(matrix, 2)


def test_singular_matrix_cannot_be_inverted():
    with pytest.raises(SpecError, match="singular"):
        estimate_frequencies([5, 5], [[0.5, 0.5], [0.5, 0.5]])
