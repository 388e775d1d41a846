"""Search strategies over the generalization lattice (full-domain generalization with suppression).

* ``exhaustive`` checks every node (the reference the others are tested against).
* ``binary``: Samarati's binary search on the lattice height for the lowest height holding a
  satisfying node (Samarati P. Protecting respondents' identities in microdata release. IEEE TKDE
  2001;13(6):1010-1027; Ciriani V, De Capitani di Vimercati S, Foresti S, Samarati P. k-Anonymity.
  2007, §4).
* ``incognito``: every minimal satisfying node, the k-minimal generalizations of Ciriani et al.'s
  Def 5 (LeFevre K, DeWitt DJ, Ramakrishnan R. Incognito: efficient full-domain k-anonymity. SIGMOD
  2005): bottom-up, skipping generalizations of satisfying nodes.
* ``optimal``: the globally optimal node as ARX's Flash finds it (Kohlmayer F, Prasser F, Eckert C,
  Kemper A, Kuhn KA. Flash: efficient, stable and optimal k-anonymity. PASSAT/SocialCom 2012):
  binary search along greedy upward paths with predictive tagging from monotone models, then a
  linear pass over the nodes that may still be anonymous, pruned by lower bounds of the metric.

Tagging and pruning use only what is monotone: models through ``PrivacyModel.is_monotonic(limit)``
(with t-closeness and a suppression limit, only the monotone part, e.g. k-anonymity, is tagged), the
metric through ``Metric.is_monotonic(limit)`` or its ``lower_bound``.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

import numpy as np

from sqlanon.errors import SpecError
from sqlanon.methods.generalization.search.lattice import Lattice, Node
from sqlanon.methods.generalization.search.nodes import NodeEvaluator, NodeResult
from sqlanon.methods.generalization.search.result import (
    ANONYMOUS,
    DOMINATED,
    MONOTONE_PART,
    NOT_ANONYMOUS,
    PRUNED,
    RANKED,
    SearchResult,
    tie_mask,
    tied,
)
from sqlanon.spec.search import SEARCH_STRATEGIES


class _Search:
    """One run: the lattice's tags, the nodes checked, and the property the binary phase uses.

    Nodes are handled by id inside (tags are boolean arrays over ids); the evaluator sees tuples.
    """

    def __init__(self, lattice: Lattice, evaluator: NodeEvaluator, name: str) -> None:
        lattice.clear_tags()
        self.lat, self.ev, self.name = lattice, evaluator, name
        self.start = time.perf_counter()
        self.results: dict[Node, NodeResult] = {}
        self.true_prop = ANONYMOUS if evaluator.privacy_monotone else MONOTONE_PART
        self.fails = lattice.mask(NOT_ANONYMOUS)
        self.holds = lattice.mask(self.true_prop)
        self.mult = [lattice.node_id(tuple(int(i == j) for j in range(len(lattice.heights))))
                     for i in range(len(lattice.heights))]
        self._radix = [(m, h + 1) for m, h in zip(self.mult, lattice.heights)]

    def node(self, node_id: int) -> Node:
        return tuple((node_id // m) % r for m, r in self._radix)

    def probe(self, node: Node) -> NodeResult:
        """Check a node and tag what monotone models let us infer."""
        r = self.results.get(node)
        if r is not None:
            return r
        r = self.results[node] = self.ev.evaluate(node)
        if self.ev.privacy_monotone:
            self.lat.tag(node, ANONYMOUS if r.anonymous else NOT_ANONYMOUS)
        elif self.ev.partly_monotone:
            self.lat.tag(node, MONOTONE_PART if r.monotone_part else NOT_ANONYMOUS)
        return r

    def anonymous(self, node: Node) -> bool:
        """Whether the node is anonymous, from a check or a tag (checking when unknown)."""
        if node in self.results:
            return self.results[node].anonymous
        i = self.lat.node_id(node)
        if self.fails[i]:
            return False
        if self.ev.privacy_monotone and self.holds[i]:
            return True
        return self.probe(node).anonymous

    def resolved(self, node_id: int) -> bool:
        return bool(self.holds[node_id] or self.fails[node_id])

    def classify(self, skip: Callable[[np.ndarray], np.ndarray] | None = None,
                 after_probe: Callable[[NodeResult], None] | None = None,
                 rank: np.ndarray | None = None, top_down: bool = False) -> None:
        """Settle the monotone property by binary search along greedy upward paths.

        Args:
            skip: given node ids (an array, or one id), which of them need not be settled (paths may
                still cross them: a check above them settles more of the lattice).
            after_probe: called with every check's result.
            rank: a value per node id: paths start at the unsettled nodes of a level in order of
                rank and step to the successor of least rank (without one: in id order, to the first
                attribute that can step).
            top_down: start paths at the highest level first. A failing node found high up tags
                a large part of the lattice below it (on Adult, k = 5: 78 checks instead of 143 at
                0 %, 658 instead of 762 at 2 %), but high nodes are seldom rolled up from a checked
                finer node, so each is grouped from every row.
        """
        if not self.ev.partly_monotone:
            return
        order = self.lat.ids_by_level()
        if top_down:
            order = order[::-1]
        if rank is not None:
            order = [ids[np.argsort(rank[ids], kind="stable")] for ids in order]
        holds, fails = self.holds, self.fails
        for ids in order:
            todo = ~(holds[ids] | fails[ids])
            if skip is not None:
                todo &= ~skip(ids)
            for i in ids[todo].tolist():
                if not (holds[i] or fails[i] or (skip is not None and skip(i))):
                    self._binary_on_path(self._greedy_path(i, rank), after_probe)

    def _greedy_path(self, start: int, rank: np.ndarray | None) -> list[int]:
        path = [start]
        levels = list(self.node(start))
        heights, mult, holds, fails = self.lat.heights, self.mult, self.holds, self.fails
        while True:
            nxt, best = -1, None
            for a, h in enumerate(heights):
                if levels[a] < h:
                    j = path[-1] + mult[a]
                    if not (holds[j] or fails[j]):
                        if rank is None:
                            nxt = a
                            break
                        if best is None or rank[j] < best:
                            nxt, best = a, rank[j]
            if nxt < 0:
                return path
            levels[nxt] += 1
            path.append(path[-1] + mult[nxt])

    def _binary_on_path(self, path: list[int],
                        after_probe: Callable[[NodeResult], None] | None) -> None:
        lo, hi = 0, len(path)
        while lo < hi:
            mid = (lo + hi) // 2
            i = path[mid]
            if not self.resolved(i):
                r = self.probe(self.node(i))
                if after_probe is not None:
                    after_probe(r)
            if self.holds[i]:
                hi = mid
            else:
                lo = mid + 1

    def best(self, nodes: list[Node]) -> tuple[Node | None, float | None, list[Node]]:
        """The node of minimal metric among checked satisfying ``nodes``, and all tied with it."""
        if not nodes:
            return None, None, []
        if not self.ev.has_metric:
            return min(nodes, key=self.order), None, []
        # a metric of None: beyond the ceiling
        metrics = {n: m for n in nodes if (m := self.results[n].metric) is not None}
        if not metrics:
            return None, None, []
        value = min(metrics.values())
        ties = sorted((n for n, m in metrics.items() if tied(m, value)), key=self.order)
        return ties[0], value, ties

    def order(self, node: Node) -> tuple[int, int]:
        """Traversal order: lattice level, then ARX's node id."""
        return sum(node), self.lat.node_id(node)

    def result(self, node: Node | None, metric: float | None, ties: list[Node],
               solutions: list[Node], trace: list[tuple[int, bool]] | None = None,
               skipped: np.ndarray | None = None) -> SearchResult:
        """``skipped``: nodes (a mask over ids) passed over because a bound showed they cannot matter."""
        skip = self.lat.mask(PRUNED) | self.lat.mask(DOMINATED)
        if skipped is not None:
            skip |= skipped
        skip &= ~self.fails
        if self.results:
            skip[[self.lat.node_id(n) for n in self.results]] = False
        pruned = int(np.count_nonzero(skip))
        scored = [(r.metric, self.order(n), n) for n, r in self.results.items()
                  if r.anonymous and r.metric is not None]
        ranked = [(n, v) for v, _, n in sorted(scored)[:RANKED]]
        return SearchResult(self.name, node, metric, ties, sorted(solutions, key=self.order),
                            len(self.results), len(self.lat) - len(self.results) - pruned, pruned,
                            time.perf_counter() - self.start, list(trace or []), ranked=ranked)


@SEARCH_STRATEGIES.register("exhaustive")
def exhaustive(lattice: Lattice, evaluator: NodeEvaluator) -> SearchResult:
    """Check every node."""
    s = _Search(lattice, evaluator, "exhaustive")
    ok = [n for n in lattice if s.probe(n).anonymous]
    node, value, ties = s.best(ok)
    return s.result(node, value, ties, ok)


@SEARCH_STRATEGIES.register("binary")
def binary(lattice: Lattice, evaluator: NodeEvaluator) -> SearchResult:
    """Samarati: the lowest height holding a satisfying node, by binary search on the height.

    The search is valid because, with monotone models, a height without a satisfying node has none
    below it. With a model that is not monotone under the limit, heights are tried bottom-up.
    """
    s = _Search(lattice, evaluator, "binary")
    trace: list[tuple[int, bool]] = []

    def probe_height(h: int) -> bool:
        found = any(s.anonymous(n) for n in lattice.nodes_at(h))
        trace.append((h, found))
        return found

    if evaluator.privacy_monotone:
        lo, hi = 0, lattice.max_level
        while lo < hi:
            mid = (lo + hi) // 2
            if probe_height(mid):
                hi = mid
            else:
                lo = mid + 1
        lowest = lo if (lo, True) in trace or probe_height(lo) else None
    else:
        lowest = next((h for h in range(lattice.max_level + 1) if probe_height(h)), None)
    if lowest is None:
        return s.result(None, None, [], [], trace)
    ok = [n for n in lattice.nodes_at(lowest) if s.anonymous(n)]
    if evaluator.has_metric:
        for n in ok:
            s.probe(n)
    node, value, ties = s.best(ok)
    return s.result(node, value, ties, ok, trace)


@SEARCH_STRATEGIES.register("incognito")
def incognito(lattice: Lattice, evaluator: NodeEvaluator) -> SearchResult:
    """Every minimal satisfying node (no satisfying node below it).

    With monotone models the property is first settled by binary search along paths; then a
    bottom-up pass checks only nodes that are neither known to fail nor above a satisfying node.
    """
    s = _Search(lattice, evaluator, "incognito")
    s.classify()
    minimal = []
    dominated = lattice.mask(DOMINATED)
    for ids in lattice.ids_by_level():
        for i in ids[~(dominated[ids] | s.fails[ids])]:
            i = int(i)
            if dominated[i] or s.fails[i]:
                continue
            node = s.node(i)
            if s.anonymous(node):
                minimal.append(node)
                lattice.tag(node, DOMINATED)
    if evaluator.has_metric:
        for n in minimal:
            s.probe(n)
    best, value, ties = s.best(minimal)
    return s.result(best, value, ties, minimal)


@SEARCH_STRATEGIES.register("optimal")
def optimal(lattice: Lattice, evaluator: NodeEvaluator) -> SearchResult:
    """The anonymous node of minimal information loss, and every node tied with it.

    Phase 1 settles the monotone property (anonymity, or its monotone part) by binary search along
    greedy paths, tagging generalizations and specializations. Phase 2 checks the nodes not known to
    fail in order of their lower bounds. Two bounds cut the work: a bound the evaluator knows for
    every node before checking it (:meth:`NodeEvaluator.prior_bounds`; ARX's Loss with nothing
    suppressed, for instance) keeps both phases away from nodes that cannot beat the best value found
    so far, and a checked node's lower bound above that value prunes all its generalizations. The
    nodes passed over cannot beat or tie the result, so it is the true optimum in every case, with a
    suppression limit too (where the metric is not monotone).

    Raises:
        SpecError: when the evaluator has no metric.
    """
    if not evaluator.has_metric:
        raise SpecError("the optimal search needs a metric to minimize", path="metric")
    s = _Search(lattice, evaluator, "optimal")
    evaluator.ceiling = math.inf
    bounds = evaluator.prior_bounds(lattice)
    pruned = lattice.mask(PRUNED)
    best = [math.inf]

    def beyond(value: float | None) -> bool:
        return value is not None and value > best[0] and not tied(value, best[0])

    bound_of = bounds.tolist() if bounds is not None else None

    def skip(ids):
        if isinstance(ids, int):
            return bool(pruned[ids]) or (bound_of is not None and beyond(bound_of[ids]))
        out = pruned[ids]
        if bounds is not None:
            b = bounds[ids]
            out = out | ((b > best[0]) & ~tie_mask(b, best[0]))
        return out

    def seen(r: NodeResult) -> None:
        if r.anonymous and r.metric is not None and r.metric < best[0]:
            best[0] = r.metric
            evaluator.ceiling = best[0]
            if bounds is None:
                for done in s.results.values():
                    if beyond(done.lower_bound):
                        lattice.tag(done.node, PRUNED)
        elif beyond(r.lower_bound):
            lattice.tag(r.node, PRUNED)

    if bounds is not None and evaluator.partly_monotone:
        # one path up from the bottom first: a good value early keeps the rest near the optimum
        s._binary_on_path(s._greedy_path(0, bounds), seen)
    s.classify(skip, seen, bounds, top_down=bounds is not None and evaluator.prefers_few_checks)
    ids = np.flatnonzero(~s.fails & ~pruned)
    level = lattice.levels_of(ids).sum(axis=1)
    ids = ids[np.lexsort((ids, level) if bounds is None else (ids, level, bounds[ids]))]
    for i in ids:
        i = int(i)
        if s.fails[i] or pruned[i]:
            continue
        if bounds is not None and beyond(float(bounds[i])):
            break
        node = s.node(i)
        if node not in s.results:
            seen(s.probe(node))
    ok = [n for n, r in s.results.items() if r.anonymous]
    chosen, value, ties = s.best(ok)
    skipped = None
    if bounds is not None and value is not None:
        skipped = (bounds > value) & ~tie_mask(bounds, value)
    return s.result(chosen, value, ties, ties, skipped=skipped)


def search(lattice: Lattice, evaluator: NodeEvaluator, strategy: str = "optimal") -> SearchResult:
    """Run one strategy by name.

    Raises:
        SpecError: for an unknown strategy name.
    """
    return SEARCH_STRATEGIES.get(strategy)(lattice, evaluator)
