"""V-MDAV: group sizes, the gain factor, and SSE against MDAV on clustered data."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sqlanon.errors import SpecError
from sqlanon.methods.microaggregation.algorithms.mdav import microaggregate
from sqlanon.methods.microaggregation.algorithms.vmdav import vmdav, vmdav_groups, vmicroaggregate


def _clusters(sizes: list[int], seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Tight clusters (spread 0.01) around centres 10 apart on a 3-D grid; returns rows and cluster ids."""
    rng = np.random.default_rng(seed)
    centres = np.array(list(itertools.product(range(4), repeat=3)), dtype=float)[: len(sizes)] * 10
    rows, ids = [], []
    for c, size in enumerate(sizes):
        rows.append(centres[c] + rng.normal(scale=0.01, size=(size, 3)))
        ids += [c] * size
    return np.vstack(rows), np.array(ids)


def _within_cluster_sse(x: np.ndarray, ids: np.ndarray) -> float:
    return float(sum(((x[ids == c] - x[ids == c].mean(axis=0)) ** 2).sum() for c in np.unique(ids)))


def test_clusters_of_k_plus_one_are_found_and_beat_mdav():
    # 20 clusters of 4 rows, k = 3: MDAV's groups of exactly 3 must split clusters; V-MDAV with a
    # gain factor for clustered data grows each group to its whole cluster
    x, ids = _clusters([4] * 20, seed=1)
    result = vmicroaggregate(x, 3, gamma=1.1)
    assert sorted(map(sorted, vmdav_groups(x, 3, gamma=1.1))) == \
        sorted(np.flatnonzero(ids == c).tolist() for c in range(20))
    assert result.sse(x) == pytest.approx(_within_cluster_sse(x, ids), rel=1e-9)
    assert result.sse(x) < microaggregate(x, 3).sse(x) / 100


@pytest.mark.parametrize("seed", range(5))
def test_sse_not_above_mdav_on_clustered_data(seed):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(3, 6, size=24).tolist()        # cluster sizes 3..5, k = 3
    x, _ = _clusters(sizes, seed)
    assert vmicroaggregate(x, 3, gamma=1.1).sse(x) <= microaggregate(x, 3).sse(x)


def test_gamma_zero_gives_groups_of_k():
    x, _ = _clusters([4] * 10, seed=2)
    sizes = np.bincount(vmdav(x, 3, gamma=0.0))
    assert (sizes[:-1] == 3).all() and 3 <= sizes[-1] <= 5


def test_worked_example_one_dimension():
    # mean 4.65; 0.0 and 9.3 are equally far, the first row wins; group {0, 0.1, 0.2};
    # e_min = 0.3 with d_in = 0.1 < 1.1 * 8.7 (its distance to 9.0) joins; 9.0 has d_in 8.7 > 1.1 * 0.1
    x = np.array([[0.0], [0.1], [0.2], [0.3], [9.0], [9.1], [9.2], [9.3]])
    assert [g.tolist() for g in vmdav_groups(x, 3, gamma=1.1)] == [[0, 1, 2, 3], [4, 5, 6, 7]]


@st.composite
def inputs(draw):
    n = draw(st.integers(1, 40))
    k = draw(st.integers(1, min(n, 6)))
    # on a grid of 1e-6: values like 5e-161 make the variance underflow, which MDAV's weighting
    # refuses on purpose (test_mdav.py::test_a_variance_that_underflows_is_refused)
    value = st.floats(-50, 50, allow_nan=False).map(lambda v: round(v, 6))
    rows = draw(st.lists(st.lists(value, min_size=2, max_size=2), min_size=n, max_size=n))
    gamma = draw(st.sampled_from([0.0, 0.2, 1.1, 5.0]))
    return np.array(rows), k, gamma


@settings(max_examples=100, deadline=None)
@given(inputs())
def test_every_group_has_k_to_2k_minus_1_rows(case):
    x, k, gamma = case
    result = vmicroaggregate(x, k, gamma)
    sizes = result.sizes
    assert sizes.sum() == len(x)
    if len(x) < 2 * k:
        assert sizes.tolist() == [len(x)]
    else:
        assert sizes.min() >= k and sizes.max() <= 2 * k - 1
    assert np.allclose(result.masked.mean(axis=0), x.mean(axis=0), atol=1e-9)


@pytest.mark.parametrize(("gamma", "message"), [
    (-0.1, r"vmdav\.gamma: gamma must be a finite number >= 0, got -0\.1"),
    (float("nan"), r"vmdav\.gamma: gamma must be a finite number >= 0, got nan"),
    ("1", r"vmdav\.gamma: gamma must be a finite number >= 0, got '1'"),
])
def test_bad_gamma(gamma, message):
    with pytest.raises(SpecError, match=message):
        vmdav(np.zeros((4, 1)), 2, gamma)


def test_bad_k_and_data():
    with pytest.raises(SpecError, match=r"vmdav\.k: k must be >= 1, got 0"):
        vmdav(np.zeros((4, 1)), 0)
    with pytest.raises(SpecError, match=r"vmdav\.x: column 0 has a NaN value"):
        vmdav(np.array([[np.nan], [1.0]]), 1)
