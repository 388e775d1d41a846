"""The SNB estimator against a direct numeric solution of the same two equations (scipy)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import optimize

from sqlanon.domain.risk.histogram import SizeHistogram
from sqlanon.domain.risk.snb import equations, population_classes, snb, snb_parameters


def sampled(seed: int, classes: int, alpha: float, beta: float, f: float) -> tuple[SizeHistogram, int, int]:
    """A sample (fraction f) of a population whose class sizes are 1 + NegBin(alpha, beta)."""
    rng = np.random.default_rng(seed)
    sizes = 1 + rng.negative_binomial(alpha, beta, classes)
    sample = rng.binomial(sizes, f)
    return SizeHistogram.of_class_sizes(sample[sample > 0]), int(sizes.sum()), int((sizes == 1).sum())


def scipy_root(h: SizeHistogram, population: int) -> np.ndarray | None:
    f = h.records / population
    k = population_classes(h, f)
    system = equations(k, f, float(h.classes_of_size(1)), float(h.classes_of_size(2)))

    def fun(v):
        return np.array(system(float(v[0]), float(v[1]))[0])

    for start in [(0.5, 0.5), (1.0, 0.5), (2.0, 0.2), (0.2, 0.8), (5.0, 0.1)]:
        sol = optimize.root(fun, start, method="lm", options={"xtol": 1e-14, "ftol": 1e-14})
        if sol.success and sol.x[0] > 0 and 0 < sol.x[1] < 1 and np.all(np.abs(fun(sol.x)) < 1e-6):
            return sol.x
    return None


@pytest.mark.parametrize(("seed", "alpha", "beta", "f"), [
    (1, 0.8, 0.3, 0.2), (2, 2.0, 0.5, 0.3), (3, 0.5, 0.15, 0.5), (4, 1.5, 0.4, 0.15)])
def test_newton_root_is_the_direct_numeric_root(seed, alpha, beta, f):
    h, population, _ = sampled(seed, 20_000, alpha, beta, f)
    root = snb_parameters(h, population)
    direct = scipy_root(h, population)
    assert root.converged and direct is not None
    assert root.x == pytest.approx(direct[0], rel=1e-5)
    assert root.y == pytest.approx(direct[1], rel=1e-5)
    k = population_classes(h, h.records / population)
    assert snb(h, population) == pytest.approx(k * direct[1] ** direct[0], rel=1e-5)


@pytest.mark.parametrize("fraction", [0.01, 0.1, 0.3])
def test_adult_root_is_the_direct_numeric_root(adult_histogram, fraction):
    population = round(adult_histogram.records / fraction)
    root = snb_parameters(adult_histogram, population)
    direct = scipy_root(adult_histogram, population)
    assert root.converged and direct is not None
    assert (root.x, root.y) == pytest.approx(tuple(direct), rel=1e-5)


@pytest.mark.parametrize("point", [(0.7, 0.4), (1.8, 0.1), (0.3, 0.9)])
def test_jacobian_matches_finite_differences(point):
    system = equations(12_000.0, 0.2, 3_000.0, 900.0)
    (_, jac) = system(*point)
    step = 1e-6
    numeric = []
    for i in range(2):
        for j in range(2):
            hi = list(point)
            lo = list(point)
            hi[j] += step
            lo[j] -= step
            numeric.append((system(*hi)[0][i] - system(*lo)[0][i]) / (2 * step))
    assert jac == pytest.approx(numeric, rel=1e-5)


def test_shlosser_estimate_counts_every_class_when_everything_is_sampled():
    h = SizeHistogram.of({1: 4, 2: 3, 5: 1})
    assert population_classes(h, 1.0 - 1e-12) == pytest.approx(h.classes, rel=1e-6)
