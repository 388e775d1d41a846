"""Plain-Python transcriptions of the book's categorical microaggregation (sections 9.4-9.6, MDAV).

Concepts are tuples (the path from the top label down, consecutive repeats of a label merged), and
φ(a) is a set of such tuples; every quantity is recomputed from sets and sums each time it is used.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

from hypothesis import strategies as st

TOL = 1e-9  # the implementation's tie margin


def concept_of(row: Sequence[str]) -> tuple[str, ...]:
    path: list[str] = []
    for cell in reversed(row):
        if not path or path[-1] != cell:
            path.append(cell)
    return tuple(path)


def phi(concept: tuple) -> set[tuple]:
    """The ancestors of a concept, itself included (NULL, the empty tuple, is its own set)."""
    if concept == ():
        return {("<NULL>",)}
    return {concept[:i] for i in range(1, len(concept) + 1)}


def delta(a: tuple, b: tuple) -> float:
    """Eq. 9.6 from the sets of ancestors."""
    pa, pb = phi(a), phi(b)
    union, common = len(pa | pb), len(pa & pb)
    return math.log2(1 + (union - common) / union)


def leaves(rows: Sequence[Sequence[str]]) -> dict[str, tuple]:
    return {row[0]: concept_of(row) for row in rows}


def first_best(items: list, scores: list[float], largest: bool) -> object:
    best = max(scores) if largest else min(scores)
    margin = TOL * max(1.0, abs(best))
    for item, s in zip(items, scores):
        if (s >= best - margin) if largest else (s <= best + margin):
            return item
    raise AssertionError


def centroid(sample: Sequence[tuple], order: Sequence[tuple]) -> tuple:
    """Eq. 9.4 by brute force: every ancestor of every sample value is a candidate.

    Ties: the candidate occurring most often in the sample, then the deeper one, then ``order``.
    """
    candidates = sorted({c for s in sample for c in (phi(s) if s else {()})}, key=order.index)
    m = [sum(delta(c, s) for s in sample) for c in candidates]
    best = min(m)
    margin = TOL * max(1.0, best)
    tied = [c for c, v in zip(candidates, m) if v <= best + margin]
    count = Counter(sample)
    return min(tied, key=lambda c: (-count[c], -max(len(c), 1), order.index(c)))


def concept_order(rows: Sequence[Sequence[str]]) -> list[tuple]:
    """Concepts in order of first appearance, each row read from the top down; NULL last."""
    seen: dict[tuple, None] = {}
    for row in rows:
        c = concept_of(row)
        for i in range(1, len(c) + 1):
            seen.setdefault(c[:i], None)
    return [*seen, ()]


def width(rows: Sequence[Sequence[str]]) -> float:
    """δ(a_b, a_t) of eq. 9.2/9.3 over the distinct leaves, by brute force."""
    dom = list(dict.fromkeys(leaves(rows).values()))
    m = [sum(delta(a, b) for b in dom if b != a) for a in dom]
    a_b = first_best(dom, m, largest=True)
    a_t = first_best(dom, [delta(a, a_b) for a in dom], largest=True)
    return delta(a_b, a_t)


def mdav_mixed(numeric: list[list[float]], nominal: list[tuple[list, list | None]], k: int
               ) -> list[int]:
    """The book's MDAV loop on eq. 9.7, row by row.

    Args:
        numeric: columns of numbers.
        nominal: per attribute, ``(values per row, hierarchy rows or None)``; without a hierarchy
            the distance is 0/1 and the centroid the mode (ties: the smallest value).
    """
    n = len(numeric[0]) if numeric else len(nominal[0][0])
    widths = [(max(c) - min(c)) or 1.0 for c in numeric]
    attrs = []
    for values, rows in nominal:
        if rows is None:
            attrs.append((values, None, 1.0, None))
        else:
            leaf = leaves(rows)
            attrs.append(([leaf[v] for v in values], concept_order(rows), width(rows) or 1.0, True))

    def d2(point, i):
        nums, noms = point
        acc = 0.0
        for col, p, w in zip(numeric, nums, widths):
            t = (col[i] - p) / w
            acc += t * t
        for (vals, _, w, hier), p in zip(attrs, noms):
            dist = delta(p, vals[i]) if hier else float(p != vals[i])
            t = dist / w
            acc += t * t
        return acc

    def point(i):
        return [c[i] for c in numeric], [a[0][i] for a in attrs]

    def centre(rows):
        nums = [sum(c[i] for i in rows) / len(rows) for c in numeric]
        noms = []
        for vals, order, _, hier in attrs:
            sample = [vals[i] for i in rows]
            if hier:
                noms.append(centroid(sample, order))
            else:
                count = Counter(sample)
                noms.append(min(count, key=lambda v: (-count[v], v)))
        return nums, noms

    labels = [-1] * n
    rest = list(range(n))
    group = 0

    def take(r):
        nonlocal rest, group
        p = point(r)
        chosen = sorted(rest, key=lambda i: (i != r, d2(p, i), i))[:k]
        for i in chosen:
            labels[i] = group
        group += 1
        rest = [i for i in rest if i not in chosen]

    while len(rest) >= 2 * k:
        both = len(rest) >= 3 * k
        c = centre(rest)
        r = max(rest, key=lambda i: (d2(c, i), -i))
        take(r)
        if both:
            pr = point(r)
            take(max(rest, key=lambda i: (d2(pr, i), -i)))
    for i in rest:
        labels[i] = group
    return labels


@st.composite
def taxonomies(draw):
    """ARX-style rows: a random tree of 1-3 levels above the leaves, labels sometimes repeated."""
    height = draw(st.integers(1, 3))
    tops = draw(st.integers(1, 2))
    level = [(f"t{i}",) for i in range(tops)]
    for depth in range(height - 1, 0, -1):
        nodes = []
        for parent in level:
            children = draw(st.integers(1, 3))
            for c in range(children):
                copy = c == 0 and draw(st.booleans())
                nodes.append(((parent[0] if copy else f"n{depth}_{len(nodes)}"), *parent))
        level = nodes
    rows = []
    for parent in level:
        for _ in range(draw(st.integers(1, 3))):
            rows.append((f"v{len(rows)}", *parent))
    return rows
