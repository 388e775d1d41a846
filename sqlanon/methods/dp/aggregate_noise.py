"""The mechanisms of DP aggregates, by name: how ``laplace`` and ``gaussian`` noise counts and sums,
and the :class:`Noise` one release carries (mechanism, budget share, generator)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from sqlanon.errors import SpecError
from sqlanon.methods.dp import mechanisms
from sqlanon.registry import Registry

_SUM_BOUND_UNITS = 2.0 ** 40
"""The snapped Laplace clamps a noisy sum to ±2^40·Δ (a public bound the sum cannot reach in any
table of fewer than 2^40 rows); the guarantee of snapping needs such a bound."""


class AggregateMechanism:
    """How one mechanism noises the values of aggregates: integer ones (counts) and real ones (sums)."""

    norm: int = 1
    """The norm its sensitivities are measured in (1: Laplace, 2: Gaussian)."""

    def check_delta(self, delta: float) -> None:
        """Raise unless the mechanism can spend ``delta``."""

    def integer(self, noise: Noise, values: np.ndarray, sensitivity: int) -> np.ndarray:
        raise NotImplementedError

    def real(self, noise: Noise, values: np.ndarray, sensitivity: float) -> np.ndarray:
        raise NotImplementedError

    def describe(self, noise: Noise, sensitivity: float, *, integer: bool, coordinates: int
                 ) -> dict[str, Any]:
        """The mechanism's public parameters for one noisy value."""
        raise NotImplementedError


def _unknown_mechanism(kind: str, name: str, known: Sequence[str]) -> SpecError:
    return SpecError(f"unknown mechanism {name!r}; use one of {', '.join(known)}", path="mechanism")


AGGREGATE_MECHANISMS: Registry[AggregateMechanism] = Registry("mechanism", sort=False,
                                                              unknown=_unknown_mechanism)
"""The ``mechanism`` of a DP query -> how it noises the aggregates."""


class _Laplace(AggregateMechanism):
    """Discrete Laplace on counts, snapped Laplace on sums: pure ε-DP."""

    def check_delta(self, delta: float) -> None:
        if delta != 0:
            raise SpecError(f"the Laplace mechanism is pure ε-DP and spends no delta; got delta={delta!r}"
                            " (use mechanism='gaussian' to spend delta)", path="delta")

    def integer(self, noise: Noise, values: np.ndarray, sensitivity: int) -> np.ndarray:
        return mechanisms.discrete_laplace(values, sensitivity, noise.epsilon, noise.rng)

    def real(self, noise: Noise, values: np.ndarray, sensitivity: float) -> np.ndarray:
        units = min(_SUM_BOUND_UNITS, 2.0 ** 44 / noise.epsilon)
        return mechanisms.laplace(values, sensitivity, noise.epsilon, noise.rng,
                                  bound=units * sensitivity)

    def describe(self, noise: Noise, sensitivity: float, *, integer: bool, coordinates: int
                 ) -> dict[str, Any]:
        return {"mechanism": "discrete laplace" if integer else "laplace (snapping)",
                "scale": sensitivity / noise.epsilon}


class _Gaussian(AggregateMechanism):
    """The analytic Gaussian mechanism on a grid: (ε, δ)-DP."""

    norm = 2

    def check_delta(self, delta: float) -> None:
        if not 0 < delta < 1:
            raise SpecError(f"the Gaussian mechanism needs 0 < delta < 1, got {delta!r}", path="delta")

    def integer(self, noise: Noise, values: np.ndarray, sensitivity: int) -> np.ndarray:
        noisy = mechanisms.gaussian(values, sensitivity, noise.epsilon, noise.delta, noise.rng)
        return np.rint(noisy).astype(np.int64)

    def real(self, noise: Noise, values: np.ndarray, sensitivity: float) -> np.ndarray:
        return mechanisms.gaussian(values, sensitivity, noise.epsilon, noise.delta, noise.rng)

    def describe(self, noise: Noise, sensitivity: float, *, integer: bool, coordinates: int
                 ) -> dict[str, Any]:
        # integer values need no rounding, whatever the number of coordinates released
        grid, sigma = mechanisms.gaussian_parameters(sensitivity, noise.epsilon, noise.delta,
                                                     coordinates, integer=integer)
        return {"mechanism": "gaussian", "delta": noise.delta, "sigma": sigma, "grid": grid}


AGGREGATE_MECHANISMS.add("laplace", _Laplace())
AGGREGATE_MECHANISMS.add("gaussian", _Gaussian())


@dataclass(frozen=True)
class Noise:
    """How to noise one release: the mechanism, its share of the budget and the generator."""

    mechanism: str
    epsilon: float
    delta: float
    rng: np.random.Generator
    factors: tuple[float, float] = (1.0, 1.0)
    """The l1 and l2 factors of a person's contribution over a row's (1 at row level;
    :meth:`~sqlanon.methods.dp.contribution.Contribution.factors`)."""

    def split(self, parts: int) -> Noise:
        return Noise(self.mechanism, self.epsilon / parts, self.delta / parts, self.rng, self.factors)

    def scaled(self, sensitivity: float) -> float:
        """A row's sensitivity times the contribution factor in the mechanism's norm."""
        factor = self.factors[AGGREGATE_MECHANISMS.get(self.mechanism).norm - 1]
        out = sensitivity * factor
        return int(out) if float(out).is_integer() and isinstance(sensitivity, int) else out

    def integer(self, values: np.ndarray, sensitivity: int) -> np.ndarray:
        return AGGREGATE_MECHANISMS.get(self.mechanism).integer(self, values, self.scaled(sensitivity))  # type: ignore[arg-type]

    def describe(self, part: str, sensitivity: float, *, integer: bool, coordinates: int = 1
                 ) -> dict[str, Any]:
        """The public parameters of one noisy value: what a user needs to judge its accuracy."""
        sensitivity = self.scaled(sensitivity)
        out: dict[str, Any] = {"part": part, "sensitivity": sensitivity, "epsilon": self.epsilon}
        out.update(AGGREGATE_MECHANISMS.get(self.mechanism).describe(
            self, sensitivity, integer=integer, coordinates=coordinates))
        return out

    def real(self, values: np.ndarray, sensitivity: float) -> np.ndarray:
        return AGGREGATE_MECHANISMS.get(self.mechanism).real(self, values, self.scaled(sensitivity))


def check_mechanism(mechanism: str, delta: float) -> None:
    """Raise unless ``mechanism`` is known and fits δ (Gaussian needs δ > 0, Laplace spends none)."""
    AGGREGATE_MECHANISMS.get(mechanism).check_delta(delta)
    if not math.isfinite(delta):
        raise SpecError(f"delta must be finite, got {delta!r}", path="delta")
