"""Checks of mechanism parameters and values; a :class:`~sqlanon.errors.SpecError` names the parameter."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from sqlanon.errors import SpecError


def positive(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise SpecError(f"must be a positive number, got {type(value).__name__}", path=name)
    value = float(value)
    if not math.isfinite(value) or value <= 0:
        raise SpecError(f"must be a positive finite number, got {value!r}", path=name)
    return value


def check_epsilon(epsilon: Any, name: str = "epsilon") -> float:
    """``epsilon`` as a float after checking it is positive and finite."""
    return positive(epsilon, name)


def check_delta(delta: Any, name: str = "delta") -> float:
    """``delta`` as a float after checking it lies strictly between 0 and 1."""
    if isinstance(delta, bool) or not isinstance(delta, (int, float, np.integer, np.floating)):
        raise SpecError(f"must be a number in (0, 1), got {type(delta).__name__}", path=name)
    delta = float(delta)
    if not 0.0 < delta < 1.0:
        raise SpecError(f"must lie strictly between 0 and 1, got {delta!r}", path=name)
    return delta


def float_values(values: Any, name: str = "values") -> np.ndarray:
    arr = np.asarray(values)
    if arr.dtype == bool or not (np.issubdtype(arr.dtype, np.integer)
                                 or np.issubdtype(arr.dtype, np.floating)):
        raise SpecError(f"must be numeric, got dtype {arr.dtype}", path=name)
    arr = arr.astype(np.float64)
    bad = int(np.count_nonzero(~np.isfinite(arr)))
    if bad:
        raise SpecError(f"{bad} value(s) are NaN or infinite; remove or impute them first",
                        path=name)
    return arr


def integer_values(values: Any, name: str = "values") -> np.ndarray:
    arr = np.asarray(values)
    if np.issubdtype(arr.dtype, np.integer) and arr.dtype != bool:
        return arr.astype(np.int64)
    if np.issubdtype(arr.dtype, np.floating):
        finite = np.isfinite(arr)
        if finite.all() and np.array_equal(arr, np.round(arr)):
            return arr.astype(np.int64)
    raise SpecError(f"must be integers, got dtype {arr.dtype} with non-integer values", path=name)
