"""Differential-privacy mechanisms: each one function stating its guarantee and what it assumes.

Every mechanism takes a :class:`numpy.random.Generator` (see :func:`sqlanon.methods.rng.make_rng`),
checks its parameters (a :class:`~sqlanon.errors.SpecError` names the parameter) and works on whole
numpy arrays. "Sensitivity" is always the global sensitivity of the released quantity under the
neighbouring relation the caller uses (seed 000 Def 8.4: the largest change when one record
changes); the mechanisms cannot check it.

Floating-point safety: the continuous Laplace mechanism is Mironov's *snapping mechanism*
(Mironov 2012, "On significance of the least significant bits for differential privacy", §5.2).
Adding textbook floating-point Laplace noise to a value leaks it: the set of doubles the sum can take
depends on the value's low-order bits. Snapping clamps, adds Laplace noise drawn from a uniform
variate with the full precision of a double, and rounds to a power-of-two grid Λ, so the possible
outputs are the same for every input. The discrete mechanisms produce integers, whose support has no
gaps to leak through. The Gaussian and staircase mechanisms release on a power-of-two grid γ
(:func:`granularity`): the value is rounded to the grid, and the noise, calibrated to the
sensitivity plus the rounding's γ, is rounded to the grid too, so their outputs are grid points
whatever the input's low-order bits.

One module per mechanism (:mod:`.laplace`, :mod:`.discrete_laplace`, :mod:`.gaussian`,
:mod:`.staircase`, :mod:`.exponential`, :mod:`.randomized_response`), with the parameter checks
(:mod:`.checks`), the full-precision uniform draws (:mod:`.bits`) and the release grid (:mod:`.grid`)
they share; the names below are the package's interface.
"""

from __future__ import annotations

from sqlanon.methods.dp.mechanisms.bits import binade_fields, random_signs, uniform_full_precision
from sqlanon.methods.dp.mechanisms.checks import check_delta, check_epsilon
from sqlanon.methods.dp.mechanisms.discrete_laplace import discrete_laplace, sample_discrete_laplace
from sqlanon.methods.dp.mechanisms.exponential import exponential
from sqlanon.methods.dp.mechanisms.gaussian import gaussian, gaussian_parameters, gaussian_sigma
from sqlanon.methods.dp.mechanisms.grid import granularity, release_grid, round_half_up
from sqlanon.methods.dp.mechanisms.laplace import laplace, sample_laplace, snapping_parameters
from sqlanon.methods.dp.mechanisms.randomized_response import (
    randomized_response,
    rr_epsilon,
    rr_frequencies,
    rr_keep_probability,
)
from sqlanon.methods.dp.mechanisms.staircase import (
    sample_staircase,
    staircase,
    staircase_expected_abs,
    staircase_optimal_gamma,
)

__all__ = ["binade_fields", "check_delta", "check_epsilon", "discrete_laplace", "exponential", "gaussian",
           "gaussian_parameters", "gaussian_sigma", "granularity", "laplace", "random_signs",
           "randomized_response", "release_grid", "round_half_up", "rr_epsilon", "rr_frequencies",
           "rr_keep_probability", "sample_discrete_laplace", "sample_laplace", "sample_staircase",
           "snapping_parameters", "staircase", "staircase_expected_abs", "staircase_optimal_gamma",
           "uniform_full_precision"]
