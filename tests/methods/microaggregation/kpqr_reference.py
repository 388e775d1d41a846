"""The (k,p,q,r) heuristic of Domingo-Ferrer, Sebé and Solanas (SDM 2008, section 4), step by step.

A plain-Python transcription used as a test oracle: sets and lists, variances in exact fractions,
the same documented decisions as :mod:`sqlanon.methods.microaggregation.algorithms.kpqr` (MinVar from the
whole table's variance, r read as the decimal it prints as; loops stop when no record qualifies, (f) then
takes the nearest record; fewer than k records left form one group; failing groups merge with the group of
nearest centroid).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from sqlanon.methods.microaggregation.algorithms.mdav import mdav_groups
from sqlanon.methods.microaggregation.distance.qi_space import scaled


def variance(values: list[float]) -> Fraction:
    if not values:
        return Fraction(0)
    exact = [Fraction(v) for v in values]
    mean = sum(exact) / len(exact)
    return sum((v - mean) ** 2 for v in exact) / len(exact)


def heuristic(x: np.ndarray, values: np.ndarray, k: int, p: int, q: float, r: float,
              seed: int) -> list[list[int]]:
    n = len(values)
    z = scaled(x)
    vals = [float(v) for v in values]
    rare = [vals.count(v) / n < q for v in vals]
    min_var = Fraction(repr(r)) * variance(vals)
    rng = np.random.default_rng(seed)
    X = set(range(n))
    Y = [i for i in range(n) if rare[i]]
    groups: list[list[int]] = []
    while Y:                                                              # step 4
        s = int(rng.choice(np.array(sorted(Y))))                          # (b)
        C = [s]                                                           # (c)
        X.discard(s)
        Y.remove(s)
        d = {i: float(np.einsum("i,i->", z[i] - z[s], z[i] - z[s])) for i in X}
        pool = sorted(X, key=lambda i: (d[i], i))

        def nearest(condition):
            for i in pool:
                if i in X and condition(i):
                    return i
            return None

        def move(i):
            C.append(i)
            X.discard(i)
            if i in Y:
                Y.remove(i)

        def with_(i):
            return variance([vals[j] for j in C] + [vals[i]])

        while len({vals[j] for j in C}) < p:                              # (d)
            def new(i):
                return vals[i] not in {vals[j] for j in C}
            now = variance([vals[j] for j in C])
            i = nearest(lambda i: new(i) and with_(i) > now)
            if i is None:
                i = nearest(new)
            if i is None:
                break
            move(i)
        while variance([vals[j] for j in C]) < min_var:                   # (e)
            now = variance([vals[j] for j in C])
            i = nearest(lambda i: with_(i) > now)
            if i is None:
                break
            move(i)
        while len(C) < k:                                                 # (f)
            i = nearest(lambda i: with_(i) >= min_var)
            if i is None:
                i = nearest(lambda i: True)
            if i is None:
                break
            move(i)
        if Y and (variance([vals[j] for j in Y]) < min_var
                  or len({vals[j] for j in Y}) < p):                      # (g)
            C.extend(Y)
            X.difference_update(Y)
            Y = []
            if variance([vals[j] for j in C]) < min_var:
                X.update(j for j in C if not rare[j])
                C = [j for j in C if rare[j]]
        groups.append(C)                                                  # (h)
    rest = sorted(X)                                                      # step 5
    if len(rest) >= k:
        groups += [[rest[j] for j in g] for g in mdav_groups(x[rest], k)]
    elif rest:
        groups.append(rest)
    return repair(z, vals, groups, k, p, q, r)


def valid(vals: list[float], group: list[int], k: int, p: int, q: float, r: float) -> bool:
    n = len(vals)
    if len(group) < k:
        return False
    if not any(vals.count(vals[i]) / n < q for i in group):
        return True
    total = variance(vals)
    return len({vals[i] for i in group}) >= p and (
        total == 0 or variance([vals[i] for i in group]) >= Fraction(repr(r)) * total)


def repair(z, vals, groups, k, p, q, r):
    groups = [g for g in groups if g]
    while len(groups) > 1:
        failing = [i for i, g in enumerate(groups) if not valid(vals, g, k, p, q, r)]
        if not failing:
            break
        a = failing[0]
        centre = z[groups[a]].mean(axis=0)
        d = [np.inf if b == a else float(((z[g].mean(axis=0) - centre) ** 2).sum())
             for b, g in enumerate(groups)]
        b = int(np.argmin(d))
        groups[a] = groups[a] + groups[b]
        del groups[b]
    return groups
