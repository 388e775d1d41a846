"""The normalized heterogeneous record distance (eq. 9.7) and group centroids for mixed records.

Domingo-Ferrer J, Sanchez D, Soria-Comas J. Database Anonymization, Morgan & Claypool 2016,
section 9.6, eq. 9.7:

    d(x1, x2)^2 = Σ_i dist(x1_i, x2_i)^2 / dist(a_b^i, a_t^i)^2

* numeric (and ordinal-rank) attributes: ``dist`` is the absolute difference and the normalizer the
  width of the attribute's domain, ``a_t - a_b``. The book takes public bounds (its differential
  privacy setting must not read them from the data); pass them as ``bounds``, else the width is the
  data's ``max - min``. A constant attribute (width 0) adds nothing;
* nominal attributes: ``dist`` is the semantic distance (eq. 9.6) and the normalizer the distance
  between the domain boundaries of eq. 9.2/9.3
  (:meth:`~sqlanon.methods.microaggregation.distance.semantic.Taxonomy.boundaries`);
  without a hierarchy, 0/1 equality with normalizer 1
  (:mod:`sqlanon.methods.microaggregation.distance.categorical`).

Only squared distances are computed: the square root changes no comparison. A nominal attribute
has few distinct values, so the distances from one point (a record, or a centroid that may be a
generalization) to every distinct value are computed once and looked up per row.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from sqlanon.errors import SpecError, did_you_mean
from sqlanon.methods.microaggregation.distance.categorical import NominalSpace, nominal_space
from sqlanon.methods.microaggregation.records import Records

_CACHE_CELLS = 1 << 22
"""Upper bound on the cached per-point term vectors of one nominal attribute (float64 cells)."""


@dataclass(frozen=True)
class Point:
    """A record or a centroid: numeric coordinates and one point per nominal attribute."""

    numeric: np.ndarray
    nominal: tuple[int, ...]


class MixedRecords:
    """Records under eq. 9.7: column-wise data, normalizers and nominal value spaces.

    Args:
        records: the rows (numeric and ordinal-rank columns in ``x``, nominal ones in ``nominal``).
        bounds: public domain bounds ``(a_b, a_t)`` of numeric columns, by name.

    Raises:
        SpecError: no attribute, a NaN or infinite value, a nominal column whose length differs,
            bounds for an unknown column or with ``a_t <= a_b``.
        HierarchyError: a nominal value missing from its hierarchy.
    """

    def __init__(self, records: Records,
                 bounds: Mapping[str, tuple[float, float]] | None = None) -> None:
        x = np.asarray(records.x, dtype=np.float64)
        if x.ndim != 2 or x.shape[1] != len(records.names):
            raise SpecError(f"x has shape {x.shape} but {len(records.names)} names are given",
                            path="records.x")
        if x.shape[1] == 0 and not records.nominal:
            raise SpecError("there is no attribute to microaggregate",
                            path="transformation.attributes")
        self.n = records.n
        self.names = tuple(records.names)
        self.columns = [np.ascontiguousarray(x[:, j]) for j in range(x.shape[1])]
        for name, column in zip(self.names, self.columns):
            if not np.isfinite(column).all():
                raise SpecError(f"attribute {name!r} has NaN or infinite values; remove or impute "
                                "them first", path=f"attributes.{name}")
        self.widths = self._widths(bounds or {})
        self.nominal_names = tuple(records.nominal)
        self.spaces: list[NominalSpace] = []
        self.codes: list[np.ndarray] = []
        for name, nominal in records.nominal.items():
            codes = np.asarray(nominal.codes, dtype=np.int64)
            if codes.shape != (self.n,):
                raise SpecError(f"nominal attribute {name!r} has {len(codes)} codes for {self.n} "
                                "rows", path=f"attributes.{name}")
            if len(codes) and (codes.min() < 0 or codes.max() >= len(nominal.values)):
                raise SpecError(f"nominal attribute {name!r} has codes outside "
                                f"0..{len(nominal.values) - 1}", path=f"attributes.{name}")
            self.spaces.append(nominal_space(nominal, name))
            self.codes.append(codes)
        self._terms: list[dict[int, np.ndarray]] = [{} for _ in self.spaces]

    def _widths(self, bounds: Mapping[str, tuple[float, float]]) -> np.ndarray:
        for name in bounds:
            if name not in self.names:
                raise SpecError(f"bounds are given for {name!r}, which is not a numeric attribute "
                                f"({', '.join(self.names) or 'none'})"
                                + did_you_mean(name, self.names),
                                path=f"transformation.bounds.{name}")
        widths = np.ones(len(self.names))
        for j, (name, column) in enumerate(zip(self.names, self.columns)):
            if name in bounds:
                low, high = _pair(bounds[name], name)
                width = high - low
            else:
                width = float(column.max() - column.min()) if len(column) else 0.0
            widths[j] = width if width > 0 else 1.0  # a constant column: every difference is 0
        return widths

    def point(self, row: int) -> Point:
        """The point of one record."""
        return Point(np.array([c[row] for c in self.columns]),
                     tuple(int(s.point_of_code[c[row]]) for s, c in zip(self.spaces, self.codes)))

    def centroid(self, columns: list[np.ndarray], counts: list[np.ndarray],
                 marginalities: list[np.ndarray | None] | None = None) -> Point:
        """The centroid of some rows: column means; eq. 9.4 (or the mode) per nominal attribute.

        Args:
            columns: the rows' numeric columns.
            counts: per nominal attribute, the rows' count of each value code.
            marginalities: per nominal attribute with a hierarchy, the rows' marginalities if
                known (:meth:`NominalSpace.marginalities`), else None.
        """
        size = len(columns[0]) if columns else int(counts[0].sum())
        mean = np.array([c.sum() / size for c in columns])
        known = marginalities or [None] * len(self.spaces)
        return Point(mean, tuple(
            s.centroid_of_counts(np.arange(len(n)), n) if m is None
            else s.centroid_from_marginalities(m, n)
            for s, n, m in zip(self.spaces, counts, known)))

    def nominal_terms(self, attribute: int, point: int) -> np.ndarray:
        """``(values,)``: ``(δ(point, v) / normalizer)^2`` for each value code ``v``."""
        cache = self._terms[attribute]
        term = cache.get(point)
        if term is None:
            space = self.spaces[attribute]
            width = space.width if space.width > 0 else 1.0
            t = space.distances_from(point) / width
            term = t * t
            if (len(cache) + 1) * len(term) > _CACHE_CELLS:
                cache.clear()
            cache[point] = term
        return term

    def squared(self, point: Point, columns: list[np.ndarray], codes: list[np.ndarray]
                ) -> np.ndarray:
        """Squared eq. 9.7 distances from ``point`` to rows given column-wise.

        Terms are added attribute by attribute, numeric ones first, each as ``t * t`` with
        ``t = (value - point) / width``.
        """
        size = len(columns[0]) if columns else len(codes[0])
        acc = np.zeros(size)
        for column, p, w in zip(columns, point.numeric, self.widths):
            t = (column - p) / w
            acc += t * t
        for a, (c, p) in enumerate(zip(codes, point.nominal)):
            acc += self.nominal_terms(a, p)[c]
        return acc


def _pair(value: object, name: str) -> tuple[float, float]:
    path = f"transformation.bounds.{name}"
    try:
        low, high = (float(v) for v in value)  # type: ignore[attr-defined]
    except (TypeError, ValueError):
        raise SpecError(f"must be two numbers [low, high], got {value!r}", path=path) from None
    if not (np.isfinite(low) and np.isfinite(high)) or high <= low:
        raise SpecError(f"must be finite with low < high, got [{low}, {high}]", path=path)
    return low, high
