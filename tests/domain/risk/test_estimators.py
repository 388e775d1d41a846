"""ARX's special functions, the hypergeometric term, Zayatz's formula and Dankar's rule."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import special, stats

from sqlanon.domain.risk.histogram import SizeHistogram
from sqlanon.domain.risk.newton import START_GRID
from sqlanon.domain.risk.population import PopulationModel, estimate
from sqlanon.domain.risk.special import (
    digamma,
    digamma_array,
    hypergeometric_one,
    trigamma,
    trigamma_array,
)
from sqlanon.domain.risk.zayatz import zayatz
from sqlanon.errors import SpecError


@given(st.floats(min_value=1e-5, max_value=1e6))
def test_digamma_series_is_accurate_and_the_array_form_is_identical(x):
    assert digamma(x) == pytest.approx(float(special.digamma(x)), rel=1e-9, abs=1e-9)
    assert digamma_array(np.array([x]))[0] == digamma(x)
    assert trigamma_array(np.array([x]))[0] == trigamma(x)


def test_trigamma_keeps_arx_missing_tail_below_twelve():
    # Below 12 ARX's series stops at the partial sum Σ_{k<8-x} 1/(x+k)²: no asymptotic tail.
    assert trigamma(3.5) == pytest.approx(sum(1 / (3.5 + k) ** 2 for k in range(5)), rel=1e-15)
    assert trigamma(20.0) == pytest.approx(float(special.polygamma(1, 20.0)), rel=1e-12)


def test_start_grid_is_arx_four_by_four():
    assert len(START_GRID) == 16
    assert START_GRID[0] == (0.0, 0.0) and START_GRID[-1] == pytest.approx((0.99, 0.99))


@pytest.mark.parametrize(("big_n", "n"), [(1000, 50), (317_238_626, 30_162)])
def test_hypergeometric_term_is_exact(big_n, n):
    sizes = [1, 2, 40]
    total = math.comb(big_n, n)
    exact = [float(Fraction(k * math.comb(big_n - k, n - 1), total)) for k in sizes]
    assert hypergeometric_one(big_n, np.array(sizes), n) == pytest.approx(exact, rel=1e-12)


def test_zayatz_by_its_definition():
    h = SizeHistogram.of({1: 6, 2: 3, 4: 1})
    big_n = 400
    n, u = h.records, h.classes
    p = {s: stats.hypergeom.pmf(1, big_n, s, n) for s in (1, 2, 4)}
    share = (6 / u * p[1]) / sum(c / u * p[s] for s, c in h.as_dict().items())
    assert zayatz(h, big_n) == pytest.approx(6 * share / (n / big_n), rel=1e-9)


def test_no_sample_uniques_means_no_population_uniques():
    e = estimate(SizeHistogram.of({2: 5, 3: 1}), 1000)
    assert [e.of(x).uniques for x in ("zayatz", "pitman", "snb", "dankar")] == [0.0] * 4
    assert all(e.of(x).as_dict()["converged"] for x in ("zayatz", "pitman", "snb", "dankar"))
    assert not estimate(SizeHistogram.of({1: 50}), 100_000).pitman.converged


def test_dankar_above_ten_percent_takes_the_smaller_of_zayatz_and_snb(adult_histogram):
    e = estimate(adult_histogram, round(adult_histogram.records / 0.3))
    assert e.snb.available and e.zayatz.available
    assert e.dankar.uniques == min(e.snb.uniques, e.zayatz.uniques)
    assert e.dankar_model == ("snb" if e.snb.uniques <= e.zayatz.uniques else "zayatz")


def test_dankar_falls_back_to_zayatz_when_pitman_fails():
    # A histogram of uniques only has no Pitman solution (the start point is NaN: no pairs, c2 := 1).
    e = estimate(SizeHistogram.of({1: 50}), 100_000)
    assert not e.pitman.available and e.dankar_model == "zayatz"
    assert e.dankar.uniques == e.zayatz.uniques
    off = estimate(SizeHistogram.of({1: 50}), 100_000, zayatz_fallback=False)
    assert math.isnan(off.dankar.uniques) and off.dankar.fraction == 0.0


@pytest.mark.parametrize(("kwargs", "key"), [
    ({"sampling_fraction": 0}, "population.sampling_fraction"),
    ({"sampling_fraction": 1.5}, "population.sampling_fraction"),
    ({"population": 10}, "population.size"),
    ({"population": "mars"}, "population.size"),
    ({}, "population"),
    ({"population": 1000, "sampling_fraction": 0.1}, "population"),
])
def test_population_model_errors_name_the_key(kwargs, key):
    with pytest.raises(SpecError) as err:
        PopulationModel.of(100, **kwargs)
    assert err.value.path == key


def test_population_model_from_a_sampling_fraction_rounds_as_arx():
    assert PopulationModel.of(30_162, sampling_fraction=0.01).size == 3_016_200
    assert PopulationModel.of(30_162, population="USA").size == 317_238_626


@given(st.dictionaries(st.integers(1, 60), st.integers(1, 40), min_size=1, max_size=8),
       st.floats(min_value=1e-6, max_value=1.0))
def test_every_histogram_gets_finite_estimates_or_none(histogram, fraction):
    h = SizeHistogram.of(histogram)
    e = estimate(h, max(round(h.records / fraction), h.records))
    for name in ("zayatz", "pitman", "snb", "dankar"):
        u = e.of(name)
        assert math.isfinite(u.fraction) and u.fraction >= 0, name
    assert e.zayatz.available == (h.classes_of_size(1) > 0)
