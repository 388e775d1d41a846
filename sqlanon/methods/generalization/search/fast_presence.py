"""A research subset's rows matched to the table's, per class of a node, in memory (δ-presence).

The evaluator matched the subset to the table once, per raw quasi-identifier tuple of the table
(:class:`~sqlanon.domain.models.presence.SubsetCount`'s plan step). That relation is read once, with
each quasi-identifier as its hierarchy key, beside the frequency table, and each of its tuples is
given a frequency row holding the same leaves (its *home*): at every node, a tuple falls into the
class of its home row. A node then groups its classes' representatives and the home rows together
(from the grouping's kept block keys) and sums the matched rows per class: the cost grows with the
classes and the matched tuples, not with the table's rows.

ARX's quality models count the research subset's rows under δ-presence
(:attr:`~sqlanon.domain.metrics.base.MetricContext.population`): the metrics' in-memory forms then
read :class:`SubsetTable` and :class:`SubsetNode`, where each class weighs its matched subset rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol, cast

import numpy as np
from sqlglot import exp

from sqlanon.domain.models.base import Statistic
from sqlanon.errors import UnsupportedError
from sqlanon.methods.generalization.evaluator import Evaluator
from sqlanon.methods.generalization.search.fast_classes import LeafCounts
from sqlanon.methods.generalization.search.fast_load import objects
from sqlanon.methods.generalization.search.grouping import Grouping, combine
from sqlanon.sql.nodes import alias, col, table

if TYPE_CHECKING:  # δ-presence's module is imported by the specs that use it, not by every search
    from sqlanon.domain.models.presence import SubsetCount


class LoadedTable(Protocol):
    """What the matching reads of the loaded frequency table (a FastEvaluator)."""

    rows: int
    leaf_index: list[np.ndarray]
    grouping: Grouping

    def leaves(self, i: int) -> LeafCounts: ...


class MatchedSubset:
    """The subset rows matched to each raw quasi-identifier tuple, placed on the frequency rows.

    Raises:
        UnsupportedError: a matched tuple holds a leaf no frequency row holds (the SQL check then
            generalizes the matched rows in the database).
    """

    def __init__(self, ev: Evaluator, loaded: LoadedTable, statistic: SubsetCount) -> None:
        p = ev.p
        if not ev.engine.relation_exists(ev.relation_name(statistic.step)):
            raise UnsupportedError("the evaluator did not match the research subset to the table "
                                   "(its problem lacks δ-presence); δ-presence is checked in SQL")
        names = [f"q{i}" for i in range(len(p.qis))]
        keys = [alias(p.hierarchies[a].key(col(a)), name) for a, name in zip(p.qis, names)]
        query = exp.select(*keys, alias(exp.Sum(this=col(statistic.matched)), "m")) \
            .from_(table(ev.relation_name(statistic.step)))
        if keys:
            query = query.group_by(*[k.this.copy() for k in keys])
        with ev.engine.purpose("δ-presence: the research subset's matched rows per quasi-identifier tuple"):
            data = ev.engine.fetch_numpy(query)
        matched = np.asarray(data["m"], dtype=np.float64)
        parts = []
        for i, name in enumerate(names):
            leaves = loaded.leaves(i).keys
            number = {key: j for j, key in enumerate(leaves)}
            own = np.fromiter((number.get(v, -1) for v in objects(data[name])), dtype=np.int64,
                              count=len(matched))
            if (own < 0).any():
                raise UnsupportedError(f"the research subset's matched rows hold values of {p.qis[i]!r} "
                                       "no row of the table holds; δ-presence is checked in SQL")
            parts.append((np.concatenate([loaded.leaf_index[i].astype(np.int64), own]), len(leaves)))
        rows = loaded.rows
        tuples, space = combine(parts, rows + len(matched))
        first = np.full(space, -1, dtype=np.int64)  # a row of each tuple: all fall in one class
        first[tuples[:rows]] = np.arange(rows)
        home = first[tuples[rows:]]
        if (home < 0).any():
            raise UnsupportedError("the research subset's matched rows hold quasi-identifier tuples no "
                                   "row of the table holds; δ-presence is checked in SQL")
        kept = matched > 0
        self.home, self.matched = home[kept], matched[kept]
        self.grouping = loaded.grouping

    def counts(self, node: Sequence[int], rep: np.ndarray) -> np.ndarray:
        """The matched subset rows in each class of ``node``, the classes given by one of the
        table's frequency rows each (``rep``)."""
        inv, k = self.grouping.group(node, np.concatenate([rep, self.home]))
        per_class = np.bincount(inv[len(rep):], weights=self.matched, minlength=k)
        return per_class[inv[:len(rep)]].astype(np.int64)


DATA_FREE_METRICS = frozenset({"height"})
"""Metrics that read no rows: under δ-presence they are the same over the table and the subset."""

SUBSET_METRICS = frozenset({"height", "loss", "loss_arithmetic", "precision", "discernibility",
                            "discernibility_star", "aecs"})
"""Metrics whose in-memory forms count the research subset's rows through :class:`SubsetTable`."""


def subset_counts(statistics: Sequence[Statistic]) -> list[SubsetCount]:
    """The statistics counting a research subset's rows (δ-presence's :class:`SubsetCount`, the
    statistic whose in-memory form reads ``subset``)."""
    return [cast("SubsetCount", s) for s in statistics if "subset" in s.memory_inputs]


def refuse_subset_metrics(statistics: Sequence[Statistic], metric_name: str | None) -> None:
    """Refuse a metric whose in-memory form cannot count the research subset's rows, as SQL does.

    Raises:
        UnsupportedError: the caller then checks nodes in SQL.
    """
    if metric_name is None or metric_name in SUBSET_METRICS:
        return
    if subset_counts(statistics):
        raise UnsupportedError(f"under δ-presence the metric {metric_name!r} counts the research "
                               "subset's rows (as ARX does), and its in-memory form counts the table's: "
                               "check these nodes in SQL")


class SubsetTable:
    """The loaded table as ARX's quality models see it under δ-presence: the research subset's rows
    (:class:`~sqlanon.domain.metrics.memory.MemoryTable`; the metrics' SQL forms read
    :attr:`~sqlanon.domain.metrics.base.MetricContext.population`)."""

    def __init__(self, loaded: Any, subset: MatchedSubset) -> None:
        self._loaded, self.subset = loaded, subset
        self.n = int(subset.matched.sum())
        if self.n == 0:
            raise UnsupportedError("the research subset is empty: its metric is checked in SQL")
        self.qis, self.weights, self.heights = loaded.qis, loaded.weights, loaded.heights
        self.domain, self.codes, self.label_counts = loaded.domain, loaded.codes, loaded.label_counts
        rows = subset.matched.astype(np.int64)
        self.weighted_all = [[int(np.dot(rows, counts[codes[subset.home]].astype(np.int64)))
                              for codes, counts in zip(per_level, loaded.label_counts[i])]
                             for i, per_level in enumerate(loaded.codes)]

    def leaves(self, i: int) -> LeafCounts:
        raise UnsupportedError("no metric reading leaves counts the research subset in memory")

    def first_rows(self, attribute: str) -> Any:
        return self._loaded.first_rows(attribute)

    def memo(self, key: Any, compute: Any) -> Any:
        return self._loaded.memo(("research subset", key), compute)


class SubsetNode:
    """One checked node over the research subset's rows
    (:class:`~sqlanon.domain.metrics.memory.MemoryNode`): each class counts its matched subset rows."""

    def __init__(self, table: SubsetTable, levels: tuple[int, ...], rep: np.ndarray, keep: np.ndarray,
                 anonymous: bool) -> None:
        self.table, self.levels, self.keep = table, levels, keep
        subset = table.subset
        inv, k = subset.grouping.group(levels, np.concatenate([rep, subset.home]))
        class_of = np.zeros(k, dtype=np.int64)
        class_of[inv[:len(rep)]] = np.arange(len(rep))
        self._home_class = class_of[inv[len(rep):]]
        self.sizes = np.bincount(self._home_class, weights=subset.matched,
                                 minlength=len(rep)).astype(np.int64)
        holding = self.sizes > 0
        self.suppressed = int(self.sizes[~keep].sum()) if anonymous else 0
        self.classes = int((holding & keep).sum() if anonymous else holding.sum())

    def suppressed_members(self) -> tuple[np.ndarray, np.ndarray]:
        gone = ~self.keep[self._home_class]
        return self.table.subset.matched[gone].astype(np.int64), self.table.subset.home[gone]


def matched_subsets(ev: Evaluator, loaded: LoadedTable, statistics: Sequence[Statistic]
                    ) -> dict[str, MatchedSubset]:
    """The research subsets the statistics read in memory, each read once, by plan step."""
    wanted = {s.step: s for s in subset_counts(statistics)}
    return {step: MatchedSubset(ev, loaded, s) for step, s in sorted(wanted.items())}


def subset_table(loaded: Any, subsets: dict[str, MatchedSubset], statistics: Sequence[Statistic],
                 metric: object | None) -> SubsetTable | None:
    """The rows ARX's quality models count under δ-presence: the research subset of the first
    δ-presence model (as :attr:`~sqlanon.domain.metrics.base.MetricContext.population`); None when
    they are the loaded table's (no δ-presence, or a metric that reads no rows)."""
    first = next((s.step for s in subset_counts(statistics)), None)
    if first is None or getattr(metric, "name", None) in DATA_FREE_METRICS | {None}:
        return None
    return SubsetTable(loaded, subsets[first])
