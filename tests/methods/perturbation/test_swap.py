"""Rank swapping against a literal transcription of seed 000 Algorithm 1, and its invariants."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sqlanon.errors import SpecError
from sqlanon.methods.perturbation.swap import rank_swap, rank_swap_column
from tests.methods.perturbation.helpers import seeded


def literal_algorithm_1(x: np.ndarray, p: float, draws: np.ndarray) -> np.ndarray:
    """Algorithm 1 with a plain list of unswapped ranks; the random choice at rank i uses draws[i]."""
    present = np.flatnonzero(~np.isnan(x))
    order = present[np.argsort(x[present], kind="stable")]
    n = order.size
    window = int(p * n // 100)
    unswapped = list(range(n))
    out = x.copy()
    while unswapped:
        i = unswapped.pop(0)
        candidates = [j for j in unswapped if i < j <= min(n - 1, i + window)]
        if not candidates:
            continue
        j = candidates[int(draws[i] * len(candidates))]
        unswapped.remove(j)
        out[order[i]], out[order[j]] = x[order[j]], x[order[i]]
    return out


@settings(max_examples=80)
@given(values=st.lists(st.integers(-50, 50), min_size=1, max_size=120), p=st.floats(0.5, 100),
       seed=st.integers(0, 1000))
def test_matches_the_literal_algorithm(values, p, seed):
    x = np.array(values, dtype=float)
    expected = literal_algorithm_1(x, p, seeded(seed).random(x.size))
    np.testing.assert_array_equal(rank_swap_column(x, p, seeded(seed)), expected)


@settings(max_examples=60)
@given(values=st.lists(st.floats(-1e6, 1e6), min_size=2, max_size=300, unique=True),
       p=st.floats(1, 60), seed=st.integers(0, 1000))
def test_keeps_the_multiset_and_swaps_within_the_window(values, p, seed):
    x = np.array(values)
    y = rank_swap_column(x, p, seeded(seed))
    np.testing.assert_array_equal(np.sort(y), np.sort(x))
    rank = {v: r for r, v in enumerate(np.sort(x))}
    moved = np.array([rank[b] - rank[a] for a, b in zip(x, y)])
    assert np.all(np.abs(moved) <= int(p * x.size // 100))
    # swaps are pairwise: the value that left rank r came back from the rank it went to
    went = {rank[a]: rank[b] for a, b in zip(x, y)}
    assert all(went[went[r]] == r for r in went)


def test_missing_values_stay_in_place_and_other_columns_are_independent():
    rng = seeded(3)
    x = rng.normal(size=(1000, 2))
    x[::7, 0] = np.nan
    y = rank_swap(x, 10, rng)
    assert np.array_equal(np.isnan(y[:, 0]), np.isnan(x[:, 0]))
    for j in range(2):
        col_x, col_y = x[:, j], y[:, j]
        np.testing.assert_array_equal(np.sort(col_y[~np.isnan(col_y)]), np.sort(col_x[~np.isnan(col_x)]))
    assert 0.9 < np.mean(y[:, 1] != x[:, 1])  # nearly every value moved


def test_a_window_below_one_rank_changes_nothing():
    x = np.arange(50, dtype=float)
    np.testing.assert_array_equal(rank_swap_column(x, 1, seeded(0)), x)  # 1 % of 50 < 1 rank


@pytest.mark.parametrize("p", [0, -5, 101, "5"])
def test_bad_percentage_is_refused(p):
    with pytest.raises(SpecError, match="p: must be a percentage"):
        rank_swap_column(np.arange(5.0), p, seeded(0))
