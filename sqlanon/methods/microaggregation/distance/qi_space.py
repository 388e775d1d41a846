"""Distances between records on their quasi-identifiers, for algorithms that build groups row by row.

Two spaces answer the same three questions (the point of a row, the centroid of some rows, squared
distances from a point to some rows):

* :class:`NumericSpace`, numeric and ordinal-rank columns only: squared Euclidean distance on columns
  weighted by 1/population variance, MDAV's scaling in sdcMicro;
* :class:`MixedSpace`, when nominal attributes are present: the normalized heterogeneous distance of
  Database Anonymization (2016), eq. 9.7, with the semantic distance (eq. 9.6) and the marginality
  centroid (eq. 9.4) for nominal attributes that have a hierarchy, equality and the mode otherwise
  (:mod:`sqlanon.methods.microaggregation.distance.heterogeneous`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from sqlanon.errors import SpecError
from sqlanon.methods.microaggregation.distance.heterogeneous import MixedRecords
from sqlanon.methods.microaggregation.records import Records
from sqlanon.methods.microaggregation.validate import as_matrix


def sdc_weights(x: np.ndarray) -> np.ndarray:
    """Column weights 1 / population variance, computed as sdcMicro does (row-order sums).

    Raises:
        SpecError: a column is so nearly constant that its variance cannot be computed.
    """
    n = x.shape[0]
    w = np.ones(x.shape[1])
    for j in range(x.shape[1]):
        col = x[:, j]
        mean = np.cumsum(col)[-1] / n
        square = np.cumsum(col * col)[-1] / n
        variance = square - mean * mean
        if variance != 0.0:
            with np.errstate(over="ignore"):  # a subnormal variance: refused just below
                w[j] = 1.0 / variance
        if not np.isfinite(w[j]) or (w[j] < 0 and col.max() != col.min()):
            raise SpecError(f"column {j}: its variance cannot be computed in double precision "
                            f"(values too large or too close to constant); rescale it", path="mdav.x")
        if col.max() == col.min():
            w[j] = abs(w[j])
    return w


def scaled(x: np.ndarray) -> np.ndarray:
    """Columns centred and multiplied by sqrt(1 / population variance), as MDAV weighs them."""
    return (x - x.mean(axis=0)) * np.sqrt(sdc_weights(x))


class NumericSpace:
    """Numeric quasi-identifiers under MDAV's variance-weighted squared Euclidean distance."""

    def __init__(self, x: np.ndarray) -> None:
        self.x = x
        self.z = scaled(x)
        self.n = len(x)

    def point(self, row: int) -> np.ndarray:
        return self.z[row]

    def centroid(self, rows: np.ndarray) -> np.ndarray:
        return self.z[rows].mean(axis=0)

    def squared(self, point: np.ndarray, rows: np.ndarray) -> np.ndarray:
        diff = self.z[rows] - point
        return np.einsum("ij,ij->i", diff, diff)

    def centroid_distances(self, point: np.ndarray, centroids: list[Any]) -> np.ndarray:
        """Squared distances from ``point`` to other centroids."""
        diff = np.asarray(centroids) - point
        return np.einsum("ij,ij->i", diff, diff)


class MixedSpace:
    """Numeric, ordinal and nominal quasi-identifiers under eq. 9.7 (data ranges as domain bounds)."""

    def __init__(self, records: Records) -> None:
        self.m = MixedRecords(records)
        self.n = self.m.n
        self.sizes = [len(s.column.values) for s in self.m.spaces]

    def _columns(self, rows: np.ndarray) -> tuple[list[np.ndarray], list[np.ndarray]]:
        return [c[rows] for c in self.m.columns], [c[rows] for c in self.m.codes]

    def point(self, row: int) -> Any:
        return self.m.point(int(row))

    def centroid(self, rows: np.ndarray) -> Any:
        columns, codes = self._columns(rows)
        counts = [np.bincount(c, minlength=s).astype(np.float64) for c, s in zip(codes, self.sizes)]
        return self.m.centroid(columns, counts)

    def squared(self, point: Any, rows: np.ndarray) -> np.ndarray:
        columns, codes = self._columns(rows)
        return self.m.squared(point, columns, codes)


def qi_space(records: Records, k: object, where: str) -> NumericSpace | MixedSpace:
    """The space of the records' quasi-identifiers, after checking them and ``k``.

    Raises:
        SpecError: no quasi-identifier, ``k`` not in ``1..n``, NaN or infinite values.
    """
    if records.nominal:
        space = MixedSpace(records)
        as_matrix(np.zeros((space.n, 1)), k, where)  # k against the row count
        return space
    return NumericSpace(as_matrix(records.x, k, where))
