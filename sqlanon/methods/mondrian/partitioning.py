"""Mondrian in the database, level by level: every round cuts all open partitions with one statistics
query and one statement (:mod:`sqlanon.methods.mondrian.rounds`); only per-partition statistics come
to Python, where :func:`~sqlanon.methods.mondrian.cuts.choose_cut` decides each partition's cut.

Depth-first order does not matter: a partition's cut depends on its own rows and its inherited box
only, so rounds breadth-first give the partitions of the recursive algorithm.
"""

from __future__ import annotations

import contextlib
import gc
from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import pyarrow as pa
from sqlglot import exp

from sqlanon.engines.base import Engine, internal_name
from sqlanon.methods.mondrian import rounds
from sqlanon.methods.mondrian.cuts import AttributeStats, Cut, Hierarchical, Partition, choose_cut
from sqlanon.sql.nodes import alias, as_expression, col, lit

INLINE_ROWS = 256
"""A round's cuts up to this many go into its statement as VALUES; more are sent as a table."""
POSITION_LIMIT = 2 ** 60
"""Relaxed positions are renumbered before they could pass this bound."""


@dataclass(frozen=True)
class Options:
    k: int
    strict: bool = True
    exact: bool = True


@dataclass
class Partitioning:
    """The final partitions (boxes exact) and how they were found."""

    partitions: list[Partition]
    ranges: list[float]
    rows: int
    cuts: dict[int, Cut] = field(default_factory=dict)
    """Every cut made, by the id of the partition it cut (the tree of a strict partitioning)."""
    work: str | None = None
    """The work table (relaxed: the rows' partitions), when kept."""
    rounds: int = 0
    queries: int = 0
    tuples: pa.Table | None = None
    """A partitioning made in memory: each distinct tuple of the quasi-identifiers (strict: columns
    ``__sa_q0``, ... as read: numbers, or codes of coded attributes) or each row key (relaxed:
    ``__sa_key``), and its partition (``__sa_pid``)."""


class Allowed(Protocol):
    """Judges candidate cuts against privacy models beyond k."""

    queries: int

    def prepare(self, work: str) -> None:
        """Read what the judging needs from the first work table."""

    def __call__(self, assigned: exp.Select, candidates: dict[int, Cut]) -> set[int]:
        """The ids of the partitions whose candidate cut the models refuse; ``assigned`` is the work
        table's rows in the partitions the candidates would make."""


class Rounds:
    """One partitioning run on an engine."""

    def __init__(self, engine: Engine, source: exp.Expression, values: Sequence[exp.Expression],
                 options: Options, *, order: exp.Expression | None = None,
                 hierarchies: Sequence[Hierarchical | None] | None = None,
                 extra: Sequence[exp.Expression] = ()) -> None:
        self.engine = engine
        self.source = source
        self.values = list(values)
        self.options = options
        self.order = order
        self.hierarchies = list(hierarchies or [None] * len(values))
        self.extra = list(extra)
        self.queries = 0
        self._next = 0
        self._stats_query: exp.Expression | None = None
        self._frequency_query: exp.Expression | None = None
        self._keep_final = True
        """Whether the work table keeps the rows of final partitions (a relaxed release reads them)."""

    def _new_pid(self) -> int:
        self._next += 1
        return self._next

    def _run(self, statement: exp.Expression) -> None:
        self.queries += 1
        self.engine.execute(statement)

    def _fetch(self, query: exp.Expression) -> dict[str, Any]:
        self.queries += 1
        return self.engine.fetch_numpy(query)

    def _create_work(self) -> str:
        work = internal_name("mondrian_work")
        columns = [alias(lit(0), rounds.PID), *[alias(v, rounds.q(i)) for i, v in enumerate(self.values)],
                   *self.extra]
        if not self.options.strict:
            assert self.order is not None
            number = exp.Window(this=exp.RowNumber(),
                                order=exp.Order(expressions=[exp.Ordered(this=self.order)]))
            columns.append(alias(exp.Sub(this=number, expression=lit(1)), rounds.POS))
        self.engine.create_table_as(work, exp.select(*columns).from_(self.source.copy()), temporary=True)
        self.queries += 1
        return work

    def run(self, keep_work: bool = False, allowed: Allowed | None = None) -> Partitioning:
        self._keep_final = keep_work
        with no_collection():
            return self._run_rounds(keep_work, allowed)

    def _run_rounds(self, keep_work: bool, allowed: Allowed | None) -> Partitioning:
        engine = self.engine
        n_attr = len(self.values)
        work = self._create_work()
        try:
            if allowed is not None:
                allowed.prepare(work)
            bounds = self._fetch(exp.select(alias(exp.Count(this=exp.Star()), "n"), *[
                alias(exp.Min(this=col(rounds.q(i))), f"low{i}") for i in range(n_attr)], *[
                alias(exp.Max(this=col(rounds.q(i))), f"high{i}") for i in range(n_attr)])
                .from_(rounds.table_of(work)))
            rows = int(bounds["n"][0])
            lows = [float(bounds[f"low{i}"][0]) for i in range(n_attr)]
            highs = [float(bounds[f"high{i}"][0]) for i in range(n_attr)]
            ranges = [h - lo for lo, h in zip(lows, highs)]
            root = Partition(0, rows, list(zip(lows, highs)),
                             [h.root() if h is not None else None for h in self.hierarchies])
            result = Partitioning([], ranges, rows)
            open_parts = {0: root} if rows else {}
            first_open = 0
            bound = max(rows, 1)
            old: str | None = None
            while open_parts:
                stats = self._statistics(work, first_open, open_parts)
                if old is not None:  # after the new table was first read (an engine may cache it then)
                    engine.drop(old)
                    old = None
                candidates: dict[int, Cut] = {}
                for pid in sorted(open_parts):
                    p = open_parts[pid]
                    cut = self._choose(p, stats[pid], ranges)
                    if cut is None:
                        result.partitions.append(p)
                    else:
                        candidates[pid] = cut
                if allowed is not None and candidates:
                    candidates = self._privacy(work, bound, candidates, stats, ranges, allowed, result)
                if not candidates:
                    break
                result.rounds += 1
                result.cuts.update(candidates)
                first_open = min(c.children[0].pid for c in candidates.values())
                open_parts = {c.pid: c for cut in candidates.values() for c in cut.children}
                new, bound = self._cut(work, candidates, bound), bound * 2
                old, work = work, new
                if not self.options.strict and bound > POSITION_LIMIT:
                    work, bound = self._renumber(work), max(rows, 1)
            if old is not None:
                engine.drop(old)
            result.partitions.sort(key=lambda p: p.pid)
            result.queries = self.queries + (allowed.queries if allowed is not None else 0)
            if keep_work:
                result.work = work
                work = ""
            return result
        finally:
            if work:
                engine.drop(work)

    def _choose(self, p: Partition, stats: list[AttributeStats], ranges: list[float]) -> Cut | None:
        o = self.options
        return choose_cut(p, stats, k=o.k, strict=o.strict, exact=o.exact, ranges=ranges,
                          hierarchies=self.hierarchies, new_pid=self._new_pid)

    def _privacy(self, work: str, bound: int, candidates: dict[int, Cut],
                 stats: dict[int, list[AttributeStats]], ranges: list[float], allowed: Allowed,
                 result: Partitioning) -> dict[int, Cut]:
        """Cuts the privacy models refuse are tried again with the next attribute, until every
        partition has an allowed cut or none is left (then it is final)."""
        refused: dict[int, set[int]] = defaultdict(set)
        accepted: dict[int, Cut] = {}
        pending = candidates
        while pending:
            with self._assigned(work, pending, bound) as assigned:
                bad = allowed(assigned, pending)
            retried: dict[int, Cut] = {}
            for pid, cut in pending.items():
                if pid not in bad:
                    accepted[pid] = cut
                    continue
                refused[pid].add(cut.attribute)
                parent = cut.parent
                assert parent is not None
                retry = choose_cut(parent, stats[pid], k=self.options.k, strict=self.options.strict,
                                   exact=self.options.exact, ranges=ranges, hierarchies=self.hierarchies,
                                   new_pid=self._new_pid, skip=refused[pid])
                if retry is None:
                    result.partitions.append(parent)
                else:
                    retried[pid] = retry
            pending = retried
        return accepted

    def _statistics(self, work: str, first_open: int, open_parts: dict[int, Partition]
                    ) -> dict[int, list[AttributeStats]]:
        n_attr = len(self.values)
        hier = [i for i, h in enumerate(self.hierarchies) if h is not None]
        out: dict[int, list[Any]] = {pid: [None] * n_attr for pid in open_parts}
        got: dict[str, list[Any]] = {"__sa_pid": []}
        if len(hier) < n_attr:
            if self._stats_query is None:
                self._stats_query = rounds.statistics_query(work, n_attr, first_open, hier)
            else:
                rounds.retarget(self._stats_query, work, first_open)
            self.queries += 1
            fetched = self.engine.fetch_arrow(self._stats_query)
            got = {name: fetched.column(name).to_pylist() for name in fetched.column_names}
        for pid, a, low, high, distinct, s, t, le, eq in zip(
                got["__sa_pid"], got["__sa_a"], got["low"], got["high"], got["distinct"], got["s"], got["t"],
                got["le"], got["eq"]):
            out[pid][a] = AttributeStats(low, high, distinct, s, t, le or 0, eq or 0)
        if hier:
            if self._frequency_query is None:
                self._frequency_query = rounds.frequency_query(work, hier, first_open)
            else:
                rounds.retarget(self._frequency_query, work, first_open)
            self.queries += 1
            freq = self.engine.fetch_arrow(self._frequency_query)
            per: dict[tuple[int, int], dict[int, int]] = defaultdict(dict)
            columns = (freq.column(name).to_pylist() for name in (rounds.PID, rounds.A, rounds.V, rounds.C))
            for pid, a, v, c in zip(*columns):
                per[(pid, a)][int(v)] = int(c)
            for (pid, a), counts in per.items():
                h = self.hierarchies[a]
                assert h is not None
                out[pid][a] = hierarchy_stats(h, open_parts[pid].nodes[a], counts)
        return out

    @contextlib.contextmanager
    def _assigned(self, work: str, cuts: dict[int, Cut], bound: int) -> Iterator[exp.Select]:
        """The work table's rows in their partitions after ``cuts`` (a query, valid inside the block:
        it reads the round's cut relations)."""
        values = list(cuts.values())
        table = pa.table({
            rounds.PID: pa.array([c.pid for c in values], pa.int64()),
            rounds.ATTRIBUTE: pa.array([c.attribute for c in values], pa.int64()),
            rounds.S: pa.array([c.s for c in values], pa.float64()),
            rounds.MOVED: pa.array([c.moved for c in values], pa.int64()),
            rounds.LEFT: pa.array([c.children[0].pid for c in values], pa.int64()),
            rounds.RIGHT: pa.array([c.children[-1].pid for c in values], pa.int64())})
        children = self._children(cuts)
        with self._relation("cuts", table, "c") as cut_relation, \
                self._relation("children", children, "h") as child_relation:
            assert cut_relation is not None  # a round has at least one cut
            yield rounds.cut_query(work, cut_relation, len(self.values), relaxed=not self.options.strict,
                                   bound=bound, hierarchical=child_relation, extra=self.extra,
                                   keep_final=self._keep_final)

    def _cut(self, work: str, cuts: dict[int, Cut], bound: int) -> str:
        new = internal_name("mondrian_work")
        with self._assigned(work, cuts, bound) as query:
            self._run(exp.Create(this=rounds.table_of(new), kind="TABLE", expression=query,
                                 properties=exp.Properties(expressions=[exp.TemporaryProperty()])))
        return new

    @contextlib.contextmanager
    def _relation(self, what: str, data: pa.Table | None, name: str) -> Iterator[exp.Expression | None]:
        """``data`` as a relation aliased ``name``: inline VALUES when small (no statement of its own),
        else a temporary table dropped after the block; None for no data."""
        if data is None or data.num_rows == 0:
            yield None
            return
        if data.num_rows <= INLINE_ROWS:
            double = exp.DataType.build("double")
            rows = [tuple(exp.cast(lit(v), double) if f.type == pa.float64() else lit(v)
                          for v, f in zip(row, data.schema)) for row in zip(*data.to_pydict().values())]
            yield exp.values(rows, alias=name, columns=data.column_names)
            return
        temporary = internal_name(f"mondrian_{what}")
        self.engine.create_table_from_arrow(temporary, data, temporary=True)
        self.queries += 1
        try:
            yield as_expression(exp.alias_(rounds.table_of(temporary), name, table=True, quoted=True))
        finally:
            self.engine.drop(temporary)

    def _children(self, cuts: dict[int, Cut]) -> pa.Table | None:
        rows: list[tuple[int, float, float, int]] = []
        for c in cuts.values():
            if c.child_of_value is None:
                continue
            for child in c.children:
                low, high = child.box[c.attribute]
                rows.append((c.pid, low, high, child.pid))
        if not rows:
            return None
        pids, lows, highs, children = zip(*rows)
        return pa.table({
            rounds.PID: pa.array(pids, pa.int64()), rounds.CHILD_LOW: pa.array(lows, pa.float64()),
            rounds.CHILD_HIGH: pa.array(highs, pa.float64()), rounds.CHILD: pa.array(children, pa.int64())})

    def _renumber(self, work: str) -> str:
        new = internal_name("mondrian_work")
        number = exp.Window(this=exp.RowNumber(), partition_by=[col(rounds.PID)],
                            order=exp.Order(expressions=[exp.Ordered(this=col(rounds.POS))]))
        keep = [col(rounds.PID), *[col(rounds.q(i)) for i in range(len(self.values))],
                *[col(e.alias_or_name) for e in self.extra]]
        self.engine.create_table_as(new, exp.select(*keep, alias(exp.Sub(this=number, expression=lit(1)),
                                                                   rounds.POS)).from_(rounds.table_of(work)),
                                    temporary=True)
        self.queries += 1
        self.engine.drop(work)
        return new


@contextlib.contextmanager
def no_collection() -> Iterator[None]:
    """Garbage collection paused while the partitions are made: each collection would walk every
    partition made so far, for nothing (they form no cycles: reference counting frees them)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def hierarchy_stats(h: Hierarchical, node: int | None, counts: dict[int, int]) -> AttributeStats:
    assert node is not None
    children = h.children(node)
    per_child: dict[int, int] = {}
    spans = [h.span(c) for c in children]
    for v, c in counts.items():
        for i, (lo, hi) in enumerate(spans):
            if lo <= v <= hi:
                per_child[i] = per_child.get(i, 0) + c
                break
    values = sorted(counts)
    return AttributeStats(float(values[0]), float(values[-1]), len(values), None, None, 0, 0, per_child)

