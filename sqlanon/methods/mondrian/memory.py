"""Mondrian in memory, level by level, for tables whose frequency set is small: the same rounds and
the same choice of cut (:func:`~sqlanon.methods.mondrian.cuts.choose_cut`) as the database path
(:mod:`sqlanon.methods.mondrian.partitioning`), with each round's statistics computed by numpy.

A strict partitioning reads the frequency set (the distinct quasi-identifier tuples with their
counts): the medians are taken over cumulative counts, so every tuple stands for its rows. A relaxed
one splits the rows of one value by their order, so it reads the rows, in the source's stored order,
and keeps each open partition's rows in the partition's order (the reference's order: rows below the
cut value, then those moved left from it in reverse; on the right, the rows above, then the rest of
the value's rows).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from sqlanon.methods.mondrian.cuts import AttributeStats, Cut, Hierarchical, Partition, choose_cut
from sqlanon.methods.mondrian.partitioning import Options, Partitioning, hierarchy_stats, no_collection

DENSE_CELLS = 1 << 16
"""An attribute's statistics come from a partitions × values grid of counts while the grid has at
most this many cells (or four per tuple), else from sorting the tuples."""


class MemoryRounds:
    """One partitioning run over ``values`` (tuples × attributes) with ``counts`` rows each.

    Relaxed runs take one row per tuple (counts of 1) in the source's stored order. After
    :meth:`run`, :attr:`assignment` holds each tuple's final partition id.
    """

    def __init__(self, values: np.ndarray, counts: np.ndarray, options: Options,
                 hierarchies: Sequence[Hierarchical | None]) -> None:
        self.values = np.asarray(values, dtype=np.float64).reshape(len(counts), len(hierarchies))
        self.counts = np.asarray(counts, dtype=np.int64)
        self.options = options
        self.hierarchies = list(hierarchies)
        self.assignment = np.zeros(len(self.counts), dtype=np.int64)
        self._next = 0
        self._domains: dict[int, tuple[np.ndarray, np.ndarray]] = {}

    def _new_pid(self) -> int:
        self._next += 1
        return self._next

    def run(self) -> Partitioning:
        with no_collection():
            return self._run()

    def _run(self) -> Partitioning:
        n_attr = len(self.hierarchies)
        rows = int(self.counts.sum())
        if rows:
            lows, highs = self.values.min(axis=0).tolist(), self.values.max(axis=0).tolist()
        else:
            lows = highs = [0.0] * n_attr
        ranges = [h - lo for lo, h in zip(lows, highs)]
        root = Partition(0, rows, list(zip(lows, highs)),
                         [h.root() if h is not None else None for h in self.hierarchies])
        result = Partitioning([], ranges, rows)
        open_parts = {0: root} if rows else {}
        rows_open = np.arange(len(self.counts))
        o = self.options
        while open_parts:
            # too small to cut (and no hierarchy to specialize): final, its box exact, as choose_cut does
            small = {pid for pid, p in open_parts.items() if p.rows // 2 < o.k} \
                if not any(self.hierarchies) else set()
            stats = self._statistics(rows_open, open_parts, small)
            candidates: dict[int, Cut] = {}
            for pid in sorted(open_parts):
                p = open_parts[pid]
                if pid in small:
                    result.partitions.append(p)
                    continue
                cut = choose_cut(p, stats[pid], k=o.k, strict=o.strict, exact=o.exact, ranges=ranges,
                                 hierarchies=self.hierarchies, new_pid=self._new_pid)
                if cut is None:
                    result.partitions.append(p)
                else:
                    candidates[pid] = cut
            if not candidates:
                break
            result.rounds += 1
            result.cuts.update(candidates)
            open_parts = {c.pid: c for cut in candidates.values() for c in cut.children}
            rows_open = self._cut(rows_open, candidates)
        result.partitions.sort(key=lambda p: p.pid)
        return result

    def _statistics(self, rows_open: np.ndarray, open_parts: dict[int, Partition], small: set[int]
                    ) -> dict[int, list[AttributeStats]]:
        """Per open partition and attribute, what the database path's statistics query returns; the
        ``small`` partitions get their exact boxes instead."""
        out: dict[int, list[Any]] = {pid: [None] * len(self.hierarchies) for pid in open_parts}
        pids = self.assignment[rows_open]
        weights = self.counts[rows_open]
        first_pid = min(open_parts)  # a round's open partitions have consecutive ids
        local = pids - first_pid
        n_parts = max(open_parts) - first_pid + 1
        for a, h in enumerate(self.hierarchies):
            if h is not None:
                for pid, counts in _frequency_sets(pids, self.values[rows_open, a], weights).items():
                    out[pid][a] = hierarchy_stats(h, open_parts[pid].nodes[a], counts)
                continue
            domain, rank = self._domain(a)
            if n_parts * len(domain) <= max(DENSE_CELLS, 4 * len(rows_open)):
                columns = _dense_stats(local, rank[rows_open], weights, n_parts, domain)
                columns[0] += first_pid
            else:
                columns = _sorted_stats(pids, self.values[rows_open, a], weights)
            if small:
                final = np.isin(columns[0], np.fromiter(small, dtype=np.int64, count=len(small)))
                for pid, low, high in zip(*(c[final].tolist() for c in columns[:3])):
                    open_parts[pid].box[a] = (low, high)
                columns = [c[~final] for c in columns]
            for pid, low, high, distinct, ok, s, more, t, le, eq in zip(*(c.tolist() for c in columns)):
                out[pid][a] = AttributeStats(low, high, distinct, s if ok else None,
                                             t if ok and more else None, le if ok else 0, eq if ok else 0)
        return out

    def _domain(self, a: int) -> tuple[np.ndarray, np.ndarray]:
        """Attribute ``a``'s distinct values, and each tuple's position among them."""
        if a not in self._domains:
            values, rank = np.unique(self.values[:, a], return_inverse=True)
            self._domains[a] = (values, rank.reshape(-1))
        return self._domains[a]

    def _cut(self, rows_open: np.ndarray, cuts: dict[int, Cut]) -> np.ndarray:
        """Moves the tuples of cut partitions to their new partitions; the tuples now open, each
        partition's in its order (relaxed)."""
        size = self._next + 1
        attribute = np.full(size, -1, dtype=np.int64)
        s = np.zeros(size)
        moved = np.zeros(size, dtype=np.int64)
        left = np.zeros(size, dtype=np.int64)
        right = np.zeros(size, dtype=np.int64)
        hierarchical = []
        for c in cuts.values():
            if c.child_of_value is not None:
                hierarchical.append(c)
                continue
            attribute[c.pid], moved[c.pid] = c.attribute, c.moved
            s[c.pid], left[c.pid], right[c.pid] = c.s, c.children[0].pid, c.children[-1].pid
        pids = self.assignment[rows_open]
        keep = np.isin(pids, np.fromiter(cuts, dtype=np.int64, count=len(cuts)))
        rows_open, pids = rows_open[keep], pids[keep]
        new = np.empty_like(pids)
        group = np.zeros(len(pids), dtype=np.int64)
        position = np.arange(1, len(pids) + 1)
        numeric = attribute[pids] >= 0
        a = attribute[pids[numeric]]
        value = self.values[rows_open[numeric], a]
        cut_at = s[pids[numeric]]
        if self.options.strict or not len(value):
            goes_left = value <= cut_at
        else:
            at_s = value == cut_at
            numeric_pids = pids[numeric]
            # rank of each row at the cut value from its partition's end (rows are in partition order)
            mids = np.cumsum(at_s)
            starts = np.flatnonzero(np.r_[True, numeric_pids[1:] != numeric_pids[:-1]])
            sizes = np.diff(np.r_[starts, len(numeric_pids)])
            ends = mids[np.r_[starts[1:], len(numeric_pids)] - 1]
            from_end = np.repeat(ends, sizes) - mids
            is_moved = at_s & (from_end < moved[numeric_pids])
            goes_left = (value < cut_at) | is_moved
            index = np.flatnonzero(numeric)
            group[index[at_s]] = 1
            position[index[is_moved]] *= -1  # moved rows follow in reverse order
        new[numeric] = np.where(goes_left, left[pids[numeric]], right[pids[numeric]])
        by_pid = np.argsort(pids, kind="stable") if hierarchical else pids
        sorted_pids = pids[by_pid] if hierarchical else pids
        for c in hierarchical:
            lo, hi = np.searchsorted(sorted_pids, [c.pid, c.pid + 1])
            mine = by_pid[lo:hi]
            held = self.values[rows_open[mine], c.attribute]
            for child in c.children:
                low, high = child.box[c.attribute]
                new[mine[(held >= low) & (held <= high)]] = child.pid
        self.assignment[rows_open] = new
        if self.options.strict:
            return rows_open
        return rows_open[np.lexsort((position, group, new))]


def _frequency_sets(pids: np.ndarray, values: np.ndarray, weights: np.ndarray) -> dict[int, dict[int, int]]:
    """Per partition, its rows per value (values are integer codes)."""
    order = np.lexsort((values, pids))
    p, v, w = pids[order], values[order], weights[order]
    starts = np.flatnonzero(np.r_[True, (p[1:] != p[:-1]) | (v[1:] != v[:-1])])
    out: dict[int, dict[int, int]] = {}
    for pid, value, count in zip(p[starts].tolist(), v[starts].astype(np.int64).tolist(),
                                 np.add.reduceat(w, starts).tolist()):
        out.setdefault(pid, {})[value] = count
    return out


def _dense_stats(local: np.ndarray, rank: np.ndarray, weights: np.ndarray, n_parts: int,
                 domain: np.ndarray) -> list[np.ndarray]:
    """The statistics of one attribute from a partitions × values grid of counts."""
    m = len(domain)
    grid = np.bincount(local * m + rank, weights=weights, minlength=n_parts * m).reshape(n_parts, m)
    grid = grid.astype(np.int64)
    present = grid > 0
    held = np.flatnonzero(present.any(axis=1))
    grid, present = grid[held], present[held]
    rows = np.arange(len(held))
    cum = np.cumsum(grid, axis=1)
    n = cum[:, -1]
    distinct = present.sum(axis=1)
    low = present.argmax(axis=1)
    high = m - 1 - present[:, ::-1].argmax(axis=1)
    # the cut: the first value whose cumulative count reaches n // 2 (as ``2·cum >= n - 1``)
    at = (2 * cum >= (n - 1)[:, None]).argmax(axis=1)
    valid = 2 * (cum[rows, at] - grid[rows, at]) < n - 1
    seen = np.cumsum(present, axis=1)
    more = seen[rows, at] < distinct
    nxt = (seen > seen[rows, at][:, None]).argmax(axis=1)
    return [held, domain[low], domain[high], distinct, valid, domain[at], more, domain[nxt],
            cum[rows, at], grid[rows, at]]


def _sorted_stats(pids: np.ndarray, values: np.ndarray, weights: np.ndarray) -> list[np.ndarray]:
    """The statistics of one attribute from its (partition, value) groups, sorted."""
    order = np.lexsort((values, pids))
    p, v, w = pids[order], values[order], weights[order]
    starts = np.flatnonzero(np.r_[True, (p[1:] != p[:-1]) | (v[1:] != v[:-1])])
    gp, gv, gc = p[starts], v[starts], np.add.reduceat(w, starts)
    first = np.flatnonzero(np.r_[True, gp[1:] != gp[:-1]])
    last = np.r_[first[1:], len(gp)] - 1
    cum = np.cumsum(gc)
    before = np.r_[0, cum[:-1]][first]
    n = np.add.reduceat(gc, first)
    size = last - first + 1
    cum -= np.repeat(before, size)
    at = first + np.add.reduceat(~(2 * cum >= np.repeat(n - 1, size)), first)
    valid = 2 * (cum[at] - gc[at]) < n - 1
    nxt = gv[np.minimum(at + 1, last)]
    return [gp[first], gv[first], gv[last], size, valid, gv[at], at < last, nxt, cum[at], gc[at]]
