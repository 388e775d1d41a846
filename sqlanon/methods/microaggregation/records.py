"""The records a microaggregation algorithm partitions: numeric columns and nominal codes."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from sqlanon.domain.hierarchy.base import Hierarchy


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
