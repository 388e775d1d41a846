"""The power-of-two grid γ the Gaussian and staircase mechanisms release on, and exact rounding to it."""

from __future__ import annotations

import math
from typing import Any

import numpy as np


def granularity(sensitivity: float, coordinates: int = 1) -> float:
    """γ, the grid of the Gaussian and staircase releases: the largest power of two not above
    Δ/(1024·√d) for a d-value release, so that rounding to it raises the sensitivity by at most
    Δ/1024."""
    return 2.0 ** math.floor(math.log2(sensitivity / (1024.0 * math.sqrt(coordinates))))


def release_grid(sensitivity: float, coordinates: int = 1, *, integer: bool = False
                 ) -> tuple[float, float]:
    """The grid γ of a release of ``coordinates`` values and the l2 sensitivity of those values
    once rounded to it, Δ + γ·√d (per coordinate the rounding moves each of two neighbours' values
    by at most γ/2).

    ``integer``: the values are integers (an integer type, a public fact) and Δ is an integer, so
    they lie on the grid γ = 1 already and keep their sensitivity. The choice never depends on the
    values themselves.
    """
    if integer and float(sensitivity).is_integer():
        return 1.0, sensitivity
    d = max(1, int(coordinates))
    grid = granularity(sensitivity, d)
    return grid, sensitivity + grid * math.sqrt(d)


def is_integer(values: Any) -> bool:
    return np.asarray(values).dtype.kind in "iu"


def round_half_up(scaled: np.ndarray) -> np.ndarray:
    """⌊q + 1/2⌋ computed exactly: k·γ + round(N/γ)·γ is then exactly k·γ + N rounded to the grid
    (rounding half up commutes with integer shifts; numpy's rint, half to even, does not)."""
    low = np.floor(scaled)
    return low + (scaled - low >= 0.5)
