"""Input checks shared by the microaggregation functions."""

from __future__ import annotations

import numpy as np

from sqlanon.errors import SpecError


def as_matrix(x: object, k: object, where: str) -> np.ndarray:
    """Return ``x`` as a C-contiguous ``(n, m)`` float64 array after checking it and ``k``.

    Args:
        x: a 2-D array-like of numbers (a 1-D one is taken as one column).
        k: the minimum group size.
        where: the caller's name, used as the key path in messages.

    Raises:
        SpecError: ``k`` is not an integer in ``1..n``, or ``x`` is empty, not numeric, or holds
            NaN or infinite values.
    """
    arr = np.asarray(x)
    if arr.ndim == 1:
        arr = arr.reshape(-1, 1)
    if arr.ndim != 2:
        raise SpecError(f"data must be a 2-D array (rows x columns), got {arr.ndim} dimensions",
                        path=f"{where}.x")
    if arr.dtype == bool or not (np.issubdtype(arr.dtype, np.integer)
                                 or np.issubdtype(arr.dtype, np.floating)):
        raise SpecError(f"data must be numeric, got dtype {arr.dtype}", path=f"{where}.x")
    n, m = arr.shape
    if n == 0 or m == 0:
        raise SpecError(f"data is empty ({n} rows x {m} columns)", path=f"{where}.x")
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
        raise SpecError(f"k must be an integer, got {k!r}", path=f"{where}.k")
    if k < 1:
        raise SpecError(f"k must be >= 1, got {k}", path=f"{where}.k")
    if k > n:
        raise SpecError(f"k = {k} is larger than the number of rows ({n})", path=f"{where}.k")
    data = np.ascontiguousarray(arr, dtype=np.float64)
    bad = ~np.isfinite(data)
    if bad.any():
        row, column = np.argwhere(bad)[0]
        kind = "a NaN" if np.isnan(data[row, column]) else "an infinite"
        raise SpecError(f"column {column} has {kind} value (first at row {row}); "
                        f"remove or impute missing values first", path=f"{where}.x")
    return data
