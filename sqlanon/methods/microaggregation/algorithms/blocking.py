"""Blocking: run a quadratic partitioner (MDAV, ...) within blocks of rows instead of on the whole table.

Blocking trades information loss for time: MDAV costs about n²/k distance evaluations, so B blocks of
n/B rows cost B times less. Solanas A, Martínez-Ballesté A. V-MDAV: a multivariate microaggregation
with variable group size. COMPSTAT 2006 (partitioning before microaggregation); Domingo-Ferrer J,
Mateo-Sanz JM. Practical data-oriented microaggregation for statistical disclosure control. IEEE TKDE
14(1), 2002, section 4 (projection onto one axis to order multivariate records).

Two ways to form blocks, each guaranteeing every block has at least ``k`` rows:

* ``block_by: [columns]`` -- strata: the rows sharing the values of those columns (NULL is a value).
  Strata with fewer than ``k`` rows are pooled into one block; when the pool itself has fewer than
  ``k`` rows it joins the smallest stratum that has ``k`` or more (of equal ones, the first in the
  order of their values as text, NULL last).
* ``block_size: N`` (``N >= k``) -- the rows ordered by their projection (:func:`projection_scores`,
  ties by row order) are cut into consecutive blocks of ``N``; the ``n mod N`` rows left over form
  the last block when they are ``k`` or more, else they join the block before them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from sqlanon.domain.factorize import group_ids
from sqlanon.methods.microaggregation.algorithms.projection import axis_of, scores
from sqlanon.methods.microaggregation.records import NominalColumn, Records


def projection_scores(x: np.ndarray, projection: str) -> np.ndarray:
    """Each row's position on the projection axis
    (:mod:`sqlanon.methods.microaggregation.algorithms.projection`: the z-score sum,
    or the first principal component of the standardized attributes)."""
    return scores(x, axis_of(x, projection))


def projection_blocks(scores: np.ndarray, size: int, k: int) -> list[np.ndarray]:
    """Rows cut into blocks of ``size`` consecutive in score order (ties by row order)."""
    order = np.argsort(scores, kind="stable")
    n = len(order)
    cuts = list(range(0, n, size))
    if len(cuts) > 1 and n - cuts[-1] < k:
        cuts.pop()
    return [order[a:b] for a, b in zip(cuts, [*cuts[1:], n])]


def strata_blocks(values: Sequence[np.ndarray], k: int) -> list[np.ndarray]:
    """Rows grouped by their values of the stratifying columns; strata below ``k`` rows pooled."""
    texts = [np.array([None if _missing(x) else str(x) for x in np.asarray(v, dtype=object)], dtype=object)
             for v in values]
    codes, sizes = group_ids(texts, sort_key=stratum_order)  # by text, NULL last
    block = np.asarray(pooled_strata([int(s) for s in sizes], k), dtype=np.int64)[codes]
    return [np.flatnonzero(block == b) for b in range(int(block.max()) + 1)] if len(block) else []


def stratum_order(text: str | None) -> tuple[bool, str]:
    """How strata are ordered, column by column: by their values as text, NULL last."""
    return text is None, text or ""


def pooled_strata(sizes: Sequence[int], k: int) -> list[int]:
    """The block of each stratum (of ``sizes`` rows, strata in their order): one block per stratum of
    ``k`` rows or more, in order, then the pool of the smaller strata, or the pool joined to the
    smallest big stratum (the first of equal ones) when it has fewer than ``k`` rows."""
    big = [i for i, size in enumerate(sizes) if size >= k]
    small = [i for i, size in enumerate(sizes) if size < k]
    block = {stratum: b for b, stratum in enumerate(big)}
    if small:
        pooled = sum(sizes[i] for i in small) >= k or not big
        into = len(big) if pooled else min(range(len(big)), key=lambda b: sizes[big[b]])
        block.update({i: into for i in small})
    return [block[i] for i in range(len(sizes))]


def _missing(x: object) -> bool:
    return x is None or (isinstance(x, float) and x != x)


def subset(records: Records, rows: np.ndarray) -> Records:
    """The records of ``rows`` (in that order)."""
    nominal = {a: NominalColumn(c.codes[rows], c.values, c.hierarchy) for a, c in records.nominal.items()}
    sensitive: dict[str, Any] = {
        a: (NominalColumn(v.codes[rows], v.values, v.hierarchy) if isinstance(v, NominalColumn)
            else np.asarray(v)[rows]) for a, v in records.sensitive.items()}
    return Records(np.ascontiguousarray(records.x[rows]), records.names, nominal, sensitive)


def partition_blocks(records: Records, blocks: list[np.ndarray], partition: Callable[[Records], np.ndarray],
                     on_block: Callable[[int, int], None] | None = None) -> np.ndarray:
    """Group numbers over all rows from ``partition`` run on each block (numbers kept apart per block)."""
    labels = np.empty(records.n, dtype=np.int64)
    offset = 0
    for i, rows in enumerate(blocks):
        if on_block:
            on_block(i, len(blocks))
        inner = np.asarray(partition(subset(records, rows)), dtype=np.int64)
        labels[rows] = inner + offset
        offset += int(inner.max()) + 1
    return labels
