"""Heuristic search for lattices too large to search exhaustively (tens of quasi-identifiers).

The strategy follows ARX's Lightning (Prasser F, Bild R, Eicher J, Spengler H, Kuhn KA. Lightning:
utility-driven anonymization of high-dimensional data. Transactions on Data Privacy 9 (2016)
161-185), started from a Datafly solution (Sweeney L. Guaranteeing anonymity when sharing medical
data, the Datafly system. Proc AMIA 1997; Sweeney L. Achieving k-anonymity privacy protection using
generalization and suppression. IJUFKS 2002;10(5):571-588):

1. **Seed.** From the bottom, generalize one attribute at a time, the one whose column holds the
   most distinct generalized values at its current level (Datafly's choice, asked of the evaluator's
   optional ``distinct_values(node)``; without it, the successor that is anonymous with the least
   metric or else has the least lower bound), until the node is anonymous. Datafly overshoots, so
   the node then steps down to the anonymous predecessor of least metric while that improves it:
   the first solution.
2. **Best-first search** from the bottom over a priority queue ordered by each node's lower bound
   (the metric of an anonymous node when the metric is monotone). Expanding a node checks its
   successors; every ``max_level``-th expansion instead dives, as Lightning's depth-first step,
   along successors of least bound until it reaches an anonymous node (and steps down from it as
   the seed does). A node whose bound cannot beat the best metric found is dropped with all its
   generalizations; nodes known to fail by a monotone model (below a failing node) are passed
   through unchecked, except in dives on lattices without bounds known before checking.
3. **Limits.** The search stops at a time or step limit, a surrounding one
   (:func:`sqlanon.methods.generalization.search.limits.search_within`) or else :data:`DEFAULT_TIME_LIMIT`,
   and returns the best anonymous node found with ``complete=False``. When the queue runs empty first, every
   node not checked was shown unable to beat the result: it is the proven optimum (``complete=True``).

Tags work on lattices of any size: beyond what the lattice can enumerate, each is kept as the
antichain of nodes whose cones it covers. The result lists one node (``ties`` and ``solutions`` hold it
alone); ``tagged`` counts nodes passed through as known to fail and ``pruned`` the nodes dropped by their
bound, not whole cones.
"""

from __future__ import annotations

import heapq
import itertools
import math
import time

import numpy as np

from sqlanon.errors import InternalError, SpecError
from sqlanon.methods.generalization.search.lattice import Direction, Lattice, Node, Property
from sqlanon.methods.generalization.search.limits import Budgeted, TimeLimitReached
from sqlanon.methods.generalization.search.nodes import NodeEvaluator, NodeResult
from sqlanon.methods.generalization.search.result import NOT_ANONYMOUS, PRUNED, SearchResult, tied
from sqlanon.spec.search import SEARCH_STRATEGIES

DEFAULT_TIME_LIMIT = 30.0
"""Seconds the heuristic runs when no time or step limit is set, neither by the caller nor around it."""


class _OutOfTime(Exception):
    """The heuristic's own time limit passed."""


class _Cones:
    """A tagged property: a set of nodes closed upward (every generalization of a member, for a
    property with direction UP) or downward.

    On a lattice small enough to enumerate it is the lattice's tag array; on a larger one it is
    kept as its minimal (UP) or maximal members.
    """

    def __init__(self, lattice: Lattice, prop: Property) -> None:
        self.lat, self.prop = lattice, prop
        self.up = prop.direction is Direction.UP
        self.mask = lattice.mask(prop) if lattice.enumerable else None
        self.base = np.empty((16, len(lattice.heights)), dtype=np.int64)
        self.size = 0

    def covers(self, node: Node) -> bool:
        if self.mask is not None:
            return bool(self.mask[self.lat.node_id(node)])
        rows, v = self.base[:self.size], np.asarray(node, dtype=np.int64)
        return bool(((rows <= v) if self.up else (rows >= v)).all(axis=1).any())

    def add(self, node: Node) -> None:
        if self.mask is not None:
            self.lat.tag(node, self.prop)
            return
        if self.covers(node):
            return
        rows, v = self.base[:self.size], np.asarray(node, dtype=np.int64)
        kept = rows[~((rows >= v) if self.up else (rows <= v)).all(axis=1)]  # now inside v's cone
        if len(kept) + 1 > len(self.base):
            self.base = np.empty((2 * len(self.base), self.base.shape[1]), dtype=np.int64)
        self.base[:len(kept)] = kept
        self.base[len(kept)] = v
        self.size = len(kept) + 1


class _Run:
    """One heuristic search: checks, tags, the queue and the best node so far."""

    def __init__(self, lattice: Lattice, evaluator: NodeEvaluator, seconds: float | None) -> None:
        self.lat, self.ev = lattice, evaluator
        self.start = time.perf_counter()
        self.deadline = None if seconds is None else self.start + seconds
        self.results: dict[Node, NodeResult] = {}
        lattice.clear_tags()
        self.fails = _Cones(lattice, NOT_ANONYMOUS)
        self.hopeless_cones = _Cones(lattice, PRUNED)
        self.priors = evaluator.prior_bounds(lattice)
        inner = evaluator.inner if isinstance(evaluator, Budgeted) else evaluator
        self.distinct_values = getattr(inner, "distinct_values", None)
        self.best_node: Node | None = None
        self.best = math.inf
        self.passed: set[Node] = set()
        self.dropped: set[Node] = set()
        self.bound: dict[Node, float] = {}
        self.expanded: set[Node] = set()
        self.queue: list[tuple[float, int, int, Node]] = []
        self.order = itertools.count()

    # -- nodes ------------------------------------------------------------------------------------
    def check(self, node: Node) -> NodeResult:
        """Check a node once, tag what a monotone model tells and keep the best anonymous node."""
        r = self.results.get(node)
        if r is not None:
            return r
        if self.deadline is not None and time.perf_counter() >= self.deadline:
            raise _OutOfTime
        r = self.results[node] = self.ev.evaluate(node)
        if self.ev.partly_monotone and not r.monotone_part:
            self.fails.add(node)
        if r.anonymous and r.metric is not None and r.metric < self.best:
            self.best, self.best_node = r.metric, node
        return r

    def key(self, node: Node, r: NodeResult | None, floor: float) -> float:
        """A lower bound of the metric of ``node`` and its generalizations; ``floor`` is one known
        from a node it generalizes."""
        k = floor
        if r is not None:
            lb = r.lower_bound
            if lb is None and self.ev.metric_monotone:
                lb = r.metric
            if lb is not None:
                k = max(k, lb)
        if self.priors is not None:
            k = max(k, float(self.priors[self.lat.node_id(node)]))
        return k

    @staticmethod
    def metric_of(r: NodeResult) -> float:
        """The metric of an anonymous node: this search runs only with a metric, and without a
        ceiling above which the evaluator would skip it."""
        if r.metric is None:
            raise InternalError(f"the anonymous node {r.node} was checked without its metric")
        return r.metric

    def hopeless(self, key: float) -> bool:
        """Neither the node nor any generalization can beat the best metric found."""
        if math.isinf(self.best) or math.isinf(key):  # nothing found yet, or nothing known
            return False
        return key > self.best or tied(key, self.best)

    def visit(self, node: Node, floor: float) -> float | None:
        """Reach ``node`` from a node of bound ``floor``; check it unless known to fail, queue it.

        Returns its bound, or None when it was expanded already or cannot beat the best found.
        """
        if node in self.expanded:
            return None
        if self.hopeless_cones.covers(node):
            self.dropped.add(node)
            return None
        r = self.results.get(node)
        if r is None and self.fails.covers(node):
            self.passed.add(node)
        else:
            r = self.check(node)
        k = self.key(node, r, floor)
        if self.hopeless(k):
            self.hopeless_cones.add(node)
            self.dropped.add(node)
            return None
        if node not in self.bound or k > self.bound[node]:
            self.bound[node] = k
            heapq.heappush(self.queue, (k, sum(node), next(self.order), node))
        return self.bound[node]

    def expand(self, node: Node, key: float) -> list[tuple[float, Node]]:
        """Visit every successor; the ones still in play with their bounds."""
        self.expanded.add(node)
        out = []
        for s in self.lat.successors(node):
            k = self.visit(s, key)
            if k is not None:
                out.append((k, s))
        return out

    # -- phases -----------------------------------------------------------------------------------
    def seed(self) -> None:
        """Datafly: generalize the attribute of most distinct values until the node is anonymous."""
        node = self.lat.bottom
        while not self.check(node).anonymous:
            steps = [i for i, (lv, h) in enumerate(zip(node, self.lat.heights)) if lv < h]
            if not steps:
                return
            if self.distinct_values is not None:
                counts = self.distinct_values(node)
                i = max(steps, key=lambda a: counts[a])
                node = node[:i] + (node[i] + 1,) + node[i + 1:]
            else:
                node = min(self.lat.successors(node), key=self._seed_rank)
        self.descend(node)

    def _seed_rank(self, node: Node) -> tuple[int, float]:
        """Datafly's fallback choice: an anonymous node of least metric, else the least bound."""
        if self.results.get(node) is None and self.fails.covers(node):
            return 2, math.inf
        r = self.check(node)
        if r.anonymous:
            return 0, self.metric_of(r)
        return 1, self.key(node, r, -math.inf)

    def dive(self, node: Node, key: float) -> None:
        """Lightning's depth-first step: follow the successor of least bound to an anonymous node.

        Successors known to fail are checked here too, so that the step follows real bounds.
        """
        while True:
            self.expanded.add(node)
            ahead = []
            for s in self.lat.successors(node):
                if s not in self.expanded and not self.hopeless_cones.covers(s):
                    if self.priors is None:
                        self.check(s)
                    k = self.visit(s, key)
                    if k is not None:
                        ahead.append((k, s))
            if not ahead:
                return
            key, node = min(ahead, key=lambda t: (t[0], sum(t[1])))
            if node in self.results and self.results[node].anonymous:
                self.descend(node)
                return

    def descend(self, node: Node) -> None:
        """From an anonymous node, step to the anonymous predecessor of least metric while that
        improves the metric (a greedy walk toward a minimal anonymous node)."""
        value = self.metric_of(self.results[node])
        while True:
            down = [(r.metric, p) for p in self.lat.predecessors(node)
                    if not self.fails.covers(p) and (r := self.check(p)).anonymous
                    and r.metric is not None and r.metric < value]
            if not down:
                return
            value, node = min(down, key=lambda t: (t[0], sum(t[1])))

    def best_first(self) -> None:
        """Expand nodes in order of their bounds until the queue runs empty."""
        self.visit(self.lat.bottom, -math.inf)
        stepping = max(1, self.lat.max_level)
        step = 0
        while self.queue:
            key, _, _, node = heapq.heappop(self.queue)
            if node in self.expanded or key < self.bound[node]:
                continue  # expanded, or queued again with a higher bound
            if self.hopeless(key):
                self.hopeless_cones.add(node)
                self.dropped.add(node)
                continue
            step += 1
            if step % stepping == 0:
                self.dive(node, key)
            else:
                self.expand(node, key)

    def result(self, complete: bool) -> SearchResult:
        found = [self.best_node] if self.best_node is not None else []
        return SearchResult("heuristic", self.best_node, self.best if found else None, found, found,
                            len(self.results), len(self.passed - self.results.keys()),
                            len(self.dropped),
                            time.perf_counter() - self.start, complete=complete)


@SEARCH_STRATEGIES.register("heuristic")
def heuristic(lattice: Lattice, evaluator: NodeEvaluator, *,
              time_limit: float | None = None) -> SearchResult:
    """A good anonymous node within a time limit; the optimum when the search runs to its end.

    Args:
        lattice: the generalization lattice, of any size.
        evaluator: checks nodes; inside :func:`~sqlanon.methods.generalization.search.limits.search_within`
            its time and step limits apply.
        time_limit: seconds to search. Without one, and without a limit around the evaluator,
            :data:`DEFAULT_TIME_LIMIT`.

    Returns:
        The best anonymous node found (None if there is none or none was found in time);
        ``complete`` is True only when the search proved it optimal (or proved that no node is
        anonymous).

    Raises:
        SpecError: when the evaluator has no metric.
    """
    if not evaluator.has_metric:
        raise SpecError("the heuristic search needs a metric to minimize", path="metric")
    limited = isinstance(evaluator, Budgeted) and (evaluator.deadline is not None
                                                   or evaluator.max_checks is not None)
    if time_limit is None and not limited:
        time_limit = DEFAULT_TIME_LIMIT
    run = _Run(lattice, evaluator, time_limit)
    try:
        run.seed()
        run.best_first()
    except (_OutOfTime, TimeLimitReached):
        return run.result(complete=False)
    return run.result(complete=True)

