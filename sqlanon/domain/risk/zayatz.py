"""Zayatz's estimate of the population uniques (ARX's ``ModelZayatz``).

The share of sample uniques that are population uniques is estimated from the hypergeometric chance
that a class of each size contributes exactly one record to the sample; the uniques are the sample
uniques scaled by that share and by 1/f.

Zayatz LV. Estimation of the number of unique population elements using a sample. Proceedings of
the Survey Research Methods Section, American Statistical Association, 1991.
"""

from __future__ import annotations

import numpy as np

from sqlanon.domain.risk.histogram import SizeHistogram
from sqlanon.domain.risk.special import hypergeometric_one

_INT_MAX = 2**31 - 1


def zayatz(histogram: SizeHistogram, population: int) -> float:
    n = histogram.records
    # ARX passes N and n to Commons Math as Java ints, clamped at Integer.MAX_VALUE.
    big_n, small_n = min(population, _INT_MAX), min(n, _INT_MAX)
    u = float(histogram.classes)
    c1 = float(histogram.classes_of_size(1))
    chance = hypergeometric_one(big_n, histogram.sizes, small_n)
    temp = float(np.sum((histogram.counts / u) * chance))
    unique_chance = float(hypergeometric_one(big_n, np.array([1]), small_n)[0])
    uniqueness = (c1 / u * unique_chance) / temp
    return c1 * uniqueness / (n / population)
