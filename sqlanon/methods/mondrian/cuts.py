"""Mondrian's choice of cut for one partition, from the partition's per-attribute statistics.

Engine-free: the statistics come from one query per round (:mod:`sqlanon.methods.mondrian.rounds`);
the rules are LeFevre, DeWitt and Ramakrishnan's (ICDE 2006) as the reference implementation applies
them (docs/local-recoding.md#mondrian): the widest allowed attribute first (normalized width, ties to
the earlier attribute), cut at the median of its frequency set, strict or relaxed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass


@dataclass(slots=True)
class AttributeStats:
    """One attribute in one partition: its values' range, distinct count and median cut.

    ``s`` is the first value (in order) whose cumulative count reaches ``rows // 2``, ``t`` the next
    distinct value (None when ``s`` is the largest), ``le`` the rows with a value <= ``s`` and ``eq``
    the rows with value ``s``. ``children`` (hierarchical attributes only) are the row counts of the
    hierarchy node's children that hold rows, by child index.
    """

    low: float
    high: float
    distinct: int
    s: float | None
    t: float | None
    le: int
    eq: int
    children: dict[int, int] | None = None


@dataclass(slots=True)
class Partition:
    pid: int
    rows: int
    box: list[tuple[float, float]]
    """Per attribute: (low, high); for a hierarchical attribute the node's (first leaf, last leaf)."""
    nodes: list[int | None]
    """Per attribute: the hierarchy node the partition is generalized to (None: not hierarchical)."""


@dataclass(frozen=True)
class Cut:
    """A partition's cut: attribute ``attribute`` at ``s`` (numeric), or by hierarchy children."""

    pid: int
    attribute: int
    s: float | None
    moved: int
    """Relaxed: how many rows of value ``s`` go left (the last ones in the partition's order)."""
    children: list[Partition]
    """The new partitions: left then right, or one per non-empty hierarchy child (child index order)."""
    child_of_value: dict[int, int] | None = None
    """Hierarchical cuts: child index -> position in ``children``."""
    parent: Partition | None = None
    """The partition cut (its boxes as they were when the cut was chosen)."""


class Hierarchical:
    """What a cut needs of a hierarchy (codes are leaves in file order)."""

    def root(self) -> int:
        raise NotImplementedError

    def children(self, node: int) -> list[int]:
        raise NotImplementedError

    def span(self, node: int) -> tuple[int, int]:
        """The first and last leaf code under ``node``."""
        raise NotImplementedError

    def width(self, node: int) -> float:
        """Leaves under the node over leaves of the hierarchy, 0 for a node over one leaf."""
        raise NotImplementedError


def normalized_width(low: float, high: float, whole: float) -> float:
    width = high - low
    return 1.0 if width == whole else width / whole


def _width(p: Partition, a: int, ranges: Sequence[float],
           hierarchies: Sequence[Hierarchical | None]) -> float:
    h = hierarchies[a]
    node = p.nodes[a]
    if h is not None and node is not None:
        return h.width(node)
    low, high = p.box[a]
    return normalized_width(low, high, ranges[a])


def choose_cut(p: Partition, stats: Sequence[AttributeStats], *, k: int, strict: bool, exact: bool,
               ranges: Sequence[float], hierarchies: Sequence[Hierarchical | None],
               new_pid: Callable[[], int], skip: set[int] | frozenset[int] = frozenset()) -> Cut | None:
    """The cut of ``p`` (None: ``p`` is final, its box made exact).

    ``exact``: every box is the rows' (min, max) before widths are compared; else a box is reset only
    when its attribute is tried (the reference implementation's inherited boxes). ``skip``: attributes
    already tried (a cut the privacy models refused is tried again without its attribute).
    """
    n_attributes = len(stats)
    if exact or (p.rows // 2 < k and not any(hierarchies)):
        for a, st in enumerate(stats):
            if hierarchies[a] is None:
                p.box[a] = (st.low, st.high)
        if p.rows // 2 < k and not any(hierarchies):
            return None  # no median cut leaves k rows on both sides
    # Trying an attribute changes only its own box, so the others' widths stay as they are: the
    # order of the repeated choice (widest first, ties to the earlier attribute) is known at once.
    widths = [_width(p, a, ranges, hierarchies) for a in range(n_attributes)]
    # widest first; a reversed sort keeps equal widths in attribute order (sorting is stable)
    order = sorted((a for a in range(n_attributes) if a not in skip), key=widths.__getitem__, reverse=True)
    for d in order:
        st = stats[d]
        h = hierarchies[d]
        if h is not None:
            cut = _hierarchy_cut(p, d, st, h, k, new_pid)
        else:
            p.box[d] = (st.low, st.high)
            cut = _median_cut(p, d, st, k, strict, new_pid)
        if cut is not None:
            return Cut(cut.pid, cut.attribute, cut.s, cut.moved, cut.children, cut.child_of_value, p)
    return None


def _child(p: Partition, pid: int, rows: int, a: int, box: tuple[float, float], node: int | None = None
           ) -> Partition:
    c = Partition(pid, rows, list(p.box), list(p.nodes))
    c.box[a] = box
    if node is not None:
        c.nodes[a] = node
    return c


def _median_cut(p: Partition, d: int, st: AttributeStats, k: int, strict: bool,
                new_pid: Callable[[], int]) -> Cut | None:
    n = p.rows
    middle = n // 2
    if middle < k or st.distinct <= 1 or st.s is None:
        return None
    low, high = p.box[d]
    s, t = st.s, st.t
    if strict:
        if t is None:
            return None
        left, right = st.le, n - st.le
        if left < k or right < k:
            return None
        return Cut(p.pid, d, s, 0, [_child(p, new_pid(), left, d, (low, s)),
                                    _child(p, new_pid(), right, d, (t, high))])
    below = st.le - st.eq
    moved = middle - below
    mid_right = st.eq - moved
    right_low = s if mid_right > 0 or t is None else t
    return Cut(p.pid, d, s, moved, [_child(p, new_pid(), middle, d, (low, s)),
                                    _child(p, new_pid(), n - middle, d, (right_low, high))])


def _hierarchy_cut(p: Partition, d: int, st: AttributeStats, h: Hierarchical, k: int,
                   new_pid: Callable[[], int]) -> Cut | None:
    node = p.nodes[d]
    assert node is not None
    children = h.children(node)
    counts = st.children or {}
    if not children or any(0 < c < k for c in counts.values()):
        return None
    present = [i for i in range(len(children)) if counts.get(i, 0) > 0]
    parts = [_child(p, new_pid(), counts[i], d, h.span(children[i]), children[i]) for i in present]
    return Cut(p.pid, d, None, 0, parts, {i: j for j, i in enumerate(present)})
