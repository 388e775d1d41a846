"""How a nominal attribute's group value is chosen (``transformation.centroid``): the centroid registry."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from sqlanon.errors import SpecError, did_you_mean
from sqlanon.methods.microaggregation.records import NominalColumn
from sqlanon.registry import Registry

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


def get_centroid(name: str) -> Centroid:
    """The centroid function called ``name``.

    Raises:
        SpecError: unknown name.
    """
    return CENTROIDS.get(name)
