"""Grouping records in numpy: the partitioner's run, its contract checked, and the group values of
ordinal and nominal attributes. The same code groups rows pulled into sqlanon's process and rows of
one block inside an engine (:mod:`sqlanon.methods.microaggregation.in_engine`)."""

from __future__ import annotations

from typing import Any

import numpy as np

from sqlanon.errors import InternalError
from sqlanon.methods.microaggregation import rows
from sqlanon.methods.microaggregation.algorithms.registry import get_algorithm
from sqlanon.methods.microaggregation.distance.centroids import get_centroid
from sqlanon.methods.microaggregation.quality import group_sizes
from sqlanon.methods.microaggregation.records import Records
from sqlanon.methods.microaggregation.settings import MicroaggregationSettings


def partition(records: Records, settings: MicroaggregationSettings, options: dict[str, Any]) -> np.ndarray:
    """The settings' algorithm run on ``records``: each row's group, numbered 0..g-1."""
    algorithm = get_algorithm(settings.algorithm)
    return checked(np.asarray(algorithm(records, settings.k, **options)), records.n, settings)


def checked(labels: np.ndarray, n: int, settings: MicroaggregationSettings) -> np.ndarray:
    """The partitioner kept its contract (one group per row, every group at least k rows); the groups
    renumbered 0..g-1 in the order of their numbers."""
    if labels.shape != (n,) or not np.issubdtype(labels.dtype, np.integer):
        raise InternalError(f"algorithm {settings.algorithm} returned {labels.shape} {labels.dtype}, "
                            f"not ({n},) integer group numbers")
    if n and group_sizes(labels).min() < settings.k:
        raise InternalError(f"algorithm {settings.algorithm} formed a group of fewer than k = "
                            f"{settings.k} rows")
    return np.unique(labels, return_inverse=True)[1].reshape(-1).astype(np.int64)  # numbered 0..g-1


def group_values(records: Records, settings: MicroaggregationSettings, attribute: str, kind: str,
                 labels: np.ndarray, order_of: tuple[Any, ...]) -> np.ndarray:
    """Per row, its group's value of an ordinal (median rank, the lower one for even sizes) or nominal
    (centroid) attribute."""
    g = int(labels.max()) + 1
    if kind == rows.ORDINAL:
        ranks = records.x[:, records.names.index(attribute)]
        order = np.lexsort((ranks, labels))
        sizes = np.bincount(labels, minlength=g)
        starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
        median = ranks[order[starts + (sizes - 1) // 2]].astype(np.int64)
        per_group = np.array([order_of[r - 1] for r in median], dtype=object)
        return per_group[labels]
    column = records.nominal[attribute]
    codes = np.asarray(get_centroid(settings.centroid)(column, labels, g), dtype=np.int64)
    return np.array(column.values, dtype=object)[codes][labels]
