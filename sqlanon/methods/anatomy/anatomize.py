"""The Anatomize algorithm (Xiao and Tao 2006, Fig. 5) on bucket sizes alone.

Which rows form a group matters only through their sensitive values, so the groups' structure is
computed from the size of each bucket (the rows sharing a sensitive value): while at least ``l``
buckets are non-empty, one row is taken from each of the ``l`` largest buckets to form a group
(ties between buckets of equal size by their order in ``sizes``); every bucket then holds at most one
residual row, and each residual row joins a group chosen uniformly at random among those that do not
hold its value yet (the paper's step 12). Which row of a bucket goes where is left to the database
(rows numbered within their bucket in a keyed random order, :mod:`.assign`).

Groups with the same buckets are interchangeable, so they are counted together while the loop runs
(a tie at the boundary of the ``l`` largest alternates buckets, but the number of distinct sets
stays small), then numbered with equal sets side by side: each bucket's rows then go to runs of
consecutive groups, one row per group, and a bucket's share of the groups is a few ranges of row
numbers (:class:`Run`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


class NotEligible(ValueError):
    """A sensitive value is held by more than n/l rows: no grouping is l-diverse."""

    def __init__(self, bucket: int, size: int, rows: int, l: int) -> None:  # noqa: E741 -- the paper's l
        self.bucket, self.size, self.rows, self.l = bucket, size, rows, l
        super().__init__(f"bucket {bucket} holds {size} of {rows} rows, more than n/l = {rows / l:g}")


@dataclass(frozen=True)
class Run:
    """Rows ``first``..``last`` (numbered from 1 within bucket ``bucket``) go to groups
    ``group``, ``group + 1``, ..., one row each."""

    bucket: int
    first: int
    last: int
    group: int


@dataclass(frozen=True)
class Structure:
    """The groups of one Anatomize run."""

    sizes: tuple[int, ...]
    l: int  # noqa: E741 -- the paper's l
    classes: tuple[tuple[tuple[int, ...], int], ...]
    """(the buckets of a group, how many groups have exactly those), in group-number order: groups
    1..c of the first class, then the next class's, and so on."""
    residue: tuple[tuple[int, tuple[int, ...]], ...]
    """Every residual row: its bucket and the buckets of the group it joined (its own included), in
    the order they were assigned."""

    @property
    def rows(self) -> int:
        return sum(self.sizes)

    @property
    def groups(self) -> int:
        return sum(c for _, c in self.classes)

    def group_sizes(self) -> tuple[int, int]:
        """The smallest and the largest group."""
        sizes = [len(b) for b, _ in self.classes]
        return min(sizes), max(sizes)

    def runs(self) -> list[Run]:
        """Each bucket's rows as runs of consecutive groups (rows numbered from 1 per bucket)."""
        runs: list[Run] = []
        next_row = [1] * len(self.sizes)
        group = 1
        for buckets, count in self.classes:
            for b in buckets:
                runs.append(Run(b, next_row[b], next_row[b] + count - 1, group))
                next_row[b] += count
            group += count
        assert next_row == [s + 1 for s in self.sizes]
        return runs

    def group_of(self, bucket: int, row: int) -> int:
        """The group of row ``row`` (from 1) of ``bucket``."""
        for r in self.runs():
            if r.bucket == bucket and r.first <= row <= r.last:
                return r.group + row - r.first
        raise KeyError((bucket, row))


def check_eligible(sizes: Sequence[int], l: int) -> None:  # noqa: E741
    """Raise :class:`NotEligible` for the largest bucket when it holds more than n/l rows."""
    n = sum(sizes)
    if not sizes or n == 0:
        raise ValueError("no rows")
    largest = max(range(len(sizes)), key=lambda b: (sizes[b], -b))
    if sizes[largest] * l > n:
        raise NotEligible(largest, sizes[largest], n, l)


def _largest(counts: list[int], l: int) -> list[int]:  # noqa: E741
    """The ``l`` largest non-empty buckets, ties by bucket order (fewer when fewer are non-empty)."""
    return sorted((b for b, c in enumerate(counts) if c > 0), key=lambda b: (-counts[b], b))[:l + 1]


def _cycles(counts: list[int], order: list[int], l: int) -> tuple[list[tuple[int, ...]], int]:  # noqa: E741
    """At a tie across the boundary of the ``l`` largest: the sets of one cycle and how many times
    it repeats unchanged.

    With ``a`` buckets above the tie (always taken) and ``t`` tied at count ``c`` (``t > l - a``),
    every ``t`` steps take each tied bucket ``l - a`` times (the tied counts never differ by more than
    one, so after ``t`` steps they are equal again) and each bucket above ``t`` times: the state
    repeats, shifted, as long as the buckets above stay above the tie and the tie above the buckets
    below. (0 cycles: take one step.)"""
    c = counts[order[l - 1]]
    above = [b for b in range(len(counts)) if counts[b] > c]
    tied = [b for b in range(len(counts)) if counts[b] == c]
    a, t = len(above), len(tied)
    below = max((x for x in counts if x < c), default=0)
    repeats = (c - below) // (l - a)
    if above:
        spare = min(counts[b] for b in above) - c - t
        repeats = 0 if spare < 0 else min(repeats, spare // (t - l + a) + 1)
    if repeats < 1:
        return [], 0
    state = list(counts)
    sets = []
    for _ in range(t):
        top = _largest(state, l)[:l]
        sets.append(tuple(sorted(top)))
        for b in top:
            state[b] -= 1
    expected = [x - t if b in above else x - (l - a) if b in tied else x for b, x in enumerate(counts)]
    return (sets, repeats) if state == expected else ([], 0)


def _rotation(counts: list[int], l: int) -> tuple[list[tuple[int, ...]], list[tuple[int, ...]], int]:  # noqa: E741
    """While the largest buckets are within one row of each other (more than ``l`` of them, the
    others at least two rows below), the steps rotate through them: the sets taken before the
    pattern of their counts (relative to the smallest) first repeats, the sets of one period, and how
    many periods fit before the rotating buckets come down to the next bucket's count. (No
    rotation: two empty lists and 0.)"""
    high = max(counts)
    active = [b for b, x in enumerate(counts) if x >= high - 1]
    if len(active) <= l:
        return [], [], 0
    below = max((x for x in counts if x < high - 1), default=0)
    state = list(counts)

    def pattern() -> tuple[tuple[int, ...], int]:
        low = min(state[b] for b in active)
        return tuple(state[b] - low for b in active), low

    seen = {pattern()[0]: (0, pattern()[1])}
    sets: list[tuple[int, ...]] = []
    for step in range(1, 2 * len(active) ** 2 + 2):
        top = _largest(state, l)[:l]
        sets.append(tuple(sorted(top)))
        for b in top:
            state[b] -= 1
        shape, low = pattern()
        if low <= below:
            return [], [], 0
        if shape in seen:
            start, start_low = seen[shape]
            drop = start_low - low
            return sets[:start], sets[start:], (start_low - below - 1) // drop
        seen[shape] = (step, low)
    return [], [], 0


def form_groups(sizes: Sequence[int], l: int) -> tuple[dict[tuple[int, ...], int], list[int]]:  # noqa: E741
    """The paper's steps 3-8: the groups of ``l`` rows (their buckets -> how many such groups) and
    what is left of each bucket.

    Runs of steps that take the same buckets are taken at once, and so are repeated cycles at a tie
    (:func:`_cycles`), so the loop runs about once per change of the largest buckets, not once per
    group."""
    counts = [int(s) for s in sizes]
    found: dict[tuple[int, ...], int] = {}

    def take(sets: list[tuple[int, ...]], times: int) -> None:
        for key in sets:
            found[key] = found.get(key, 0) + times
            for b in key:
                counts[b] -= times

    while True:
        order = _largest(counts, l)
        if len(order) < l:
            return found, counts
        following = counts[order[l]] if len(order) > l else 0
        # the same l buckets stay the largest until the smallest of them falls to the next one's size
        if counts[order[l - 1]] > following:
            take([tuple(sorted(order[:l]))], counts[order[l - 1]] - following)
            continue
        sets, repeats = _cycles(counts, order, l)
        if repeats:
            take(sets, repeats)
            continue
        before, period, repeats = _rotation(counts, l)
        if repeats:
            take(before, 1)
            take(period, repeats)
        else:
            take([tuple(sorted(order[:l]))], 1)


def anatomize(sizes: Sequence[int], l: int, rng: np.random.Generator) -> Structure:  # noqa: E741
    """The groups of Anatomize on buckets of ``sizes`` rows; ``rng`` draws the residual rows' groups.

    Raises:
        NotEligible: a bucket holds more than n/l rows.
    """
    check_eligible(sizes, l)
    found, counts = form_groups(sizes, l)
    sets = [frozenset(k) for k in found]
    members = list(found.values())
    residue: list[tuple[int, tuple[int, ...]]] = []
    for b, left in enumerate(counts):
        if left == 0:
            continue
        assert left == 1, "the paper's Lemma: every bucket keeps at most one residual row"
        eligible = [i for i, buckets in enumerate(sets) if b not in buckets and members[i] > 0]
        pick = int(rng.integers(sum(members[i] for i in eligible)))
        for i in eligible:
            if pick < members[i]:
                break
            pick -= members[i]
        members[i] -= 1
        sets.append(sets[i] | {b})
        members.append(1)
        residue.append((b, tuple(sorted(sets[-1]))))
    merged: dict[tuple[int, ...], int] = {}
    for buckets, count in zip(sets, members):
        if count:
            key = tuple(sorted(buckets))
            merged[key] = merged.get(key, 0) + count
    return Structure(tuple(int(s) for s in sizes), l, tuple(sorted(merged.items())), tuple(residue))
