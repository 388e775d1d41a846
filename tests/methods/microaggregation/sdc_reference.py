"""Test oracles for MDAV, independent of sqlanon.methods.microaggregation.

``literal_mdav`` transcribes sdcMicro 5.8.1's C++ ``Mdav`` (src/Mdav.h) step by step in plain Python:
linked list of rows, float32 distance accumulation, strict ``>`` comparisons, and the bucketed "hash
sort" with its insertion rule. It is slow (pure Python) and meant for small inputs, where it pins down
the tie-breaking. ``plain_mdav`` is the straightforward numpy MDAV (every distance recomputed every
round, means recomputed in row order), fast enough for 10,000 rows.
"""

from __future__ import annotations

import numpy as np

BUCKETS = 1000


def literal_weights(x: np.ndarray) -> list[float]:
    n, m = x.shape
    weights = []
    for j in range(m):
        avr = 0.0
        square = 0.0
        for i in range(n):
            v = float(x[i, j])
            avr += v
            square += v * v
        avr /= n
        square /= n
        variance = square - avr * avr
        weights.append(1.0 / variance if variance else 1.0)
    return weights


def _dist(a, b, w) -> np.float32:
    total = np.float32(0.0)
    for j in range(len(w)):
        d = float(a[j]) - float(b[j])
        total = np.float32(total + np.float32(d * d * w[j]))
    return total


def literal_mdav(x: np.ndarray, k: int) -> list[list[int]]:
    """sdcMicro's C++ loop, transcribed. Returns the groups (row lists) in formation order."""
    n, m = x.shape
    w = literal_weights(x)
    nxt = list(range(1, n)) + [-1]
    prv = [-1] + list(range(n - 1))
    first = 0
    left = n
    groups: list[list[int]] = []
    dist = [np.float32(0)] * n
    in_hash = [-1] * n

    def active():
        i = first
        while i >= 0:
            yield i
            i = nxt[i]

    while left - k >= k:
        ngroups = 1 if left - 2 * k < k else 2
        center = [0.0] * m
        for i in active():
            for j in range(m):
                center[j] += float(x[i, j])
        center = [c / left for c in center]
        current = first
        for i in active():
            dist[i] = _dist(x[i], center, w)
            if dist[i] > dist[current]:
                current = i
        for _ in range(ngroups):
            farthest = closest = first
            for i in active():
                dist[i] = _dist(x[i], x[current], w)
                if dist[i] > dist[farthest]:
                    farthest = i
                elif dist[i] < dist[closest]:
                    closest = i
            current = farthest
            low = dist[closest]
            delta = np.float32(dist[farthest] - low)
            if not delta:
                delta = np.float32(delta + np.float32(1.0))
            delta = np.float32(float(delta) * ((BUCKETS + 1.0) / BUCKETS))
            heads = [-1] * BUCKETS
            for i in active():
                d = dist[i]
                h = int(np.float32(np.float32(BUCKETS * np.float32(d - low)) / delta))
                index = heads[h]
                if index >= 0 and dist[index] < d:
                    while in_hash[index] >= 0 and dist[in_hash[index]] < d:
                        index = in_hash[index]
                    in_hash[i] = in_hash[index]
                    in_hash[index] = i
                else:
                    in_hash[i] = index
                    heads[h] = i
            group = []
            for h in range(BUCKETS):
                index = heads[h]
                while index >= 0 and len(group) < k:
                    group.append(index)
                    index = in_hash[index]
                if len(group) >= k:
                    break
            for i in group:
                if first == i:
                    first = nxt[i]
                if prv[i] >= 0:
                    nxt[prv[i]] = nxt[i]
                if nxt[i] >= 0:
                    prv[nxt[i]] = prv[i]
            groups.append(group)
        left -= k * ngroups
    if left:
        groups.append(list(active()))
    return groups


def _d32(points: np.ndarray, q: np.ndarray, w: np.ndarray) -> np.ndarray:
    terms = ((points - q) ** 2 * w).astype(np.float32)
    out = np.zeros(len(points), dtype=np.float32)
    for j in range(points.shape[1]):
        out = out + terms[:, j]
    return out


def plain_mdav(x: np.ndarray, k: int) -> list[list[int]]:
    """Straightforward numpy MDAV with sdcMicro's rules; every quantity recomputed every round."""
    n = x.shape[0]
    w = np.array(literal_weights(x))
    rest = np.arange(n)
    groups: list[list[int]] = []

    def nearest(q: np.ndarray) -> np.ndarray:
        d = _d32(x[rest], q, w)
        return rest[np.lexsort((-rest, d))[:k]]

    while len(rest) >= 2 * k:
        two = len(rest) >= 3 * k
        center = np.cumsum(x[rest], axis=0)[-1] / len(rest)
        r = rest[int(np.argmax(_d32(x[rest], center, w)))]
        s = rest[int(np.argmax(_d32(x[rest], x[r], w)))]
        for q in ([r, s] if two else [r]):
            group = nearest(x[q])
            groups.append(group.tolist())
            rest = rest[~np.isin(rest, group)]
    if len(rest):
        groups.append(rest.tolist())
    return groups


def sse(x: np.ndarray, groups: list[list[int]]) -> float:
    """Sum of squared differences to the group means, on the original scale."""
    total = 0.0
    for g in groups:
        part = x[g]
        total += float(((part - part.mean(axis=0)) ** 2).sum())
    return total
