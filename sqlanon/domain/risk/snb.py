"""The shifted negative binomial (SNB) estimate of the population uniques (after ARX's ``ModelSNB``).

A population class has 1 + m members, m negative-binomial with shape α and probability β; each
member is sampled with probability f. With d = (1−f)(1−β) the expected numbers of sample classes of
size 1 and 2 among K population classes are

    E[c₁] = K f (β/(1−d))^α (α d/(1−d) + 1)
    E[c₂] = K f² α β^α (1−β) (2 − (1−α) d) / (2 (1−d)^(α+2))

(the probability generating function of m at 1−f and its derivatives). Setting them to the observed
c₁, c₂ gives (α, β); the population uniques are K β^α, K estimated by Haas and Stokes' Shlosser-type
estimator (D̂_Sh3) from the histogram. Newton–Raphson uses the exact Jacobian of these equations and
ARX's start-point schedule, starting from (1, 1); a step that would leave α > 0, 0 < β < 1 is halved
until it stays inside (ARX's solver takes full steps, which from its grid points often leave the
domain), and a root counts only inside it.

Besides the damping, two differences from ARX (3.9): ARX multiplies by (1−d)^(α+2) in the second
equation where the model divides (its Jacobian is that of the dividing form, so the iteration chases
a root its steps do not point to and, on Adult, never converges: ARX then reports 0), and in
D̂_Sh3's denominator ARX subtracts 1 per histogram entry instead of (1−f)^i·n_i
(Σ (1−f)^i((1+f)^i − 1) n_i).

Chen G, Keller-McNulty S. Estimation of identification disclosure risk in microdata. Journal of
Official Statistics 14(1), 1998. Haas PJ, Stokes L. Estimating the number of classes in a finite
population. JASA 93(444), 1998.
"""

from __future__ import annotations

import math

import numpy as np

from sqlanon.domain.risk.histogram import SizeHistogram
from sqlanon.domain.risk.newton import Matrix, Solution, System, Vector, solve


def snb(histogram: SizeHistogram, population: int) -> float:
    """The estimated number of population uniques, NaN when no valid root was found."""
    k = population_classes(histogram, histogram.records / population)
    root = snb_parameters(histogram, population)
    if not root.converged:
        return math.nan
    return float(k * root.y ** root.x)


def population_classes(histogram: SizeHistogram, f: float) -> float:
    """K: the number of non-empty population classes, Haas and Stokes' D̂_Sh3."""
    i = histogram.sizes.astype(np.float64)
    n_i = histogram.counts.astype(np.float64)
    q = 1.0 - f
    var1 = float(np.sum(i * f * f * (1.0 - f * f) ** (i - 1.0) * n_i))
    var2 = float(np.sum(q ** i * ((1.0 + f) ** i - 1.0) * n_i))
    var3 = float(np.sum(q ** i * n_i))
    var4 = float(np.sum(i * f * q ** (i - 1.0) * n_i))
    c1 = float(histogram.classes_of_size(1))
    if var2 == 0 or var4 == 0:  # f = 1 (the sample is the population) or f = 0: nothing to add
        return float(histogram.classes)
    return histogram.classes + c1 * (var1 / var2) * (var3 / var4) ** 2


def equations(k: float, f: float, c1: float, c2: float) -> System:
    """E[c₁] − c₁ and E[c₂] − c₂ at (α, β), with their exact Jacobian."""
    def evaluate(a: float, b: float) -> tuple[Vector, Matrix]:
        try:
            d = (1.0 - f) * (1.0 - b)
            big_d = 1.0 - d
            ratio = (b / big_d) ** a
            bracket = a * d / big_d + 1.0
            t1 = k * f * ratio * bracket
            da_t1 = k * f * (ratio * math.log(b / big_d) * bracket + ratio * d / big_d)
            db_t1 = k * f * (ratio * a * (1.0 / b - (1.0 - f) / big_d) * bracket
                             - ratio * a * (1.0 - f) / (big_d * big_d))
            c = 2.0 - (1.0 - a) * d
            per_alpha = k * f * f / 2.0 * b ** a * (1.0 - b) * c / big_d ** (a + 2.0)
            q = k * f * f / 2.0 * a * b ** a * c / big_d ** (a + 2.0)
            t2 = q * (1.0 - b)
            da_t2 = per_alpha + t2 * (math.log(b) + d / c - math.log(big_d))
            db_t2 = -q + t2 * (a / b + (1.0 - a) * (1.0 - f) / c - (a + 2.0) * (1.0 - f) / big_d)
        except (ZeroDivisionError, OverflowError, ValueError):
            return (math.nan, math.nan), (math.nan, math.nan, math.nan, math.nan)
        if isinstance(ratio, complex) or isinstance(per_alpha, complex):
            return (math.nan, math.nan), (math.nan, math.nan, math.nan, math.nan)
        return (t1 - c1, t2 - c2), (da_t1, db_t1, da_t2, db_t2)
    return evaluate


def snb_parameters(histogram: SizeHistogram, population: int) -> Solution:
    """(α, β) by Newton–Raphson from (1, 1) and ARX's grid; not converged if outside α > 0, 0 < β < 1."""
    f = histogram.records / population
    k = population_classes(histogram, f)
    c1, c2 = float(histogram.classes_of_size(1)), float(histogram.classes_of_size(2))
    if c1 == 0 or c2 == 0:  # E[c₂] > 0 inside the domain: no root without pairs (nor without uniques)
        return Solution(math.nan, math.nan, False, 0)
    root = solve(equations(k, f, c1, c2), (1.0, 1.0), domain=_inside)
    if root.converged and not (root.x > 0 and 0 < root.y < 1):
        return Solution(math.nan, math.nan, False, root.iterations)
    return root


def _inside(a: float, b: float) -> bool:
    return a > 0 and 0 < b < 1
