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

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from sqlanon.errors import SpecError, did_you_mean
from sqlanon.registry import Registry

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


def traits(name: str) -> AlgorithmTraits:
    """The traits of the registered algorithm ``name`` (looked up like :func:`get_algorithm`)."""
    return AlgorithmTraits(**ALGORITHMS.traits(name))


def get_algorithm(name: str) -> Partitioner:
    """The partitioner called ``name``.

    Raises:
        SpecError: unknown name (with the known ones and a did-you-mean).
    """
    return ALGORITHMS.get(name)
