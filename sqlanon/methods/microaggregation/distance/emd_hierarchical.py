"""EMD with the hierarchical ground distance, per cluster, as sqlanon's checker computes it.

Li N, Li T, Venkatasubramanian S. t-closeness: privacy beyond k-anonymity and l-diversity. ICDE 2007
(the hierarchical distance; Database Anonymization, 2016, section 6.2 names it without a formula), in
the form of :class:`sqlanon.domain.models.distance_statistics.HierarchicalDistance`: the tree's leaves are the
attribute's values in the table, its inner nodes their generalizations at levels 1..H of the
attribute's hierarchy. For a cluster of m rows in a table of n rows, a child node of a level-j node N
has the *extra* ``C(child)·m − c(child)·n`` (C: rows of the table under it, c: rows of the cluster);
N costs ``j · min(pos(N), neg(N))`` with pos and neg the sums of its children's positive and negative
extras; ``EMD = Σ cost / (H·n·m)``. Numerators are integers, as in
:mod:`sqlanon.methods.microaggregation.distance.emd`.

The values are ranked (for t-closeness-first) by their path in the hierarchy from the top, so the
values under one node are consecutive: a semantic order of the kind the book suggests for nominal
attributes (section 7.3).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from sqlanon.domain.hierarchy import materialize
from sqlanon.engines import connect
from sqlanon.errors import HierarchyError, SpecError
from sqlanon.methods.microaggregation.distance.emd import ClusterEMD, the_confidential_attribute
from sqlanon.methods.microaggregation.records import NominalColumn, Records


@dataclass
class HierarchicalEMD(ClusterEMD):
    """:class:`ClusterEMD` with the hierarchical ground distance."""

    levels: tuple[np.ndarray, ...] = field(default=())
    """``levels[j - 1][rank]``: the node id of each ranked value's ancestor at level j = 1..H."""
    distance: str = "hierarchical"

    def __post_init__(self) -> None:
        super().__post_init__()
        self.height = len(self.levels)
        self._steps: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        child = np.arange(self.r)
        for level in self.levels:
            # children are (child node, parent node) pairs, as the checker groups them
            _, pair = np.unique(child * (int(level.max()) + 1) + level, return_inverse=True)
            pair = pair.reshape(-1)
            to_pair = np.zeros((self.r, int(pair.max()) + 1))
            to_pair[np.arange(self.r), pair] = 1.0
            parent_of_pair = np.zeros(to_pair.shape[1], dtype=np.int64)
            parent_of_pair[pair] = level
            to_parent = np.zeros((to_pair.shape[1], int(level.max()) + 1))
            to_parent[np.arange(to_pair.shape[1]), parent_of_pair] = 1.0
            self._steps.append((to_pair, to_parent, self.global_counts @ to_pair))
            child = level

    def denominator(self, m: int) -> int:
        return self.height * m * self.n

    def numerators(self, counts: np.ndarray, m: int) -> np.ndarray:
        """Numerators for a batch of clusters of ``m`` rows, given as ``(B, r)`` value counts."""
        total = np.zeros(len(counts))
        for j, (to_pair, to_parent, global_pairs) in enumerate(self._steps, start=1):
            extra = global_pairs * m - (counts @ to_pair) * self.n
            pos = np.maximum(extra, 0) @ to_parent
            neg = np.maximum(-extra, 0) @ to_parent
            total += j * np.minimum(pos, neg).sum(axis=1)
        return np.rint(total).astype(np.int64)

    def numerator_of_ranks(self, ranks: np.ndarray) -> int:
        if not len(ranks):
            return 0
        counts = np.bincount(ranks, minlength=self.r)[None, :].astype(np.float64)
        return int(self.numerators(counts, len(ranks))[0])

    def swap_deltas(self, cluster: np.ndarray, candidates: np.ndarray) -> np.ndarray:
        """As :meth:`ClusterEMD.swap_deltas`: one evaluation per pair of distinct values."""
        cr, yr = self.ranks[cluster], self.ranks[candidates]
        m = len(cluster)
        base = np.bincount(cr, minlength=self.r).astype(np.float64)
        ins, ins_at = np.unique(yr, return_inverse=True)
        outs, outs_at = np.unique(cr, return_inverse=True)
        batch = np.repeat(base[None, :], len(ins) * len(outs), axis=0)
        rows = np.arange(len(batch))
        batch[rows, np.repeat(ins, len(outs))] += 1
        batch[rows, np.tile(outs, len(ins))] -= 1
        before = self.numerators(base[None, :], m)[0]
        table = (self.numerators(batch, m) - before).reshape(len(ins), len(outs))
        return table[ins_at.reshape(-1)][:, outs_at.reshape(-1)]


def hierarchical_emd(records: Records, attribute: object) -> HierarchicalEMD:
    """The hierarchical EMD of a nominal confidential attribute with a hierarchy.

    Raises:
        SpecError: the attribute is missing, not nominal, or has no hierarchy.
        HierarchyError: the hierarchy has no level above the values or misses some of them.
    """
    attribute = the_confidential_attribute(records, attribute)
    column = records.sensitive[attribute]
    if not isinstance(column, NominalColumn) or column.hierarchy is None:
        raise SpecError(f"the hierarchical distance needs a hierarchy for {attribute!r}",
                        path=f"attributes.{attribute}.hierarchy")
    h = column.hierarchy
    if h.height < 1:
        raise HierarchyError(f"the hierarchy of {attribute!r} has height 0; the hierarchical "
                             "distance needs at least one level above the values",
                             path=f"attributes.{attribute}.hierarchy")
    with connect() as scratch:
        by_leaf = {row[0]: row for row in materialize(h, list(column.values), scratch).rows}
    paths = []
    for v in column.values:
        row = by_leaf.get(None if v is None else str(v))
        if row is None or any(a is None for a in row[1:]):
            hint = " (NULL needs a hierarchy row: set `null:` to its leaf label)" if v is None else ""
            raise HierarchyError(f"a value of sensitive attribute {attribute!r} is missing from its "
                                 f"hierarchy{hint}", path=f"attributes.{attribute}.hierarchy")
        paths.append(tuple("" if a is None else str(a) for a in row))
    order = sorted(range(len(paths)), key=lambda i: paths[i][::-1])
    rank_of_code = np.empty(len(paths), dtype=np.int64)
    rank_of_code[order] = np.arange(len(paths))
    levels = []
    for j in range(1, h.height + 1):
        ids = {label: i for i, label in enumerate(sorted({p[j] for p in paths}))}
        level = np.empty(len(paths), dtype=np.int64)
        level[rank_of_code] = [ids[p[j]] for p in paths]
        levels.append(level)
    ranks = rank_of_code[np.asarray(column.codes, dtype=np.int64)]
    return HierarchicalEMD(ranks, len(paths), levels=tuple(levels))
