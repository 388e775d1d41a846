"""Multivariate microaggregation algorithms behind one interface.

An algorithm partitions records pulled once from the engine (in a fixed row order) into groups and
returns each row's group number; the engine then replaces values by their group's statistic in one
join (:mod:`sqlanon.microagg.pipeline`). Adding an algorithm is one function and one entry in
:data:`ALGORITHMS`.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from sqlanon.errors import SpecError, did_you_mean
from sqlanon.hierarchy.base import Hierarchy


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


class Partitioner(Protocol):
    def __call__(self, records: Records, k: int, **options: Any) -> np.ndarray:
        """``(n,)`` int64 group number per row, groups numbered 0..g-1; every group has >= k rows."""
        ...


ALGORITHMS: dict[str, Partitioner] = {}
"""Algorithm name (the spec's ``transformation.algorithm``) -> partitioner."""

BUILTIN_MODULES: tuple[str, ...] = ()
"""Modules whose ``@register`` entries are loaded on first look-up; a new algorithm's module adds
its name here."""


def register(name: str) -> Callable[[Partitioner], Partitioner]:
    """Decorator: add a partitioner to :data:`ALGORITHMS` under ``name``."""
    def add(fn: Partitioner) -> Partitioner:
        ALGORITHMS[name] = fn
        return fn
    return add


def get_algorithm(name: str) -> Partitioner:
    """The partitioner called ``name``.

    Raises:
        SpecError: unknown name (with the known ones and a did-you-mean).
    """
    for module in BUILTIN_MODULES:
        importlib.import_module(module)
    if name not in ALGORITHMS:
        raise SpecError(f"unknown microaggregation algorithm {name!r}; use one of "
                        f"{', '.join(sorted(ALGORITHMS))}." + did_you_mean(name, ALGORITHMS),
                        path="transformation.algorithm")
    return ALGORITHMS[name]
