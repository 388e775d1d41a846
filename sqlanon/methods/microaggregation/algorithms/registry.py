"""Multivariate microaggregation algorithms behind one interface.

An algorithm partitions records pulled once from the engine (in a fixed row order) into groups and
returns each row's group number; the engine then replaces values by their group's statistic in one
join (:mod:`sqlanon.methods.microaggregation.pipeline`). Adding an algorithm is one function
decorated with ``@ALGORITHMS.register(name, ...)`` in a module listed in :data:`BUILTIN_MODULES`.

Hooks for algorithms:

* ``ALGORITHMS.register(name, nominal=True)`` says the partitioner reads :attr:`Records.nominal`; the pipeline
  refuses nominal attributes for algorithms that do not. With nominal quasi-identifiers use
  ``mdav_mixed`` (:mod:`sqlanon.methods.microaggregation.algorithms.mdav_mixed`: MDAV on the book's eq. 9.7
  distance, semantic distance through the hierarchy) and centroid ``marginality`` or
  :func:`sqlanon.methods.microaggregation.distance.categorical.nominal_centroid` (eq. 9.4).
* ``ALGORITHMS.register(name, sensitive=True)`` says the partitioner reads :attr:`Records.sensitive` (the
  confidential attributes, pulled only for such algorithms).
* ``ALGORITHMS.register(name, per_attribute=True)`` says the partitioner groups one attribute at a time: the
  pipeline calls it once per attribute with a one-column :class:`Records` and replaces each
  attribute by the statistic of its own groups.
* A partitioner's keyword options are the spec's ``transformation`` settings of the same name
  (``gamma``, ``seed``, ``t``, ...); the pipeline passes those the function's signature accepts.
* :data:`CENTROIDS`: how a nominal attribute's group value is chosen (``transformation.centroid``,
  default ``mode``). A centroid function gets the column and every row's group number and returns
  one code (an index into ``column.values``) per group.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from sqlanon.errors import SpecError, did_you_mean
from sqlanon.domain.hierarchy.base import Hierarchy
from sqlanon.registry import Registry


@dataclass(frozen=True)
class NominalColumn:
    """A nominal attribute: integer codes per row into ``values``, and its hierarchy (if any)."""

    codes: np.ndarray
    """``(n,)`` int64 index into :attr:`values`."""
    values: tuple[Any, ...]
    """The distinct values, as read from the engine (None for NULL)."""
    hierarchy: Hierarchy | None = None


@dataclass(frozen=True)
class Records:
    """The rows an algorithm partitions, in the row order they were pulled in.

    Attributes:
        x: ``(n, m)`` float64: numeric quasi-identifiers, ordinal ones as ranks (1-based).
        names: the attribute of each column of ``x``.
        nominal: nominal quasi-identifiers by attribute name.
        sensitive: confidential attributes by name, for algorithms that read them (t-closeness,
            (k,p,q,r)); numeric ones as float64, others as :class:`NominalColumn` codes.
    """

    x: np.ndarray
    names: tuple[str, ...]
    nominal: Mapping[str, NominalColumn] = field(default_factory=dict)
    sensitive: Mapping[str, Any] = field(default_factory=dict)

    @property
    def n(self) -> int:
        if len(self.x.shape) == 2 and self.x.shape[1]:
            return int(self.x.shape[0])
        return int(len(next(iter(self.nominal.values())).codes)) if self.nominal else 0


Partitioner = Callable[..., np.ndarray]
"""``partitioner(records, k, **options)``: ``(n,)`` int64 group number per row, groups numbered
0..g-1; every group has >= k rows. Each takes its own keyword options (checked when called), so the
type names the records and k only in this description."""


@dataclass(frozen=True)
class AlgorithmTraits:
    """What the pipeline needs to know about a partitioner besides its function."""

    nominal: bool = False
    """It reads nominal attributes (:attr:`Records.nominal`)."""
    per_attribute: bool = False
    """It groups one attribute at a time (called once per attribute)."""
    sensitive: bool = False
    """It reads the confidential attributes (:attr:`Records.sensitive`); they are pulled only then."""


BUILTIN_MODULES: tuple[str, ...] = ("sqlanon.methods.microaggregation.algorithms.partitioners",
                                   "sqlanon.methods.microaggregation.algorithms.tcloseness",
                                   "sqlanon.methods.microaggregation.algorithms.kpqr",
                                   "sqlanon.methods.microaggregation.algorithms.mdav_mixed")
"""Modules whose registered algorithms are loaded on first look-up; a new algorithm's module adds
its name here."""


def _unknown_algorithm(kind: str, name: str, known: Sequence[str]) -> SpecError:
    return SpecError(f"unknown {kind} {name!r}; use one of {', '.join(known)}." + did_you_mean(name, known),
                     path="transformation.algorithm")


ALGORITHMS: Registry[Partitioner] = Registry("microaggregation algorithm", modules=BUILTIN_MODULES,
                                             unknown=_unknown_algorithm)
"""Algorithm name (the spec's ``transformation.algorithm``) -> partitioner; its traits are the
fields of :class:`AlgorithmTraits`."""


Centroid = Callable[[NominalColumn, np.ndarray, int], np.ndarray]
"""``(column, labels (n,), groups) -> (groups,)`` codes into ``column.values``."""


def mode_centroid(column: NominalColumn, labels: np.ndarray, groups: int) -> np.ndarray:
    """Each group's most frequent value; ties go to the value listed first in ``column.values``."""
    width = max(len(column.values), 1)
    counts = np.bincount(labels * width + column.codes, minlength=groups * width).reshape(groups, width)
    return counts.argmax(axis=1).astype(np.int64)


def _unknown_centroid(kind: str, name: str, known: Sequence[str]) -> SpecError:
    return SpecError(f"unknown {kind} {name!r}; use one of {', '.join(known)}." + did_you_mean(name, known),
                     path="transformation.centroid")


CENTROIDS: Registry[Centroid] = Registry(
    "centroid", modules=("sqlanon.methods.microaggregation.distance.categorical",), unknown=_unknown_centroid)
"""Centroid name (the spec's ``transformation.centroid``) -> function; algorithms for nominal data
add theirs (e.g. the marginality centroid)."""
CENTROIDS.add("mode", mode_centroid)


def traits(name: str) -> AlgorithmTraits:
    """The traits of the registered algorithm ``name`` (looked up like :func:`get_algorithm`)."""
    return AlgorithmTraits(**ALGORITHMS.traits(name))


def get_centroid(name: str) -> Centroid:
    """The centroid function called ``name``.

    Raises:
        SpecError: unknown name.
    """
    return CENTROIDS.get(name)


def get_algorithm(name: str) -> Partitioner:
    """The partitioner called ``name``.

    Raises:
        SpecError: unknown name (with the known ones and a did-you-mean).
    """
    return ALGORITHMS.get(name)
