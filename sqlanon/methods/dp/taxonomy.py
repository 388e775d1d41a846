"""A nominal attribute's public domain for DP: its taxonomy, boundaries and DP centroids.

Domingo-Ferrer, Sánchez, Soria-Comas, *Database Anonymization*, 2016, §9.4-9.5:

- the domain Dom(X^i) is the leaves of a taxonomy τ(X^i) given by the user (a hierarchy table,
  never built from the data); distances are the semantic distance δ of eq. 9.6
  (:class:`sqlanon.methods.microaggregation.distance.semantic.Taxonomy`);
- the boundaries are a_b, the most marginal leaf (eq. 9.2), and a_t, the leaf farthest from it
  (eq. 9.3); a value's place in a total order is its distance δ(value, a_b) normalized by
  δ(a_b, a_t) (eq. 9.7), ties broken by the label;
- a cluster's centroid is drawn by the exponential mechanism over **all** concepts of τ(X^i)
  (Algorithm 9, eq. 9.5) with quality −m(S, a), m the marginality of eq. 9.1 towards the cluster's
  values S.

Sensitivity of the quality. When one value of S changes from v to v', m(S, a) changes by
|δ(v, a) − δ(v', a)| ≤ δ(v, v'), at most the domain's diameter D = max δ over pairs of leaves (the
triangle inequality; δ is a metric). The book takes δ(a_b, a_t); since a_t is only the leaf
farthest from a_b, δ(a_b, a_t) ≤ D, with equality on the usual balanced taxonomies. sqlanon uses
D, which is never smaller.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from sqlanon.domain.hierarchy.base import Hierarchy, HierarchyTable
from sqlanon.errors import HierarchyError, SpecError
from sqlanon.methods.dp import mechanisms
from sqlanon.methods.microaggregation.distance.semantic import Taxonomy


@dataclass(frozen=True)
class NominalDomain:
    """The public domain of one nominal attribute, from its hierarchy."""

    attribute: str
    taxonomy: Taxonomy

    @classmethod
    def from_hierarchy(cls, attribute: str, hierarchy: Hierarchy | HierarchyTable | Any
                       ) -> NominalDomain:
        """Build from a table hierarchy (ARX CSV, map, ordered groups) or its rows.

        Raises:
            HierarchyError: the hierarchy has no table of its own (a builder that needs the data's
                values, such as intervals or masks) or fewer than two leaves.
        """
        table = hierarchy if isinstance(hierarchy, HierarchyTable) else None
        if table is None and isinstance(hierarchy, Hierarchy):
            table = hierarchy.table()
        if table is None and isinstance(hierarchy, (list, tuple)):
            table = HierarchyTable(tuple(tuple(r) for r in hierarchy))
        if table is None:
            raise HierarchyError(
                f"a DP release of {attribute!r} needs a taxonomy listing the whole domain (a hierarchy "
                "table: ARX CSV, map or ordered groups); a hierarchy generated from the data's values "
                "would make the domain depend on the records", path=f"categorical.{attribute}")
        if len({row[0] for row in table.rows}) < 2:
            raise HierarchyError("the taxonomy must list at least two leaf values",
                                 path=f"categorical.{attribute}")
        return cls(attribute, Taxonomy(table))

    # -- domain geometry ----------------------------------------------------------------------------
    @cached_property
    def leaves(self) -> list[str]:
        """Dom(X^i): the leaf labels, in hierarchy order."""
        return [str(self.taxonomy.label[c]) for c in self.taxonomy.domain]

    @cached_property
    def concepts(self) -> np.ndarray:
        """τ(X^i): every concept of the taxonomy (leaves and generalizations), the candidates."""
        return np.array([c for c in range(len(self.taxonomy)) if self.taxonomy.label[c] is not None],
                        dtype=np.int64)

    @cached_property
    def boundaries(self) -> tuple[int, int, float]:
        """``(a_b, a_t, δ(a_b, a_t))`` of eq. 9.2-9.3."""
        return self.taxonomy.boundaries()

    @cached_property
    def diameter(self) -> float:
        """D = the largest δ between two leaves: the sensitivity of the marginality."""
        d = self.taxonomy.domain
        return float(self.taxonomy.distances(d[:, None], d[None, :]).max())

    def order_key(self) -> dict[str, float]:
        """Each leaf's position key δ(leaf, a_b) / δ(a_b, a_t) (eq. 9.7's term for this attribute)."""
        a_b, _, width = self.boundaries
        d = self.taxonomy.distances(self.taxonomy.domain, a_b)
        scale = width if width > 0 else 1.0
        return {label: float(v) / scale for label, v in zip(self.leaves, d)}

    def leaf_ids(self, labels: list[str]) -> np.ndarray:
        """Concept numbers of data values; a value outside the domain is an error."""
        try:
            return np.array([self.taxonomy.leaf[v] for v in labels], dtype=np.int64)
        except KeyError as e:
            raise SpecError(f"a value of {self.attribute!r} is not a leaf of its taxonomy "
                            f"({len(self.leaves)} leaves)", path=f"categorical.{self.attribute}") from e

    # -- Algorithm 9 --------------------------------------------------------------------------------
    def dp_centroids(self, counts: np.ndarray, epsilon: float, rng: np.random.Generator) -> list[str]:
        """One centroid label per cluster, each drawn with ε by the exponential mechanism.

        Args:
            counts: ``(clusters, leaves)`` how many records of each cluster hold each leaf.
            epsilon: the ε of *each* draw.
        """
        cands = self.concepts
        leaves = self.taxonomy.domain
        dist = self.taxonomy.distances(cands[:, None], leaves[None, :])   # (concepts, leaves)
        marginality = counts @ dist.T                                       # (clusters, concepts)
        chosen = mechanisms.exponential(cands, -marginality, self.diameter, epsilon, rng)
        return [str(self.taxonomy.label[int(c)]) for c in np.atleast_1d(chosen)]
