"""Condensation: synthetic records from per-group means and covariances (Aggarwal and Yu 2004; seed 003).

Records are partitioned into groups of at least k (here by MDAV,
:mod:`sqlanon.methods.microaggregation.algorithms.mdav`); for each group the mean and the covariance
C = P·Λ·Pᵀ (divided by the group size, as Aggarwal and Yu's additive statistics give it) are computed, and as
many synthetic records as the group has are drawn independently along each eigenvector, uniform with variance
λ (range √(12λ) centred on the group mean). The synthetic records keep each group's mean and covariance in
expectation; they are not the original records (seed 003 §B7).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from sqlanon.methods.microaggregation.algorithms.mdav import mdav_groups
from sqlanon.methods.microaggregation.validate import as_matrix


def condense_group(x: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
    """``size`` synthetic records with the mean and covariance of the group ``x`` (rows)."""
    mean = x.mean(axis=0)
    centred = x - mean
    covariance = centred.T @ centred / x.shape[0]
    values, vectors = np.linalg.eigh(covariance)
    half_range = np.sqrt(3.0 * np.clip(values, 0.0, None))
    coords = rng.uniform(-1.0, 1.0, size=(size, x.shape[1])) * half_range
    return mean + coords @ vectors.T


def condensation(x: Any, k: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Synthetic data for ``x`` (n × m) and the group number of each row.

    Row i of the result is a synthetic record of row i's group, so a table keeps its other columns.
    """
    data = as_matrix(x, k, "condensation")
    out = np.empty_like(data)
    labels = np.empty(data.shape[0], dtype=np.int64)
    for g, rows in enumerate(mdav_groups(data, k)):
        out[rows] = condense_group(data[rows], rows.size, rng)
        labels[rows] = g
    return out, labels
