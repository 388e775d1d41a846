"""Per-class privacy decisions in memory, vectorized over the classes of one node.

Each function takes the classes' sensitive-value histograms (class × value counts) and sizes and
returns which classes satisfy the model, with the same formulas and tolerances as the SQL checks in
:mod:`sqlanon.domain.models` (tested against them on Adult and on random tables).
"""

from __future__ import annotations

import math

import numpy as np

from sqlanon.domain.models.l_diversity import AlphaKAnonymity, LDiversity, PSensitiveKAnonymity
from sqlanon.domain.models.t_closeness import TOLERANCE, TCloseness


def diverse(m: LDiversity, h: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    if m.variant == "distinct":
        return np.count_nonzero(h, axis=1) >= math.ceil(m.l)
    if m.variant == "entropy":
        p = h / sizes[:, None]
        with np.errstate(divide="ignore", invalid="ignore"):
            terms = np.where(h > 0, p * np.log(p), 0.0)
        return -terms.sum(axis=1) >= math.log(m.l) - 1e-12
    desc = -np.sort(-h, axis=1)
    top = desc[:, 0]
    tail = desc[:, int(m.l) - 1:].sum(axis=1)
    assert m.c is not None  # the recursive variant has its c (LDiversity.__post_init__)
    return top < float(m.c) * tail


def emd_hierarchical(tree: list[np.ndarray], h: np.ndarray, sizes: np.ndarray,
                      global_counts: np.ndarray, n: int) -> np.ndarray:
    """ARX's scaled EMD with the hierarchical distance, exactly (as
    :class:`~sqlanon.domain.models.distance_statistics.HierarchicalDistance`): a node's extra is
    C(N)·|E| − c_E(N)·n; an inner node at level l costs l · min(Σ positive, Σ |negative| child extras);
    EMD = Σ cost / (H · |E| · n)."""
    counts = np.rint(h).astype(np.int64)  # class × node, one level down
    total = global_counts.astype(np.int64)
    e = sizes.astype(np.int64)[:, None]
    cost = np.zeros(len(sizes), dtype=np.int64)
    for level, up in enumerate(tree, 1):
        extra = total[None, :] * e - counts * n
        pos = np.maximum(extra, 0) @ up
        neg = np.maximum(-extra, 0) @ up
        cost += level * np.minimum(pos, neg).sum(axis=1)
        counts, total = counts @ up, total @ up
    return cost.astype(np.float64) / (float(len(tree)) * sizes.astype(np.float64) * n)


def close(m: TCloseness, h: np.ndarray, sizes: np.ndarray, global_counts: np.ndarray,
           n: int) -> np.ndarray:
    if m.distance == "equal":
        q = global_counts / n
        p = h / sizes[:, None]
        terms = np.where(h > 0, np.abs(q - p) - q, 0.0)
        d = (1.0 + terms.sum(axis=1)) / 2.0
    else:
        r = h.shape[1]
        if r <= 1:
            return np.ones(len(sizes), dtype=bool)
        # Σ_i |Σ_{j≤i} (p_j − q_j)| scaled by n·|E|: exact integers, divided once
        diff = h.astype(np.int64) * n - global_counts[None, :] * sizes[:, None]
        total = np.abs(np.cumsum(diff, axis=1)).sum(axis=1)
        d = total / (sizes.astype(np.float64) * n * (r - 1))
    return d <= float(m.t) + TOLERANCE


def alpha_k(m: AlphaKAnonymity, h: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """(α,k)-anonymity: |E| ≥ k and no value's share of the class above α."""
    return (sizes >= m.k) & (h.max(axis=1) / sizes <= float(m.alpha) + 1e-12)


def p_sensitive(m: PSensitiveKAnonymity, h: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """p-sensitive k-anonymity: |E| ≥ k and at least p distinct values in the class."""
    return (sizes >= m.k) & (np.count_nonzero(h, axis=1) >= m.p)
