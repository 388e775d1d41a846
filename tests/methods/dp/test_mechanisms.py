"""DP mechanisms against their exact distributions, empirical privacy-loss ratios, and parameter checks."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from sqlanon.errors import SpecError
from sqlanon.methods.dp import mechanisms as m
from sqlanon.methods.rng import ReproducibleNoiseWarning, make_rng


def seeded(seed: int) -> np.random.Generator:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ReproducibleNoiseWarning)
        return make_rng(seed)


def max_log_ratio(a: np.ndarray, b: np.ndarray, min_count: int = 400) -> tuple[float, float]:
    """The largest |ln(P_a/P_b)| over output values seen often in both samples, and its sampling
    allowance (4 standard errors of the log ratio of two Poisson counts)."""
    values = np.union1d(a, b)
    ca = np.array([np.count_nonzero(a == v) for v in values], dtype=float)
    cb = np.array([np.count_nonzero(b == v) for v in values], dtype=float)
    keep = (ca >= min_count) & (cb >= min_count)
    assert keep.sum() >= 3, "too few well-populated outputs to compare"
    ratios = np.abs(np.log((ca[keep] / a.size) / (cb[keep] / b.size)))
    worst = int(np.argmax(ratios))
    allowance = 4.0 * math.sqrt(1.0 / ca[keep][worst] + 1.0 / cb[keep][worst])
    return float(ratios[worst]), allowance


# -- generator ------------------------------------------------------------------------------------

def test_unseeded_generators_differ_run_to_run():
    draws = {tuple(make_rng().random(4)) for _ in range(5)}
    assert len(draws) == 5


def test_seeded_generator_warns_and_reproduces():
    with pytest.warns(ReproducibleNoiseWarning, match="not private against anyone who knows"):
        a = make_rng(7).random(3)
    with pytest.warns(ReproducibleNoiseWarning):
        b = make_rng(7).random(3)
    np.testing.assert_array_equal(a, b)


def test_the_generator_is_aes_in_counter_mode_and_takes_any_seed():
    from randomgen import AESCounter

    assert isinstance(make_rng().bit_generator, AESCounter)
    with pytest.warns(ReproducibleNoiseWarning):
        big = make_rng(2**200 + 3)
    assert isinstance(big.bit_generator, AESCounter) and 0 <= big.random() < 1
    with pytest.warns(ReproducibleNoiseWarning):
        first, again = make_rng(1).bit_generator.random_raw(4), make_rng(1).bit_generator.random_raw(4)
    np.testing.assert_array_equal(first, again)


@pytest.mark.parametrize("seed", [-1, 1.5, "7", True])
def test_bad_seed_is_refused(seed):
    with pytest.raises(SpecError, match="seed"):
        make_rng(seed)


# -- the uniform and Laplace samplers -------------------------------------------------------------

def test_full_precision_uniform_is_uniform_and_reaches_small_binades():
    u = m.uniform_full_precision(seeded(1), 2_000_000)
    assert 0.0 < u.min() and u.max() < 1.0
    assert stats.kstest(u, "uniform").pvalue > 0.001
    # Pr(u < 2^-k) = 2^-k, also past the 11 bits of a word's own zero run (k ≥ 12)
    for k in (1, 4, 8, 11, 12, 14, 16):
        hits = np.count_nonzero(u < 2.0 ** -k)
        assert stats.binomtest(hits, u.size, 2.0 ** -k).pvalue > 0.001


def test_small_uniforms_carry_full_mantissas():
    u = m.uniform_full_precision(seeded(3), 2_000_000)
    small = u[u < 2.0 ** -10]
    # rng.random() returns multiples of 2^-53; these carry 52 bits below their own leading bit.
    assert np.count_nonzero((small * 2.0 ** 53) % 1.0 != 0) > 0.9 * small.size


@pytest.mark.parametrize("scale", [0.3, 1.0, 25.0])
def test_raw_laplace_sampler_matches_laplace_distribution(scale):
    draws = m.sample_laplace(seeded(4), 200_000, scale)
    assert stats.kstest(draws, stats.laplace(scale=scale).cdf).pvalue > 0.001


# -- snapping Laplace -----------------------------------------------------------------------------

def test_snapping_grid_is_smallest_power_of_two_at_least_lambda():
    for eps in (0.01, 0.3, 1.0, 3.0):
        scale, grid = m.snapping_parameters(1.0, eps, 1000.0)
        assert scale >= 1.0 / eps
        assert grid >= scale and grid / 2 < scale
        assert math.log2(grid) == int(math.log2(grid))
        # The inflated scale makes Mironov's bound (1/λ + 2^-49·B/λ) equal the requested ε.
        assert (1.0 + 2.0 ** -49 * 1000.0) / scale == pytest.approx(eps, rel=1e-12)


@settings(max_examples=60)
@given(values=st.lists(st.floats(-1e6, 1e6), min_size=1, max_size=40),
       epsilon=st.floats(0.05, 5.0), bound=st.floats(1.0, 1e5), sensitivity=st.sampled_from(
           [0.25, 1.0, 4.0]))
def test_snapping_output_is_on_the_grid_and_within_the_bound(values, epsilon, bound, sensitivity):
    out = m.laplace(np.array(values), sensitivity, epsilon, seeded(5), bound=bound)
    assert np.all(np.abs(out) <= bound)
    _, grid = m.snapping_parameters(1.0, epsilon, bound / sensitivity)
    on_grid = np.isclose((out / sensitivity / grid) % 1.0, 0.0) | np.isclose(np.abs(out), bound)
    assert on_grid.all()


def test_snapping_matches_the_rounded_laplace_distribution():
    eps, bound = 0.5, 1000.0
    out = m.laplace(np.zeros(200_000), 1.0, eps, seeded(6), bound=bound)
    scale, grid = m.snapping_parameters(1.0, eps, bound)
    cells = np.arange(-12, 13)
    law = stats.laplace(scale=scale)
    expected = law.cdf((cells + 0.5) * grid) - law.cdf((cells - 0.5) * grid)
    expected = np.append(expected, 1.0 - expected.sum()) * out.size
    observed = np.array([np.count_nonzero(out == c * grid) for c in cells])
    observed = np.append(observed, out.size - observed.sum())
    assert stats.chisquare(observed, expected).pvalue > 0.001


def test_snapping_privacy_loss_on_neighbours_within_e_epsilon():
    eps = 1.0
    a = m.laplace(np.zeros(300_000), 1.0, eps, seeded(7), bound=64.0)
    b = m.laplace(np.ones(300_000), 1.0, eps, seeded(8), bound=64.0)
    worst, allowance = max_log_ratio(a, b)
    assert worst <= eps + allowance
    assert worst > 0.3 * eps  # the two neighbours are distinguishable at all


def test_snapping_with_an_interval_bound():
    out = m.laplace(np.array([17.0, 90.0, 200.0]), 1.0, 1.0, seeded(9), bound=(0.0, 120.0))
    assert np.all((out >= 0.0) & (out <= 120.0))


# -- discrete Laplace -----------------------------------------------------------------------------

def test_discrete_laplace_matches_two_sided_geometric():
    eps, sens = 0.7, 2
    out = m.discrete_laplace(np.zeros(200_000, dtype=int), sens, eps, seeded(10))
    assert out.dtype == np.int64
    alpha = math.exp(-eps / sens)
    support = np.arange(-15, 16)
    pmf = (1 - alpha) / (1 + alpha) * alpha ** np.abs(support)
    expected = np.append(pmf, 1 - pmf.sum()) * out.size
    observed = np.array([np.count_nonzero(out == v) for v in support])
    observed = np.append(observed, out.size - observed.sum())
    assert stats.chisquare(observed, expected).pvalue > 0.001


def test_discrete_laplace_privacy_loss_on_neighbours():
    eps = 0.8
    a = m.discrete_laplace(np.full(300_000, 10), 1, eps, seeded(11))
    b = m.discrete_laplace(np.full(300_000, 11), 1, eps, seeded(12))
    worst, allowance = max_log_ratio(a, b)
    assert worst <= eps + allowance
    assert worst > 0.5 * eps


def test_discrete_laplace_refuses_fractions():
    with pytest.raises(SpecError, match="values: must be integers"):
        m.discrete_laplace(np.array([1.5]), 1, 1.0, seeded(0))
    with pytest.raises(SpecError, match="sensitivity"):
        m.discrete_laplace(np.array([1]), 0, 1.0, seeded(0))


# -- Gaussian -------------------------------------------------------------------------------------

def _analytic_delta(sigma, sens, eps):
    norm = stats.norm
    return norm.cdf(sens / (2 * sigma) - eps * sigma / sens) - math.exp(eps) * norm.cdf(
        -sens / (2 * sigma) - eps * sigma / sens)


@pytest.mark.parametrize(("sens", "eps", "delta"), [(1.0, 0.5, 1e-5), (3.0, 2.0, 1e-6),
                                                     (0.1, 8.0, 1e-3)])
def test_gaussian_sigma_is_the_tightest_analytic_calibration(sens, eps, delta):
    sigma = m.gaussian_sigma(sens, eps, delta)
    assert _analytic_delta(sigma, sens, eps) <= delta * (1 + 1e-9)
    assert _analytic_delta(sigma * 0.999, sens, eps) > delta
    if eps < 1:
        assert sigma < sens * math.sqrt(2 * math.log(1.25 / delta)) / eps


def test_gaussian_noise_is_normal_with_that_sigma():
    sigma = m.gaussian_sigma(1.0, 1.0, 1e-5)
    out = m.gaussian(np.full(100_000, 3.0), 1.0, 1.0, 1e-5, seeded(13))
    assert stats.kstest(out - 3.0, stats.norm(scale=sigma).cdf).pvalue > 0.001


def test_gaussian_rounded_noise_follows_the_rounded_normal_exactly():
    """x on the grid moves by R grid steps, Pr(R = r) = Φ((r + ½)γ/σ) − Φ((r − ½)γ/σ)."""
    grid, sigma = m.gaussian_parameters(1.0, 1.0, 1e-5, 200_000)   # one vector of 200,000 values
    steps = (m.gaussian(np.full(200_000, 3.0), 1.0, 1.0, 1e-5, seeded(40)) - 3.0) / grid
    np.testing.assert_array_equal(steps, np.rint(steps))
    edges = np.unique(np.quantile(steps, np.linspace(0, 1, 41)[1:-1]))
    cdf = stats.norm.cdf((edges + 0.5) * grid / sigma)     # Pr(R <= edge)
    expected = np.diff(np.concatenate([[0.0], cdf, [1.0]])) * steps.size
    observed = np.bincount(np.searchsorted(edges, steps, side="left"), minlength=len(edges) + 1)
    assert stats.chisquare(observed, expected).pvalue > 0.001


@pytest.mark.parametrize("mechanism", ["gaussian", "staircase"])
def test_outputs_are_grid_points_whatever_the_inputs_low_bits(mechanism):
    """Mironov's attack reads an input's low-order bits off x + N; on the grid there are none."""
    sens = 3.0
    x = seeded(41).uniform(-1e4, 1e4, 50_000) + 0.1       # arbitrary mantissas
    if mechanism == "gaussian":
        grid, _ = m.gaussian_parameters(sens, 1.0, 1e-6)  # one value per release
        out = np.concatenate([m.gaussian(x[i:i + 1], sens, 1.0, 1e-6, seeded(i)) for i in range(200)])
        x = x[:200]
    else:
        grid, released = m.release_grid(sens)
        assert released == sens + grid
        out = m.staircase(x, sens, 1.0, seeded(42))
    assert grid == 2.0 ** -9                                # largest power of two <= 3/1024
    np.testing.assert_array_equal(out / grid, np.rint(out / grid))
    textbook = x + seeded(43).normal(0, 1, x.size)
    assert not np.array_equal(textbook / grid, np.rint(textbook / grid))


def test_integer_values_get_integer_gaussian_noise_without_a_larger_sigma():
    assert m.gaussian_parameters(1, 0.5, 1e-6, 1000, integer=True) == (1.0, m.gaussian_sigma(1, 0.5, 1e-6))
    out = m.gaussian(np.arange(1000, dtype=np.int64), 1, 0.5, 1e-6, seeded(44))
    np.testing.assert_array_equal(out, np.rint(out))
    # a real vector of d values is rounded to a grid finer by √d, and σ covers Δ + γ·√d
    grid, sigma = m.gaussian_parameters(1.0, 0.5, 1e-6, 10_000)
    assert grid == 2.0 ** -17 and sigma == m.gaussian_sigma(1.0 + grid * 100, 0.5, 1e-6)


def test_round_half_up_commutes_with_integer_shifts():
    q = np.concatenate([seeded(45).normal(0, 50, 10_000), np.arange(-20, 20) + 0.5])
    for k in (-7.0, 0.0, 3.0, 2.0 ** 40):
        np.testing.assert_array_equal(m.round_half_up(q + k) if k != 2.0 ** 40 else
                                      m.round_half_up(q) + k, m.round_half_up(q) + k)
    assert list(m.round_half_up(np.array([-1.5, -0.5, 0.5, 1.5, 2.5]))) == [-1, 0, 1, 2, 3]


def test_gaussian_privacy_loss_on_neighbours_stays_within_delta():
    """Empirical hockey-stick divergence between x = 0 and x = Δ (binned: post-processing)."""
    eps, delta, sens = 1.0, 0.05, 1.0
    _, sigma = m.gaussian_parameters(sens, eps, delta)
    n, width = 400_000, sigma / 4
    a = np.floor(m.gaussian(np.zeros(n), sens, eps, delta, seeded(46)) / width)
    b = np.floor(m.gaussian(np.full(n, sens), sens, eps, delta, seeded(47)) / width)
    low = min(a.min(), b.min())
    pa = np.bincount((a - low).astype(int)) / n
    pb = np.bincount((b - low).astype(int), minlength=len(pa))[:len(pa)] / n
    hockey = np.maximum(pa - math.exp(eps) * pb[:len(pa)], 0).sum()
    assert hockey <= delta + 0.01
    # the same noise at a tenth of the calibrated σ breaks it
    c = np.floor((np.zeros(n) + seeded(48).normal(0, sigma / 10, n)) / width)
    d = np.floor((np.full(n, sens) + seeded(49).normal(0, sigma / 10, n)) / width)
    low = min(c.min(), d.min())
    pc = np.bincount((c - low).astype(int)) / n
    pd = np.bincount((d - low).astype(int), minlength=len(pc))[:len(pc)] / n
    assert np.maximum(pc - math.exp(eps) * pd, 0).sum() > delta + 0.05


@pytest.mark.parametrize("delta", [0, 1, -0.1, 1.5])
def test_gaussian_refuses_delta_outside_unit_interval(delta):
    with pytest.raises(SpecError, match="delta"):
        m.gaussian(np.zeros(2), 1.0, 1.0, delta, seeded(0))


# -- staircase ------------------------------------------------------------------------------------

def staircase_cdf(x: np.ndarray, sens: float, eps: float, gamma: float) -> np.ndarray:
    """CDF of the staircase density built step by step (Thm 8.9 with d = γΔ), independent of the
    sampler: M on [0, d), M·e^-ε·... on the following steps of width Δ."""
    b = math.exp(-eps)
    mass = (1 - b) / (2 * sens * (gamma + (1 - gamma) * b))
    d = gamma * sens

    def positive_part(t: float) -> float:  # ∫_0^t f
        total = mass * min(t, d)
        level, start = 1, d
        while start < t and level < 200:
            end = start + sens
            total += mass * b ** level * (min(t, end) - start)
            level, start = level + 1, end
        return total

    return np.array([0.5 + positive_part(v) if v >= 0 else 0.5 - positive_part(-v) for v in x])


@pytest.mark.parametrize(("eps", "gamma"), [(1.0, None), (0.3, 0.2), (3.0, 0.9)])
def test_staircase_matches_its_density(eps, gamma):
    sens = 2.0
    g = m.staircase_optimal_gamma(eps) if gamma is None else gamma
    out = m.staircase(np.zeros(60_000), sens, eps, seeded(14), gamma=gamma)
    assert stats.kstest(out, lambda x: staircase_cdf(np.atleast_1d(x), sens, eps, g)).pvalue > 0.001


def test_staircase_default_gamma_minimises_expected_absolute_noise():
    for eps in (0.2, 1.0, 4.0):
        g_star = m.staircase_optimal_gamma(eps)

        def expected_abs(g, eps=eps):
            # 2∫_0^∞ x f(x) dx summed step by step over Thm 8.9's density (Δ = 1, d = γ)
            b = math.exp(-eps)
            mass = (1 - b) / (2 * (g + (1 - g) * b))
            total = mass * g ** 2 / 2
            for i in range(int(80 / eps) + 10):
                low, high = g + i, g + i + 1
                total += mass * b ** (i + 1) * (high ** 2 - low ** 2) / 2
            return 2 * total

        best = expected_abs(g_star)
        for other in (max(g_star - 0.1, 0.0), min(g_star + 0.1, 1.0)):
            assert best <= expected_abs(other) + 1e-6
        assert best == pytest.approx(m.staircase_expected_abs(g_star, 1.0, eps), rel=1e-4)
        assert best < 1 / eps  # beats Laplace's E|N| = Δ/ε


def test_staircase_privacy_loss_on_neighbours():
    eps, sens = 1.0, 1.0
    a = np.floor(m.staircase(np.zeros(300_000), sens, eps, seeded(15)) * 4)
    b = np.floor(m.staircase(np.ones(300_000), sens, eps, seeded(16)) * 4)
    worst, allowance = max_log_ratio(a, b)
    assert worst <= eps + allowance


# -- exponential ----------------------------------------------------------------------------------

def test_exponential_frequencies_follow_the_scores():
    cands, scores, eps, sens = ["a", "b", "c", "d"], np.array([0.0, 1.0, 2.0, 4.0]), 1.0, 2.0
    picks = m.exponential(cands, np.tile(scores, (100_000, 1)), sens, eps, seeded(17))
    w = np.exp(eps * scores / (2 * sens))
    expected = w / w.sum() * picks.size
    observed = [np.count_nonzero(picks == c) for c in cands]
    assert stats.chisquare(observed, expected).pvalue > 0.001
    assert m.exponential(cands, scores, sens, eps, seeded(18)) in cands


def test_exponential_privacy_loss_on_neighbours():
    eps = 1.0
    cands = np.arange(5)
    u = np.array([0.0, 1.0, 2.0, 3.0, 4.0])
    u_neighbour = u + np.array([1.0, -1.0, 1.0, -1.0, 0.0])  # each score moves by ≤ Δu = 1
    a = m.exponential(cands, np.tile(u, (300_000, 1)), 1.0, eps, seeded(19)).astype(int)
    b = m.exponential(cands, np.tile(u_neighbour, (300_000, 1)), 1.0, eps,
                      seeded(20)).astype(int)
    worst, allowance = max_log_ratio(a, b)
    assert worst <= eps + allowance


def test_exponential_refuses_mismatched_scores():
    with pytest.raises(SpecError, match="scores"):
        m.exponential(["a", "b"], [1.0, 2.0, 3.0], 1.0, 1.0, seeded(0))


# -- randomized response --------------------------------------------------------------------------

def test_randomized_response_estimator_is_unbiased():
    cats = ["yes", "no", "maybe"]
    truth = np.array(["yes"] * 300 + ["no"] * 150 + ["maybe"] * 50)
    rng = seeded(21)
    estimates = np.array([
        m.rr_frequencies(m.randomized_response(truth, cats, 1.0, rng), cats, epsilon=1.0)
        for _ in range(600)])
    true_p = np.array([0.6, 0.3, 0.1])
    se = estimates.std(axis=0, ddof=1) / math.sqrt(len(estimates))
    assert np.all(np.abs(estimates.mean(axis=0) - true_p) < 4 * se)
    # A single answer set is noisy: the naive frequencies are biased towards uniform.
    naive = np.mean([[np.mean(m.randomized_response(truth, cats, 1.0, rng) == c) for c in cats]
                     for _ in range(50)], axis=0)
    assert naive[0] < 0.55


def test_warner_example_from_the_digest():
    # p = 0.75, m/n = 0.4 -> pi = 0.30 (seed 001 §4.3)
    reported = np.array(["yes"] * 40 + ["no"] * 60)
    est = m.rr_frequencies(reported, ["yes", "no"], keep_probability=0.75)
    assert est[0] == pytest.approx(0.30)


def test_randomized_response_privacy_ratio():
    p = m.rr_keep_probability(math.log(3), 2)
    assert p == pytest.approx(0.75)
    assert m.rr_epsilon(p, 2) == pytest.approx(math.log(3))
    a = m.randomized_response(np.array(["x"] * 200_000), ["x", "y", "z"], 1.2, seeded(22))
    b = m.randomized_response(np.array(["y"] * 200_000), ["x", "y", "z"], 1.2, seeded(23))
    worst, allowance = max_log_ratio(a, b)
    assert worst <= 1.2 + allowance


def test_randomized_response_errors_name_the_parameter():
    with pytest.raises(SpecError, match="exactly one of epsilon and keep_probability"):
        m.randomized_response(["a"], ["a", "b"], 1.0, seeded(0), keep_probability=0.8)
    with pytest.raises(SpecError, match="1 value"):
        m.randomized_response(["a", "O'Brien; DROP"], ["a", "b"], 1.0, seeded(0))
    with pytest.raises(SpecError, match="keep_probability"):
        m.randomized_response(["a"], ["a", "b"], rng=seeded(0), keep_probability=0.5)


# -- common parameter checks ----------------------------------------------------------------------

@pytest.mark.parametrize("eps", [0, -1.0, float("nan"), float("inf"), "1", None])
@pytest.mark.parametrize("mechanism", ["laplace", "staircase", "discrete", "gaussian"])
def test_bad_epsilon_is_refused(mechanism, eps):
    rng = seeded(0)
    with pytest.raises(SpecError, match="epsilon"):
        if mechanism == "laplace":
            m.laplace([1.0], 1.0, eps, rng, bound=10)
        elif mechanism == "staircase":
            m.staircase([1.0], 1.0, eps, rng)
        elif mechanism == "discrete":
            m.discrete_laplace([1], 1, eps, rng)
        else:
            m.gaussian([1.0], 1.0, eps, 1e-5, rng)


def test_non_finite_values_and_bad_bounds_are_refused():
    with pytest.raises(SpecError, match="values: 1 value"):
        m.laplace([1.0, float("nan")], 1.0, 1.0, seeded(0), bound=10)
    with pytest.raises(SpecError, match="bound"):
        m.laplace([1.0], 1.0, 1.0, seeded(0), bound=(5, 1))
    with pytest.raises(SpecError, match="sensitivity"):
        m.laplace([1.0], -2.0, 1.0, seeded(0), bound=10)
    with pytest.raises(SpecError, match="gamma"):
        m.staircase([1.0], 1.0, 1.0, seeded(0), gamma=1.5)


def test_binade_fields_count_trailing_zeros_across_words():
    words = np.array([0, 1, 2, 8, 0], dtype=np.uint64)
    supply = iter([np.array([4, 0], dtype=np.uint64), np.array([0], dtype=np.uint64),
                   np.array([1 << 63], dtype=np.uint64)])
    fields = m.binade_fields(words, lambda k: next(supply)[:k])
    # e − 1 trailing zeros -> field 1023 − e: 66 zeros, 0, 1, 3, and 64 + 64 + 64 + 63 zeros
    assert fields.tolist() == [1023 - 67, 1022, 1021, 1019, 1023 - 256]


def test_binade_fields_continue_a_short_run_into_fresh_words():
    words = np.array([0, 1, 0b100, 0b10000000000], dtype=np.uint64)  # 11-bit runs
    fresh = iter([np.array([8], dtype=np.uint64)])
    fields = m.binade_fields(words, lambda k: next(fresh)[:k], width=11)
    # 11 + 3 zeros, 0, 2, 10 -> e = 15, 1, 3, 11
    assert fields.tolist() == [1023 - 15, 1022, 1020, 1023 - 11]
