"""Plain-Python definitions of the per-class quantities the privacy models read.

Everything here works on value counts (``collections.Counter``; ``None`` is a value of its own) and
exact fractions, straight from the papers' definitions; nothing is shared with sqlanon's SQL.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Hashable, Sequence
from fractions import Fraction as F

import numpy as np
from scipy.optimize import linprog


def shares(counts: Counter) -> dict[Hashable, F]:
    n = sum(counts.values())
    return {v: F(c, n) for v, c in counts.items()}


def equal_emd(cls: Counter, table: Counter) -> F:
    """½ Σ_v |p_v − q_v| over every value of the table."""
    p, q = shares(cls), shares(table)
    return sum((abs(p.get(v, 0) - q[v]) for v in q), F(0)) / 2


def ordered_emd(cls: Counter, table: Counter, key: Callable[[Hashable], object]) -> F:
    """1/(r−1) Σ_i |Σ_{j≤i} (p_j − q_j)| over the r values of the table in ``key`` order."""
    p, q = shares(cls), shares(table)
    values = sorted(q, key=key)
    if len(values) == 1:
        return F(0)
    total, running = F(0), F(0)
    for v in values:
        running += p.get(v, 0) - q[v]
        total += abs(running)
    return total / (len(values) - 1)


def hierarchical_emd(cls: Counter, table: Counter, ancestors: Callable[[Hashable], Sequence[str]]) -> F:
    """ARX's tree algorithm (peer-semantics §2.4) on an explicit tree.

    ``ancestors(v)`` gives the labels of leaf v at levels 1..H. Leaves are the table's values.
    """
    n, size = sum(table.values()), sum(cls.values())
    height = len(ancestors(next(iter(table))))
    # node -> extra; nodes at level 0 are ("leaf", v), above (j, label)
    extra: dict[object, int] = {("leaf", v): table[v] * size - cls.get(v, 0) * n for v in table}
    parent_of: dict[object, object] = {("leaf", v): (1, ancestors(v)[0]) for v in table}
    for v in table:
        for j in range(1, height):
            parent_of[(j, ancestors(v)[j - 1])] = (j + 1, ancestors(v)[j])
    cost = F(0)
    level_nodes: list[object] = [("leaf", v) for v in table]
    for j in range(1, height + 1):
        children: dict[object, list[object]] = {}
        for c in level_nodes:
            children.setdefault(parent_of[c], []).append(c)
        for node, kids in children.items():
            pos = sum(extra[c] for c in kids if extra[c] > 0)
            neg = sum(-extra[c] for c in kids if extra[c] <= 0)
            extra[node] = pos - neg
            cost += F(j, height) * min(pos, neg)
        level_nodes = list(children)
    return cost / (n * size)


def transport_emd(cls: Counter, table: Counter, distance: Callable[[Hashable, Hashable], float]) -> float:
    """The EMD as the transportation linear program (an independent check of the closed forms)."""
    values = list(table)
    p = [float(shares(cls).get(v, 0)) for v in values]
    q = [float(shares(table)[v]) for v in values]
    m = len(values)
    cost = np.array([[distance(a, b) for b in values] for a in values]).ravel()
    rows = []
    for i in range(m):
        r = np.zeros((m, m))
        r[i, :] = 1
        rows.append(r.ravel())
    for j in range(m):
        r = np.zeros((m, m))
        r[:, j] = 1
        rows.append(r.ravel())
    res = linprog(cost, A_eq=np.array(rows), b_eq=np.array(p + q), bounds=(0, None), method="highs")
    assert res.success
    return float(res.fun)


def absent_rows(cls: Counter, table: Counter) -> int:
    return sum(c for v, c in table.items() if v not in cls)


def max_log_ratio(cls: Counter, table: Counter) -> float:
    """max |ln(p/q)| over the values present in the class."""
    p, q = shares(cls), shares(table)
    return max(abs(math.log(p[v] / q[v])) for v in p)


def max_relative_gain(cls: Counter, table: Counter) -> F:
    p, q = shares(cls), shares(table)
    return max([(p[v] - q[v]) / q[v] for v in p if p[v] > q[v]], default=F(0))


def max_enhanced_excess(cls: Counter, table: Counter) -> float | None:
    """max ((p−q)/q + ln q) over the values with p > q; None when there are none."""
    p, q = shares(cls), shares(table)
    gains = [float((p[v] - q[v]) / q[v]) + math.log(q[v]) for v in p if p[v] > q[v]]
    return max(gains) if gains else None


def value_range(cls: Counter) -> float:
    nums = [v for v in cls if v is not None]
    return float(max(nums) - min(nums)) if nums else 0.0


def population_variance(counts: Counter) -> F | None:
    nums = [(F(v), c) for v, c in counts.items() if v is not None]
    n = sum(c for _, c in nums)
    if n == 0:
        return None
    mean = sum(v * c for v, c in nums) / n
    return sum(c * (v - mean) ** 2 for v, c in nums) / n


def variance_ratio(cls: Counter, table: Counter) -> F | None:
    """Var(class)/Var(table); 1 when the table's variance is 0; None without numbers."""
    total = population_variance(table)
    if total is None:
        return None
    if total == 0:
        return F(1)
    within = population_variance(cls)
    return None if within is None else within / total


def rare_values(cls: Counter, table: Counter, q: float) -> int:
    n = sum(table.values())
    return sum(1 for v in cls if table[v] / n < q)
