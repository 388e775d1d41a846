"""(k,p,q,r)-anonymity through microaggregation, by the heuristic of Domingo-Ferrer, Sebé and Solanas.

Domingo-Ferrer J, Sebé F, Solanas A. An anonymity model achievable via microaggregation. Secure Data
Management (SDM) 2008, LNCS 5159, section 4. A value of the confidential attribute L is *rare* when
its relative frequency in the table is below ``q``; records holding one are *sensitive*. Each group
holding a sensitive record needs at least ``p`` distinct values of L and a variance of L at least
``r`` times the table's (Definition 7); every group needs ``k`` records.

The heuristic (numeric quasi-identifiers Q, one numeric confidential attribute L):

1. Y := the sensitive records; MinVar := r · Var(L);
2. while Y is not empty: a group C starts from a random sensitive record x_s, then takes, always the
   nearest remaining record to x_s in Q, (d) until C holds p distinct values, a record adding a new
   value and raising Var(C(L)) (else one adding a new value); (e) while Var(C(L)) < MinVar, a record
   raising it; (f) until |C| = k, a record keeping Var(C(L)) >= MinVar; (g) if the sensitive records
   left could not form a valid group (their variance is below MinVar or they hold fewer than p
   values), they all join C, and if C's variance is then below MinVar its non-sensitive records go
   back to the pool;
3. MDAV (sdcMicro's, :mod:`sqlanon.methods.microaggregation.algorithms.mdav`) groups the remaining records;
4. the quasi-identifiers of every record become its group's mean (done by the pipeline).

Decisions where the paper is silent or differs from its own definition:

* MinVar uses the variance of L over the whole table (population variance), as Definition 7 and
  sqlanon's checker (:class:`sqlanon.domain.models.numeric_sensitive.KPQRAnonymity`) do; the listing's step 2
  takes the variance over the sensitive records only.
* The loops (d)-(f) stop when no record qualifies (the pool can run dry); (f) then takes the nearest
  record of any value. Fewer than ``k`` records left for step 3 form one group.
* A closing repair makes the output (k,p,q,r)-anonymous by the checker's reading (a group holding a
  rare value needs p distinct values and the variance ratio; every group needs k rows): a group that
  fails merges with the group whose centroid is nearest to its own, as t-closeness Algorithm 4 merges
  clusters. One group holding everything satisfies the model whenever it is feasible (the table holds
  at least p distinct values and r <= 1), so the repair ends.
* Variances are compared with MinVar less 1e-12 of the table's variance (the checker allows 1e-9 of
  the ratio), so a group exactly at r·Var(L) passes whichever way its variance rounds.
* Distances are squared Euclidean on quasi-identifiers weighted by 1/population variance (the paper
  standardizes them). The random start uses a cryptographically seeded generator unless ``seed`` is
  given.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field

import numpy as np

from sqlanon.errors import SpecError
from sqlanon.methods.microaggregation.algorithms.mdav import mdav_groups
from sqlanon.methods.microaggregation.algorithms.registry import ALGORITHMS
from sqlanon.methods.microaggregation.algorithms.tcloseness import labels_of
from sqlanon.methods.microaggregation.distance.emd import the_confidential_attribute
from sqlanon.methods.microaggregation.distance.qi_space import scaled
from sqlanon.methods.microaggregation.records import NominalColumn, Records
from sqlanon.methods.microaggregation.validate import as_matrix

VARIANCE_SLACK = 1e-12
"""Relative slack (of the table's variance) of the comparisons with MinVar."""


def _number(value: object, name: str, low: float, high: float, *, low_open: bool = False) -> float:
    ok = not isinstance(value, bool) and isinstance(value, (int, float)) and value == value
    ok = ok and (value > low if low_open else value >= low) and value <= high  # type: ignore[operator]
    if not ok:
        interval = f"{'(' if low_open else '['}{low:g}, {high:g}]"
        raise SpecError(f"{name} must be a number in {interval}, got {value!r}",
                        path=f"transformation.{name}")
    return float(value)  # type: ignore[arg-type]


def confidential_numbers(records: Records, attribute: object) -> np.ndarray:
    """The confidential attribute as float64 per row (text codes read as numbers).

    Raises:
        SpecError: the attribute is missing, not numeric, or has missing values.
    """
    attribute = the_confidential_attribute(records, attribute)
    column = records.sensitive[attribute]
    if isinstance(column, NominalColumn):
        try:
            numbers = np.array([np.nan if v is None else float(v) for v in column.values])
        except (TypeError, ValueError):
            raise SpecError(f"(k,p,q,r)-anonymity needs a numeric confidential attribute; "
                            f"{attribute!r} has values that are not numbers",
                            path="transformation.attribute") from None
        values = numbers[column.codes] if len(numbers) else np.zeros(0)
    else:
        values = np.asarray(column, dtype=np.float64)
    if len(values) != records.n:
        raise SpecError(f"confidential attribute {attribute!r} has {len(values)} values for "
                        f"{records.n} records", path="transformation.attribute")
    if not np.isfinite(values).all():
        raise SpecError(f"confidential attribute {attribute!r} has missing or infinite values "
                        f"({int((~np.isfinite(values)).sum())} rows); remove or impute them first",
                        path="transformation.attribute")
    return values


@dataclass
class _Group:
    """A growing group: its rows, distinct values, and the mean and squared deviations (Welford).

    Welford's update keeps a group of equal values at variance exactly 0, so "raises the variance"
    is never decided on rounding noise.
    """

    rows: list[int] = field(default_factory=list)
    values: set[float] = field(default_factory=set)
    mean: float = 0.0
    m2: float = 0.0

    def add(self, row: int, value: float) -> None:
        self.rows.append(row)
        self.values.add(value)
        delta = value - self.mean
        self.mean += delta / len(self.rows)
        self.m2 += delta * (value - self.mean)

    @property
    def variance(self) -> float:
        return self.m2 / len(self.rows) if self.rows else 0.0

    def variance_with(self, values: np.ndarray) -> np.ndarray:
        """The population variance after adding each of ``values`` alone."""
        c = len(self.rows)
        d = values - self.mean
        return (self.m2 + d * d * c / (c + 1)) / (c + 1)

    def raised_by(self, values: np.ndarray) -> np.ndarray:
        """Whether adding each of ``values`` raises the variance: c²(v − mean)² > (c + 1)·m2."""
        c = len(self.rows)
        d = values - self.mean
        return c * c * d * d > (c + 1) * self.m2


def _variance(values: np.ndarray) -> float:
    return float(values.var()) if len(values) else 0.0


class _Heuristic:
    def __init__(self, x: np.ndarray, values: np.ndarray, k: int, p: int, q: float, r: float,
                 rng: np.random.Generator) -> None:
        self.x, self.z, self.k, self.p = x, scaled(x), k, p
        self.values = values
        _, inverse, counts = np.unique(values, return_inverse=True, return_counts=True)
        self.rare = (counts / len(values) < q)[inverse.reshape(-1)]
        self.table_variance = _variance(values)
        # MinVar less a slack far below the checker's (1e-9 of the ratio): a group exactly at
        # r·Var(L) passes however its variance rounds
        self.min_var = r * self.table_variance - VARIANCE_SLACK * self.table_variance
        self.rng = rng

    def group_ok(self, rows: np.ndarray) -> bool:
        """The checker's reading of Definition 7 for one group."""
        if len(rows) < self.k:
            return False
        if not self.rare[rows].any():
            return True
        if len(np.unique(self.values[rows])) < self.p:
            return False
        return self.table_variance == 0 or _variance(self.values[rows]) >= self.min_var

    def sensitive_groups(self, alive: np.ndarray) -> list[np.ndarray]:
        sensitive = self.rare & alive
        groups: list[np.ndarray] = []
        while sensitive.any():
            s = int(self.rng.choice(np.flatnonzero(sensitive)))
            group = _Group()
            self._move(group, s, alive, sensitive)
            pool = np.flatnonzero(alive)
            pool = pool[np.argsort(np.einsum("ij,ij->i", self.z[pool] - self.z[s],
                                             self.z[pool] - self.z[s]), kind="stable")]
            free = np.ones(len(pool), dtype=bool)

            # pick runs within this iteration only: it reads this iteration's free, pool and group (B023)
            def pick(*conditions: np.ndarray) -> bool:
                for condition in conditions:
                    hits = np.flatnonzero(condition & free)  # noqa: B023
                    if len(hits):
                        free[hits[0]] = False  # noqa: B023
                        self._move(group, int(pool[hits[0]]), alive, sensitive)  # noqa: B023
                        return True
                return False

            while len(group.values) < self.p:
                new = ~np.isin(self.values[pool], list(group.values))
                if not pick(new & group.raised_by(self.values[pool]), new):
                    break
            while group.variance < self.min_var:
                if not pick(group.raised_by(self.values[pool])):
                    break
            while len(group.rows) < self.k:
                if not pick(group.variance_with(self.values[pool]) >= self.min_var, free):
                    break
            left = np.flatnonzero(sensitive)
            if len(left) and (_variance(self.values[left]) < self.min_var
                              or len(np.unique(self.values[left])) < self.p):
                for row in left:
                    self._move(group, int(row), alive, sensitive)
                if group.variance < self.min_var:
                    back = [row for row in group.rows if not self.rare[row]]
                    alive[back] = True
                    group.rows = [row for row in group.rows if self.rare[row]]
            groups.append(np.array(group.rows, dtype=np.int64))
        return groups

    def _move(self, group: _Group, row: int, alive: np.ndarray, sensitive: np.ndarray) -> None:
        group.add(row, float(self.values[row]))
        alive[row] = False
        sensitive[row] = False

    def repair(self, groups: list[np.ndarray]) -> list[np.ndarray]:
        """Merge failing groups with their nearest group (by centroid) until every group passes."""
        groups = [g for g in groups if len(g)]
        centroid = [self.z[g].mean(axis=0) for g in groups]
        failing = [not self.group_ok(g) for g in groups]
        while any(failing) and len(groups) > 1:
            a = failing.index(True)
            d = [np.inf if b == a else float(((centroid[b] - centroid[a]) ** 2).sum())
                 for b in range(len(groups))]
            b = int(np.argmin(d))
            merged = np.concatenate([groups[a], groups[b]])
            centroid[a] = self.z[merged].mean(axis=0)
            groups[a] = merged
            failing[a] = not self.group_ok(merged)
            del groups[b], centroid[b], failing[b]
        return groups

    def run(self) -> list[np.ndarray]:
        alive = np.ones(len(self.values), dtype=bool)
        groups = self.sensitive_groups(alive)
        rest = np.flatnonzero(alive)
        if len(rest) >= self.k:
            groups += [rest[g] for g in mdav_groups(self.x[rest], self.k)]
        elif len(rest):
            groups.append(rest)
        return self.repair(groups)


@ALGORITHMS.register("kpqr", sensitive=True)
def kpqr(records: Records, k: int, *, p: int, q: float, r: float, attribute: str | None = None,
         seed: int | None = None) -> np.ndarray:
    """(k,p,q,r)-anonymous groups by the heuristic of Domingo-Ferrer, Sebé and Solanas (SDM 2008).

    Args:
        records: numeric quasi-identifiers and the numeric confidential ``attribute``.
        k: the minimum group size.
        attribute: the confidential attribute L (a key of ``records.sensitive``; by default the only
            one there).
        p: distinct values of L required in a group holding a rare value (1 <= p <= k).
        q: the frequency threshold: a value is rare when its share of the table is below q (0 < q <= 1).
        r: the variance ratio Var(group)/Var(table) required in such a group (0 <= r <= 1).
        seed: seeds the random choice of each group's first record; by default a cryptographically
            seeded generator.

    Returns:
        ``(n,)`` int64 group numbers, groups numbered in formation order (sensitive groups first).

    Raises:
        SpecError: a parameter is out of range, the attribute is missing or not numeric, or the
            table holds fewer than ``p`` distinct values of the attribute.
    """
    if records.nominal:
        raise SpecError("kpqr needs numeric or ordinal quasi-identifiers; nominal ones "
                        f"({', '.join(sorted(records.nominal))}) are not supported", path="kpqr.x")
    x = as_matrix(records.x, k, "kpqr")
    values = confidential_numbers(records, attribute)
    if isinstance(p, bool) or not isinstance(p, (int, np.integer)) or not 1 <= p <= k:
        raise SpecError(f"p must be an integer in 1..k ({k}), got {p!r}", path="transformation.p")
    q = _number(q, "q", 0.0, 1.0, low_open=True)
    r = _number(r, "r", 0.0, 1.0)
    distinct = len(np.unique(values))
    if distinct < p:
        raise SpecError(f"the table holds {distinct} distinct value(s) of {attribute!r}, fewer than "
                        f"p = {p}: no group can be p-sensitive", path="transformation.p")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer))):
        raise SpecError(f"seed must be an integer, got {seed!r}", path="transformation.seed")
    rng = np.random.default_rng(secrets.randbits(128) if seed is None else int(seed))
    groups = _Heuristic(x, values, k, int(p), q, r, rng).run()
    return labels_of(groups, len(values))
