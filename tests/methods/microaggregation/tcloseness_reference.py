"""The book's Algorithms 4, 5 and 6 transcribed line by line in plain Python (test oracle).

Database Anonymization (2016), chapter 7. Distances and centroids come from the same quasi-identifier
space as the implementation (so exact distance ties fall the same way); the control flow and the EMD
(from its definition, in fractions) are written independently of
:mod:`sqlanon.methods.microaggregation.algorithms.tcloseness`.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np


def emd(values: list, rows: list[int], distance: str) -> Fraction:
    """EMD of the values of ``rows`` to all ``values``, exactly (erratum E1 form for ``ordered``)."""
    domain = sorted(set(values))
    n, m = len(values), len(rows)
    p = [Fraction(values.count(v), n) for v in domain]
    q = [Fraction(sum(1 for r in rows if values[r] == v), m) for v in domain]
    if distance == "equal":
        return sum((abs(a - b) for a, b in zip(p, q)), Fraction(0)) / 2
    if len(domain) == 1:
        return Fraction(0)
    total, cumulative = Fraction(0), Fraction(0)
    for a, b in zip(p, q):
        cumulative += a - b
        total += abs(cumulative)
    return total / (len(domain) - 1)


def farthest(space, point, rows: list[int]) -> int:
    d = space.squared(point, np.array(rows))
    return rows[int(np.argmax(d))]


def algorithm_4(space, values: list, groups: list[list[int]], t: float,
                distance: str) -> list[list[int]]:
    """while some cluster has EMD > t: merge the worst one with the one whose centroid is nearest."""
    clusters = [list(g) for g in groups]
    while True:
        emds = [emd(values, c, distance) for c in clusters]
        worst = max(range(len(clusters)), key=lambda i: (emds[i], -i))
        if not emds[worst] > Fraction(repr(t)):
            return clusters
        centre = space.centroid(np.array(clusters[worst]))
        best, best_d = None, None
        for j, c in enumerate(clusters):
            if j == worst:
                continue
            d = float(((space.centroid(np.array(c)) - centre) ** 2).sum())
            if best_d is None or d < best_d:
                best, best_d = j, d
        clusters[worst] = clusters[worst] + clusters[best]
        del clusters[best]


def generate_cluster(space, x: int, remaining: list[int], values: list, k: int, t: float,
                     distance: str) -> list[int]:
    """GenerateCluster of Algorithm 5, with X' a local pool of candidates."""
    if len(remaining) < 2 * k:
        return list(remaining)
    d = space.squared(space.point(x), np.array(remaining))
    order = sorted(range(len(remaining)), key=lambda i: (remaining[i] != x, d[i], i))
    candidates = [remaining[i] for i in order]
    cluster, pool = candidates[:k], candidates[k:]
    while emd(values, cluster, distance) > Fraction(repr(t)) and pool:
        y = pool.pop(0)
        options = [cluster[:b] + [y] + cluster[b + 1:] for b in range(len(cluster))]
        scores = [emd(values, c, distance) for c in options]
        b = min(range(len(options)), key=lambda i: (scores[i], i))
        if scores[b] < emd(values, cluster, distance):
            cluster = options[b]
    return cluster


def algorithm_5(space, values: list, k: int, t: float, distance: str) -> list[list[int]]:
    remaining = list(range(space.n))
    clusters = []
    while remaining:
        x0 = farthest(space, space.centroid(np.array(remaining)), remaining)
        c = generate_cluster(space, x0, remaining, values, k, t, distance)
        remaining = [r for r in remaining if r not in c]
        clusters.append(c)
        if remaining:
            x1 = farthest(space, space.point(x0), remaining)
            c = generate_cluster(space, x1, remaining, values, k, t, distance)
            remaining = [r for r in remaining if r not in c]
            clusters.append(c)
    return clusters


def algorithm_6(space, ranks: list[int], k: int) -> list[list[int]]:
    """Algorithm 6 with ``k`` already adjusted by (7.3) and (7.4)."""
    n = len(ranks)
    by_value = sorted(range(n), key=lambda i: (ranks[i], i))
    q, r = divmod(n, k)
    sizes = [q] * k
    if k % 2:
        sizes[(k - 1) // 2] += r
    else:
        sizes[k // 2 - 1] += (r + 1) // 2
        sizes[k // 2] += r // 2
    subsets, start = [], 0
    for s in sizes:
        subsets.append(by_value[start:start + s])
        start += s
    base = [q] * k  # a subset holds extras while it has more rows than the clusters still to form
    remaining = list(range(n))
    clusters = []

    def build(centre_row: int) -> list[int]:
        centre = space.point(centre_row)
        c: list[int] = []
        for i in range(k):
            for _ in range(2):
                d = space.squared(centre, np.array(subsets[i]))
                x = subsets[i].pop(int(np.argmin(d)))
                remaining.remove(x)
                c.append(x)
                if not (len(subsets[i]) > base[i] - 1 and len(c) == i + 1):
                    break
            base[i] -= 1
        return c

    while remaining:
        x0 = farthest(space, space.centroid(np.array(remaining)), remaining)
        clusters.append(build(x0))
        if remaining:
            clusters.append(build(farthest(space, space.point(x0), remaining)))
    return clusters
