"""Nominal and ordinal attributes in microaggregation: distances between their values and centroids.

Domingo-Ferrer J, Sanchez D, Soria-Comas J. Database Anonymization, Morgan & Claypool 2016,
sections 3.2 and 9.4-9.6; Domingo-Ferrer J, Torra V. Ordinal, continuous and heterogeneous
k-anonymity through microaggregation, Data Mining and Knowledge Discovery 11(2), 2005 (ordinal
attributes by rank, median centroid).

Nominal attributes:

* with a hierarchy, values are concepts of its taxonomy
  (:mod:`sqlanon.methods.microaggregation.distance.semantic`); the distance is the semantic distance
  of eq. 9.6 and the centroid of a group the least marginal concept of eq. 9.4, chosen among the group's
  values and all their generalizations (so a centroid may be a generalization such as ``High School``;
  it is returned as the hierarchy's label);
* without a hierarchy, the distance is 0 between equal values and 1 otherwise, and the centroid is
  the mode (the book's fallback), ties going to the first value in the column's value order;
* a data value is matched to the hierarchy's leaves as text (``str(value)``; NULL as the table
  hierarchy's ``null_leaf`` when it has one). A value the hierarchy lacks raises
  :class:`~sqlanon.errors.HierarchyError` naming the attribute and the value. Builder hierarchies
  (masks, intervals, ...) are evaluated over the column's values, so their domain is those values.
* NULL is a value of its own: without a hierarchy it may be the mode; with one it is at distance 1
  from every other value unless the hierarchy lists a leaf for it.

Ordinal attributes are ranked (1 = lowest) by the attribute's declared ``order`` when it has one,
else by the sorted distinct values; they are then treated as numbers (the book, section 3.2), and a
group's centroid is the value of its lower median rank. NULL has no rank and is refused.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from sqlanon.domain.hierarchy.base import Hierarchy, HierarchyTable
from sqlanon.errors import EngineError, HierarchyError, SpecError
from sqlanon.methods.microaggregation.distance.centroids import CENTROIDS
from sqlanon.methods.microaggregation.distance.semantic import Taxonomy
from sqlanon.methods.microaggregation.records import NominalColumn


class NominalSpace:
    """One nominal attribute's distinct values as points of its taxonomy, or compared by equality.

    A *point* is a concept of the taxonomy (with a hierarchy) or a value code (without one).

    Args:
        column: the attribute's codes, distinct values and hierarchy.
        name: the attribute, for messages.

    Raises:
        HierarchyError: a value of the column is not a leaf of its hierarchy.
    """

    def __init__(self, column: NominalColumn, name: str = "") -> None:
        self.column = column
        self.name = name
        n_values = len(column.values)
        if column.hierarchy is None:
            self.taxonomy: Taxonomy | None = None
            self.point_of_code = np.arange(n_values, dtype=np.int64)
            self.width = 1.0
            return
        try:
            table, keys = _leaf_table(column.hierarchy, column.values)
        except EngineError as e:
            raise HierarchyError(
                f"attribute {name!r}: its hierarchy ({column.hierarchy.describe()}) cannot be "
                f"evaluated over its values ({str(e.__cause__ or e).splitlines()[0]})",
                path=f"attributes.{name}.hierarchy" if name else "") from e
        self.taxonomy = Taxonomy(table, null_leaf=getattr(column.hierarchy, "null_leaf", None))
        missing = [v for v, key in zip(column.values, keys)
                   if key not in self.taxonomy.leaf and not (key is None and v is None)]
        if missing:
            raise HierarchyError(
                f"attribute {name!r}: {len(missing)} value(s) are not leaves of its hierarchy: "
                f"{', '.join(map(repr, missing[:5]))}; add a row for each",
                path=f"attributes.{name}.hierarchy" if name else "")
        self.point_of_code = np.array(
            [self.taxonomy.null if key is None else self.taxonomy.leaf[key] for key in keys],
            dtype=np.int64)
        self.width = self.taxonomy.boundaries()[2]
        """δ(a_b, a_t) of eq. 9.2/9.3: the attribute's normalizer in eq. 9.7."""

    def distances_from(self, point: int) -> np.ndarray:
        """``(values,)``: the distance from ``point`` to each distinct value of the column."""
        if self.taxonomy is None:
            return (self.point_of_code != point).astype(np.float64)
        t = self.taxonomy
        common = t.common_with_all(np.array([point]))[0, self.point_of_code]
        return t.table[t.depth[point], t.depth[self.point_of_code], common]

    def centroid_of_counts(self, codes: np.ndarray, counts: np.ndarray, *,
                           values_only: bool = False) -> int:
        """The centroid point of a group holding ``counts[i]`` rows of value ``codes[i]``.

        ``values_only`` restricts eq. 9.4's candidates to the column's values (no generalization
        that is not itself a value).
        """
        codes = np.asarray(codes, dtype=np.int64)
        counts = np.asarray(counts, dtype=np.float64)
        keep = counts > 0
        codes, counts = codes[keep], counts[keep]
        if not len(codes):
            raise SpecError(f"attribute {self.name!r}: the centroid of an empty group is undefined")
        if self.taxonomy is None:
            best = counts == counts.max()
            return int(codes[best].min())
        allowed = None
        if values_only:
            allowed = np.zeros(len(self.taxonomy), dtype=bool)
            allowed[self.point_of_code] = True
        return self.taxonomy.centroid(self.point_of_code[codes], counts, allowed)

    def concept_weights(self, counts: np.ndarray) -> np.ndarray:
        """``(concepts,)``: the rows on each concept, from the rows per value code."""
        assert self.taxonomy is not None
        return np.bincount(self.point_of_code, weights=counts, minlength=len(self.taxonomy))

    def marginalities(self, counts: np.ndarray) -> np.ndarray:
        """``(concepts,)``: eq. 9.4's sum of distances from every concept to a group's rows, the
        group given as rows per value code (see :meth:`remove_rows` to keep it up to date)."""
        assert self.taxonomy is not None
        return self.taxonomy.marginality_all(self.concept_weights(counts))

    def remove_rows(self, marginalities: np.ndarray, codes: np.ndarray) -> None:
        """Update :meth:`marginalities` in place for rows of value ``codes`` leaving the group."""
        assert self.taxonomy is not None
        t = self.taxonomy
        values, counts = np.unique(codes, return_counts=True)
        nodes = self.point_of_code[values]
        delta = t.table[t.depth[nodes][:, None], t.depth[None, :], t.common_with_all(nodes)]
        marginalities -= counts @ delta

    def centroid_from_marginalities(self, marginalities: np.ndarray, counts: np.ndarray) -> int:
        """:meth:`centroid_of_counts` of a group whose :meth:`marginalities` are known."""
        assert self.taxonomy is not None
        weights = self.concept_weights(counts)
        candidates = self.taxonomy.candidates(np.flatnonzero(weights > 0))
        return self.taxonomy.least_marginal(candidates, marginalities[candidates], weights)

    def centroid(self, codes: np.ndarray) -> int:
        """The centroid point of the rows whose value codes are ``codes``."""
        values, counts = np.unique(np.asarray(codes, dtype=np.int64), return_counts=True)
        return self.centroid_of_counts(values, counts)

    def value(self, point: int) -> Any:
        """A point as a data value: the column's own value for a leaf, else the concept's label."""
        hits = np.flatnonzero(self.point_of_code == point)
        if len(hits):
            return self.column.values[int(hits[0])]
        assert self.taxonomy is not None
        return self.taxonomy.label[point]


_SPACES: dict[int, tuple[weakref.ref[NominalColumn], NominalSpace]] = {}


def nominal_space(column: NominalColumn, name: str = "") -> NominalSpace:
    """The :class:`NominalSpace` of ``column``, built once per column object."""
    hit = _SPACES.get(id(column))
    if hit is not None and hit[0]() is column:
        return hit[1]
    space = NominalSpace(column, name)
    key = id(column)

    def forget(_: object, spaces: dict[int, Any] = _SPACES) -> None:
        spaces.pop(key, None)

    _SPACES[key] = (weakref.ref(column, forget), space)
    return space


def nominal_centroid(column: NominalColumn, rows: np.ndarray) -> Any:
    """The centroid of a nominal attribute over some rows: eq. 9.4 with a hierarchy, else the mode.

    Args:
        column: the attribute (codes for all rows, distinct values, hierarchy).
        rows: positions (or a boolean mask) of the group's rows.

    Returns:
        A value of the column when the centroid is one of its values (the mode, or a leaf that wins
        eq. 9.4), else the label of a generalization from the hierarchy (text).

    Raises:
        HierarchyError: a value of the column is not in its hierarchy.
        SpecError: ``rows`` selects no row.

    Example:
        >>> from sqlanon.domain.hierarchy import TableHierarchy
        >>> h = TableHierarchy([["9th", "High School", "*"], ["10th", "High School", "*"],
        ...                     ["11th", "High School", "*"], ["12th", "High School", "*"]])
        >>> col = NominalColumn(np.array([0, 1, 2, 3]), ("9th", "10th", "11th", "12th"), h)
        >>> nominal_centroid(col, np.arange(4)), nominal_centroid(col, np.array([0, 1, 1]))
        ('High School', '10th')
        >>> nominal_centroid(NominalColumn(np.array([1, 1, 0]), ("a", None)), np.arange(3)) is None
        True
    """
    space = nominal_space(column)
    return space.value(space.centroid(np.asarray(column.codes)[rows]))


def nominal_centroids(column: NominalColumn, labels: np.ndarray, groups: int | None = None
                      ) -> np.ndarray:
    """:func:`nominal_centroid` of every group at once.

    Args:
        column: the attribute.
        labels: ``(n,)`` group number of each row (0..groups-1).
        groups: the number of groups (default ``labels.max() + 1``).

    Returns:
        ``(groups,)`` object array of values or generalization labels.
    """
    space = nominal_space(column)
    out = np.empty(_group_count(labels, groups), dtype=object)
    for g, (codes, counts) in enumerate(_group_counts(column, labels, len(out))):
        out[g] = space.value(space.centroid_of_counts(codes, counts))
    return out


@CENTROIDS.register("marginality")
def marginality_centroid(column: NominalColumn, labels: np.ndarray, groups: int) -> np.ndarray:
    """Per group, the code of the column's value least marginal towards the group (eq. 9.4 with the
    candidates restricted to the column's values, so the result is always one of them; the mode
    without a hierarchy). Registered as centroid ``marginality``.

    Returns:
        ``(groups,)`` int64 codes into ``column.values``.
    """
    space = nominal_space(column)
    code_of_point = {int(p): c for c, p in reversed(list(enumerate(space.point_of_code)))}
    out = np.empty(_group_count(labels, groups), dtype=np.int64)
    for g, (codes, counts) in enumerate(_group_counts(column, labels, len(out))):
        out[g] = code_of_point[space.centroid_of_counts(codes, counts, values_only=True)]
    return out


def _group_count(labels: np.ndarray, groups: int | None) -> int:
    labels = np.asarray(labels)
    return int(labels.max()) + 1 if groups is None else int(groups)


def _group_counts(column: NominalColumn, labels: np.ndarray, groups: int
                  ) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Per group: its distinct value codes and their counts (every group must have a row)."""
    labels = np.asarray(labels, dtype=np.int64)
    codes = np.asarray(column.codes, dtype=np.int64)
    width = max(len(column.values), 1)
    pairs, counts = np.unique(labels * width + codes, return_counts=True)
    bounds = np.searchsorted(pairs // width, np.arange(groups + 1))
    for g in range(groups):
        part = slice(bounds[g], bounds[g + 1])
        yield pairs[part] % width, counts[part]


def _leaf_table(h: Hierarchy, values: Sequence[Any]) -> tuple[HierarchyTable, list[str | None]]:
    """The hierarchy's table and each value's leaf key (None for NULL without a NULL leaf)."""
    table = h.table()
    if table is not None:
        null_leaf = getattr(h, "null_leaf", None)
        keys = [null_leaf if v is None else v if isinstance(v, str) else str(v) for v in values]
        return table, keys
    rows = _evaluate(h, values)
    return HierarchyTable(tuple(rows)), [row[0] for row in rows]


def _evaluate(h: Hierarchy, values: Sequence[Any]) -> list[tuple[str | None, ...]]:
    """A builder hierarchy over ``values`` (one row per value, in order), in an embedded engine."""
    import pyarrow as pa
    from sqlglot import exp

    from sqlanon.engines import connect
    from sqlanon.sql.nodes import alias, as_text, col

    v = col("v")
    levels = [alias(h.key(v.copy()), "l0")]
    levels += [alias(as_text(h.expression(v.copy(), level)), f"l{level}")
               for level in range(1, h.height + 1)]
    data = pa.table({"i": list(range(len(values))), "v": list(values)})
    with connect() as engine, engine.arrow_relation(data) as relation:
        _, rows = engine.fetch(exp.select(*levels).from_(relation).order_by(col("i")))
    return [tuple(r) for r in rows]


def ordinal_ranks(values: Sequence[Any], order: Sequence[Any] | None = None, *,
                  name: str = "") -> tuple[np.ndarray, tuple[Any, ...]]:
    """1-based ranks of an ordinal attribute's values, and its domain from lowest to highest.

    Args:
        values: one value per row.
        order: the declared order (``Attribute.order``), lowest first; values are matched to it
            as they are, else as text. Without it the domain is the sorted distinct values.
        name: the attribute, for messages.

    Returns:
        ``(ranks, domain)``: ``(n,)`` float64 ranks; the value of rank ``r`` is ``domain[r - 1]``.

    Raises:
        SpecError: a NULL value, a value missing from ``order``, or values that cannot be sorted.

    Example:
        >>> ordinal_ranks(["low", "high", "mid"], ["low", "mid", "high"])
        (array([1., 3., 2.]), ('low', 'mid', 'high'))
        >>> ordinal_ranks([30, 10, 30])
        (array([2., 1., 2.]), (10, 30))
    """
    where = f"attributes.{name}" if name else ""
    if any(v is None for v in values):
        raise SpecError(f"attribute {name!r} has NULL values; an ordinal attribute needs a value "
                        "in every row to be ranked (filter or impute them first)", path=where)
    if order is None:
        try:
            domain = tuple(sorted(set(values)))
        except TypeError:
            raise SpecError(f"attribute {name!r}: its values cannot be sorted; declare its order",
                            path=f"{where}.order" if where else "") from None
    else:
        domain = tuple(order)
    exact = {v: r for r, v in enumerate(domain, start=1)}
    text = {str(v): r for r, v in enumerate(domain, start=1)}
    ranks = np.empty(len(values))
    for i, v in enumerate(values):
        r = exact.get(v) if _hashable(v) else None
        r = text.get(str(v)) if r is None else r
        if r is None:
            raise SpecError(f"attribute {name!r}: value {v!r} is not in its order; add it",
                            path=f"{where}.order" if where else "")
        ranks[i] = r
    return ranks, domain


def ordinal_centroid(ranks: np.ndarray, rows: np.ndarray, domain: Sequence[Any]) -> Any:
    """The value of the group's lower median rank (a value of the domain, never between two).

    Example:
        >>> ordinal_centroid(np.array([1., 3., 2., 3.]), np.arange(4), ("low", "mid", "high"))
        'mid'
    """
    group = np.sort(np.asarray(ranks)[rows])
    if not len(group):
        raise SpecError("the centroid of an empty group is undefined")
    return domain[int(group[(len(group) - 1) // 2]) - 1]


def _hashable(v: Any) -> bool:
    try:
        hash(v)
    except TypeError:
        return False
    return True
