"""Check lattice nodes in memory: one read of the frequency table, then numpy per node.

The raw frequency table (QIs, sensitive attributes, row count) is read once from the engine. Each QI
is coded as integers consistent with its hierarchy table (values compared as text, NULL through the
hierarchy's NULL leaf), and per level a map gives every row its generalized label code. A node then
costs a few gathers, one grouping into equivalence classes and a few ``bincount`` calls.

The privacy decision follows ARX (El Emam K, Dankar FK, et al. A globally optimal k-anonymity method
for the de-identification of health data. JAMIA 2009;16(5):670-682; Prasser F, Kohlmayer F.
Putting statistical disclosure control into practice: the ARX data anonymization tool. 2015): a class
is an outlier if it fails any model, and the node is anonymous iff the outlier rows fit the budget
floor(limit · n).

Each model, statistic and metric carries its own in-memory form beside its SQL form
(:meth:`~sqlanon.domain.models.base.Statistic.in_memory`,
:meth:`~sqlanon.domain.models.base.PrivacyModel.satisfied_in_memory`,
:meth:`~sqlanon.domain.metrics.base.Metric.in_memory`); this module only codes the data's levels and
groups the classes (:mod:`~sqlanon.methods.generalization.search.fast_load` reads the data). The
metrics' forms sum ARX's terms in the same order as their SQL forms, so both give bit-identical
doubles. A model or metric without an in-memory form raises
:class:`~sqlanon.errors.UnsupportedError`; the caller then checks nodes in SQL
(:meth:`sqlanon.methods.generalization.evaluator.Evaluator.check`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from sqlanon.domain.factorize import code_dtype
from sqlanon.domain.metrics import get_metric
from sqlanon.domain.metrics.entropy import first_appearance
from sqlanon.domain.models.base import PrivacyModel
from sqlanon.errors import HierarchyError, UnsupportedError
from sqlanon.methods.generalization.evaluator import Evaluator, suppression_budget
from sqlanon.methods.generalization.search import fast_presence as presence
from sqlanon.methods.generalization.search.fast_classes import (
    CheckedNode,
    Classes,
    LeafCounts,
    NodeClasses,
    RecentClasses,
)
from sqlanon.methods.generalization.search.fast_fits import left_out, unfit_rows
from sqlanon.methods.generalization.search.fast_load import (
    code_levels,
    codes_in_sql,
    fetch_coded,
    fetch_keys,
    sensitive_columns,
)
from sqlanon.methods.generalization.search.fast_population import population_classes
from sqlanon.methods.generalization.search.fast_support import (
    attributes_needing,
    check_supported,
    memory_metric,
    memory_metrics,
    statistics_of,
)
from sqlanon.methods.generalization.search.grouping import Grouping
from sqlanon.methods.generalization.search.lattice import Lattice, Node
from sqlanon.methods.generalization.search.nodes import NodeEvaluator, NodeResult
from sqlanon.methods.generalization.search.pages import on_regular_pages

FEW_CHECKS_MAX_ROWS = 200_000
"""Up to this many frequency rows a check costs mostly its fixed overhead, so searches minimize the
number of checks; above, the rows grouped dominate (Adult's 19,502 rows against the 1.56M of Adult
grown to 10M rows: bench/README.md)."""

CACHE_SIZE = 8
"""Class tables of recently checked nodes kept for rolling up to their generalizations."""


@dataclass(frozen=True)
class FastResult:
    """One checked node, with ARX's output statistics (classes and min size of kept classes)."""

    anonymous: bool
    outlier_rows: int
    classes: int
    min_class_size: int | None
    metric: float | None
    lower_bound: float | None
    violating_rows: tuple[int, ...] = ()
    """Per model (in the given order): rows of the classes that model alone rejects."""


def __getattr__(name: str) -> Any:
    if name == "METRICS":  # computed on use: listing the metrics imports all of their modules
        return memory_metrics()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class FastEvaluator:
    """Check nodes of one problem in memory, with ARX's outlier semantics and metrics.

    It is the :class:`~sqlanon.domain.metrics.memory.MemoryTable` the metrics' in-memory forms read.

    Args:
        evaluator: the problem's evaluator; its raw frequency table is read once.
        models: the privacy models, each with an in-memory form (k-anonymity, l-diversity,
            t-closeness, p-sensitive and (α,k)-anonymity, ...).
        metric_name: a metric with an in-memory form (:func:`memory_metrics`), or None for no metric.
        suppression_limit: the share of rows that may be suppressed.
        weights: attribute weights for the metrics (scaled by their maximum, as ARX).
        monotonic: compute ARX's monotonic variant of a metric that has one (metric option
            ``monotonic``).
        rollup: group a node from the class table of a recently checked node it generalizes
            (classes are unions of the finer node's classes) instead of from every row.

    Raises:
        UnsupportedError: a model or metric outside the supported set, named in the message.
    """

    def __init__(self, evaluator: Evaluator, models: Sequence[PrivacyModel], metric_name: str | None,
                 suppression_limit: float, weights: Mapping[str, float] | None = None, *,
                 rollup: bool = True, monotonic: bool = False,
                 metric_options: Mapping[str, Any] | None = None) -> None:
        p = evaluator.p
        self.rollup = rollup and not p.fit_columns  # who fits changes with the node, not by unions
        self._left_out: int | None = None
        """The class of the last grouped node's persons who fit no class (None: there is none)."""
        self._memo: dict[Any, Any] = {}
        self._ev = evaluator
        self.rolled_up = 0
        """Nodes grouped from a finer node's classes rather than from every row."""
        self.qis = list(p.qis)
        if p.weighted:
            raise UnsupportedError("the in-memory node check counts one row a person; persons with "
                                   "sensitive attributes are checked in SQL")
        check_supported(models, self.qis, p.sensitive_hierarchies, metric_name)
        self.models = list(models)
        self.statistics = statistics_of(self.models)
        presence.refuse_subset_metrics(self.statistics, metric_name)
        self.metric_name = metric_name
        self.metric = memory_metric(metric_name, monotonic, metric_options) \
            if metric_name is not None else None
        self.limit = float(suppression_limit)
        ws = [float((weights or {}).get(a, 1.0)) for a in self.qis]
        top = max(ws) if ws else 1.0
        self.weights = [w / top for w in ws]
        self.heights = [p.hierarchies[a].height for a in self.qis]
        self._load(evaluator)
        self._recent = RecentClasses(self.rows, CACHE_SIZE)
        self.populations = population_classes(evaluator, self.statistics, self.codes, self.radix, self.rows)
        self.subsets = presence.matched_subsets(evaluator, self, self.statistics)
        self._subset_table = presence.subset_table(self, self.subsets, self.statistics, self.metric)
        self.max_suppressed = suppression_budget(self.limit, self.n)
        if self.metric is not None:
            self.metric.prepare_in_memory(self.metric_table)

    @property
    def metric_table(self) -> Any:
        """The rows ARX's quality models count: the research subset under δ-presence, else these."""
        return self if self._subset_table is None else self._subset_table

    # -- what the metrics' in-memory forms read (MemoryTable) ----------------------------------------
    def leaves(self, i: int) -> LeafCounts:
        return self._leaves[i]

    def first_rows(self, attribute: str) -> Mapping[Any, int]:
        return first_appearance(self._ev)[attribute]

    def memo(self, key: Any, compute: Callable[[], Any]) -> Any:
        if key not in self._memo:
            self._memo[key] = compute()
        return self._memo[key]

    # -- loading ----------------------------------------------------------------------------------
    @on_regular_pages
    def _load(self, ev: Evaluator) -> None:
        p = ev.p
        sens = list(dict.fromkeys(a for m in self.models for a in m.sensitive_attributes()))
        ordered = attributes_needing(self.statistics, "order")
        self.hierarchical = attributes_needing(self.statistics, "tree")
        numeric = attributes_needing(self.statistics, "numbers")
        tables = [ev.hierarchy_table(a) for a in self.qis]  # the file's table, else built over the data
        if all(codes_in_sql(p.hierarchies[a], t) for a, t in zip(self.qis, tables)):
            data, leaves, keys = fetch_coded(ev, self.qis, sens, ordered, self.hierarchical, p.fit_columns,
                                             numeric)
        else:
            data, leaves, keys = fetch_keys(ev, self.qis, sens, ordered, self.hierarchical, p.fit_columns,
                                            numeric)
        self.fit_levels = [(self.qis.index(a), np.asarray(data.pop(f"f{i}")).astype(  # height + 1: none
                            code_dtype(p.hierarchies[a].height + 1)))
                           for i, a in enumerate(p.persons.one_class if p.persons is not None else [])]
        self.row_n = np.asarray(data["n"], dtype=np.int64)
        self.n = int(self.row_n.sum())
        self.rows = len(self.row_n)
        # bincount weighs in doubles (exact here): converting the counts on every check cost 4 % of a
        # search at 10M rows, more than this copy's 8 bytes a row are worth
        self._row_weights = self.row_n.astype(np.float64)
        # per attribute and level: the row's label code, the label counts (file rows) and sizes
        self.codes: list[list[np.ndarray]] = []
        self.radix: list[list[int]] = []
        self.weighted_all: list[list[int]] = []
        self.domain: list[int] = []
        self.label_counts: list[list[np.ndarray]] = []
        self._leaves: list[LeafCounts] = []
        self.leaf_index = leaves
        """Per QI, the leaf (index into its :class:`LeafCounts` keys) of every frequency row, in the
        narrowest type holding them."""
        for table_, leaf, uniques in zip(tables, leaves, keys):
            coded = code_levels(table_, leaf, uniques, self.row_n)
            self.codes.append(coded.codes)
            self.radix.append(coded.radix)
            self.weighted_all.append(coded.weighted)
            self.label_counts.append(coded.label_counts)
            self.domain.append(table_.domain_size)
            self._leaves.append(coded.leaves)
        self.grouping = Grouping(self.codes, self.radix, self.rows)
        self.sensitive, self.trees, self.numbers = sensitive_columns(
            ev, data, sens, ordered, self.hierarchical, numeric, self.row_n)

    # -- one node ---------------------------------------------------------------------------------
    def _grouped(self, node: tuple[int, ...]) -> Classes:
        """The node's classes grouped from every frequency row."""
        inv, k, self._left_out = left_out(*self.grouping.group(node), unfit_rows(self.fit_levels, node))
        sizes = np.bincount(inv, weights=self._row_weights, minlength=k).astype(np.int64)
        hists = {a: np.bincount(inv.astype(np.int64) * nvals + values, weights=self._row_weights,
                                minlength=k * nvals).reshape(k, nvals)
                 for a, (values, nvals, _) in self.sensitive.items()}
        return Classes(k, sizes, hists, inv, self.row_n, None)

    def _classes(self, node: tuple[int, ...]) -> Classes:
        base = self._recent.finer(node) if self.rollup else None
        if base is None:
            table_ = self._grouped(node)
        else:
            self.rolled_up += 1
            inv, k = self.grouping.group(node, base.rep)
            sizes = np.bincount(inv, weights=base.sizes, minlength=k).astype(np.int64)
            hists = {a: np.stack([np.bincount(inv, weights=h[:, v], minlength=k)
                                  for v in range(h.shape[1])], axis=1)
                     for a, h in base.hists.items()}
            table_ = Classes(k, sizes, hists, inv, base.sizes, base.rep)
        if self.rollup:
            self._recent.keep(node, table_)
        return table_

    def _oks(self, c: Classes, node: tuple[int, ...]) -> list[np.ndarray]:
        """Per model: which classes satisfy it (each statistic computed once); none keeps the class of
        persons who fit no class (:mod:`.fast_fits`)."""
        view = NodeClasses(c, self.n, self.sensitive, self.trees,
                           lambda name, rep: self.populations[name].counts(node, rep), self.numbers,
                           lambda step, rep: self.subsets[step].counts(node, rep))
        values = {s: s.in_memory(view) for s in self.statistics}
        oks = [np.array(m.satisfied_in_memory(values), dtype=bool) for m in self.models]
        for ok in oks if self._left_out is not None else []:
            ok[self._left_out] = False
        return oks

    @on_regular_pages
    def evaluate(self, node: Sequence[int], *, metric_always: bool = True,
                 bound: bool = True, metric: bool = True) -> FastResult:
        """Check one node (levels in QI order): anonymity, ARX's statistics, metric and lower bound.

        ``metric=False`` computes no metric at all (the caller knows the node cannot matter).

        ``metric_always=False`` computes the metric only for an anonymous node; ``bound=False`` skips
        the lower bound (the search may know it already, :meth:`FastNodeEvaluator.prior_bounds`).
        """
        node = tuple(int(x) for x in node)
        if len(node) != len(self.qis) or any(not 0 <= x <= h for x, h in zip(node, self.heights)):
            raise HierarchyError(f"node {list(node)} does not fit the hierarchies' heights "
                                 f"{self.heights} (one level per QI: {', '.join(self.qis)})")
        c = self._classes(node)
        oks = self._oks(c, node)
        keep = np.logical_and.reduce(oks) if oks else np.ones(c.k, dtype=bool)
        outlier_rows = int(c.sizes[~keep].sum())
        anonymous = outlier_rows <= self.max_suppressed
        if anonymous:
            kept_sizes = c.sizes[keep]
            classes = len(kept_sizes)
            min_size = int(kept_sizes.min()) if classes else None
        else:
            real = c.sizes if self._left_out is None else np.delete(c.sizes, self._left_out)
            classes, min_size = len(real), int(real.min()) if len(real) else None
        value = lower = None
        chosen = self.metric
        if chosen is not None and (anonymous or metric_always or bound):
            s = outlier_rows if anonymous else 0
            view: Any = CheckedNode(self, node, c, keep, s, classes) if self._subset_table is None else \
                presence.SubsetNode(self._subset_table, node, c.rep, keep, anonymous)
            if metric and (anonymous or metric_always):
                value = chosen.in_memory(view)
            if bound:
                lower = value if value is not None and s == 0 and chosen.bounded_by_unsuppressed \
                    else chosen.lower_bound_in_memory(view)
        violating = tuple(int(c.sizes[~ok].sum()) for ok in oks) if len(oks) > 1 else \
            (outlier_rows,) * len(oks)
        return FastResult(anonymous, outlier_rows, classes, min_size, value, lower, violating)

    def verdict(self, node: Sequence[int]) -> tuple[Classes, np.ndarray]:
        """The node's classes, grouped from every frequency row, and which satisfy every model."""
        levels = tuple(int(x) for x in node)
        c = self._grouped(levels)
        oks = self._oks(c, levels)
        return c, np.logical_and.reduce(oks) if oks else np.ones(c.k, dtype=bool)

    def kept_rows(self, node: Sequence[int]) -> np.ndarray:
        """Per frequency row, whether its class at ``node`` satisfies every model."""
        c, keep = self.verdict(node)
        return np.asarray(keep[c.inv], dtype=bool)


class FastNodeEvaluator(NodeEvaluator):
    """The search's :class:`NodeEvaluator` over :class:`FastEvaluator` (the problem's models).

    Answers as :class:`~sqlanon.methods.generalization.search.nodes.SqlNodeEvaluator` does, except that the
    lower bound is ARX's (:meth:`FastEvaluator.evaluate`) for every metric and node.

    Raises:
        UnsupportedError: a model or metric the in-memory check lacks (search in SQL instead).
    """

    def __init__(self, evaluator: Evaluator, suppression_limit: float = 0.0,
                 metric: str | None = None, *, weights: Mapping[str, float] | None = None,
                 options: Mapping[str, Any] | None = None, fast: FastEvaluator | None = None) -> None:
        """``fast``: check nodes on this loaded table (a part of the evaluator's rows) instead of
        loading the evaluator's."""
        super().__init__()
        models = evaluator.p.models
        chosen = get_metric(metric, options=options) if metric is not None else None
        self.fast = fast if fast is not None else FastEvaluator(
            evaluator, models, metric, suppression_limit, weights,
            monotonic=chosen is not None and chosen.monotonic, metric_options=options)
        monotone = [m.is_monotonic(self.fast.limit) for m in models]
        self.privacy_monotone = all(monotone)
        self.partly_monotone = any(monotone)
        self._monotone_models = [i for i, ok in enumerate(monotone) if ok]
        self.has_metric = metric is not None
        self.metric_monotone = chosen is not None and chosen.is_monotonic(self.fast.limit)
        self.prefers_few_checks = self.fast.rows <= FEW_CHECKS_MAX_ROWS
        self._prior = False
        """Whether the search took :meth:`prior_bounds`: checks then skip what those bounds tell."""
        self._bounds: np.ndarray | None = None
        self._lattice: Lattice | None = None

    def prior_bounds(self, lattice: Lattice) -> np.ndarray | None:
        """ARX's bound with nothing suppressed, for the metrics where it depends on the levels alone.

        Loss, its arithmetic variant, precision, height and non-uniform entropy sum or multiply one term
        per attribute and level (every row counts its label's leaves, or its share of its label), so
        the whole lattice costs one pass over node ids
        (:meth:`~sqlanon.domain.metrics.base.Metric.prior_bounds_in_memory`); the terms are those of
        the metric's in-memory form, in the same order, so the bounds equal the metric bit for bit
        when nothing is suppressed.
        """
        fe = self.fast
        if fe.metric is None or not lattice.enumerable:
            return None
        ids = np.arange(lattice.size, dtype=np.int64)
        levels, step = [], 1
        for h in fe.heights:
            levels.append((ids // step) % (h + 1))
            step *= h + 1
        bounds = fe.metric.prior_bounds_in_memory(fe.metric_table, levels)
        if bounds is None:
            return None
        self._prior = True
        self._lattice = lattice
        self._bounds = bounds
        return self._bounds

    def _beyond_ceiling(self, node: Node) -> bool:
        """Whether the node's bound known before checking is clearly above :attr:`ceiling`, so its
        metric cannot matter (on large tables only, where computing it costs a pass)."""
        if self._bounds is None or self._lattice is None or self.prefers_few_checks \
                or math.isinf(self.ceiling):
            return False
        margin = 1e-9 * max(1.0, abs(self.ceiling))  # far wider than the search's tie tolerance
        return float(self._bounds[self._lattice.node_id(node)]) > self.ceiling + margin

    def _evaluate(self, node: Node) -> NodeResult:
        r = self.fast.evaluate(node, metric_always=self.metric_monotone and not self._prior,
                               bound=not self._prior, metric=not self._beyond_ceiling(node))
        part = all(r.violating_rows[i] <= self.fast.max_suppressed for i in self._monotone_models)
        value = r.metric if r.anonymous or self.metric_monotone else None
        return NodeResult(node, r.anonymous, part or r.anonymous, value, r.lower_bound)

    def distinct_values(self, node: Node) -> list[int]:
        """Per QI, the distinct generalized values its column holds at the node's level (the
        attribute Datafly generalizes next has the most; Sweeney, IJUFKS 2002)."""
        fe = self.fast
        return [int(np.count_nonzero(np.bincount(fe.codes[i][level], minlength=fe.radix[i][level])))
                for i, level in enumerate(node)]
