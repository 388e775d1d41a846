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

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from sqlanon.errors import SpecError, did_you_mean
from sqlanon.search.lattice import Direction, Lattice, Node, Property
from sqlanon.search.nodes import NodeEvaluator, NodeResult

ANONYMOUS = Property("anonymous", Direction.UP)
NOT_ANONYMOUS = Property("not-anonymous", Direction.DOWN)
MONOTONE_PART = Property("monotone-part", Direction.UP)
PRUNED = Property("pruned", Direction.UP)
"""The node's generalizations cannot reach the best metric found (a lower bound above it)."""
DOMINATED = Property("dominated", Direction.UP)
"""A generalization of a satisfying node, so not minimal."""

TOLERANCE = 1e-12
"""Relative tolerance under which two metric values count as tied."""


def tied(a: float, b: float) -> bool:
    return abs(a - b) <= TOLERANCE * max(1.0, abs(a), abs(b))


@dataclass
class SearchResult:
    """What a strategy found.

    Attributes:
        strategy: the strategy's name.
        node: the chosen node (None when no node satisfies the models).
        metric: its metric (None without a metric).
        ties: every satisfying node sharing the chosen node's metric (with ``exhaustive`` and
            ``optimal``: the global minimum; with ``binary``: the minimum at the lowest height).
        solutions: ``exhaustive``: all satisfying nodes; ``binary``: the satisfying nodes at the
            lowest height; ``incognito``: the minimal satisfying nodes; ``optimal``: ``ties``.
        checked: nodes the strategy checked.
        tagged: nodes decided by predictive tagging without a check.
        pruned: nodes skipped because they cannot matter (bounded metric, or above a satisfying
            node when looking for minimal ones).
        seconds: wall time of the search.
        trace: ``binary``: the heights probed with whether a satisfying node was found there.
        complete: whether the strategy ran to its end (see :mod:`sqlanon.search.limits`).
    """

    strategy: str
    node: Node | None
    metric: float | None
    ties: list[Node]
    solutions: list[Node]
    checked: int
    tagged: int
    pruned: int
    seconds: float
    trace: list[tuple[int, bool]] = field(default_factory=list)
    complete: bool = True
    """False when a time limit stopped the search: ``node`` is then the best node checked so far."""

    @property
    def height(self) -> int | None:
        return sum(self.node) if self.node is not None else None


class _Search:
    """One run: the lattice's tags, the nodes checked, and the property the binary phase uses."""

    def __init__(self, lattice: Lattice, evaluator: NodeEvaluator, name: str) -> None:
        lattice.clear_tags()
        self.lat, self.ev, self.name = lattice, evaluator, name
        self.start = time.perf_counter()
        self.results: dict[Node, NodeResult] = {}
        self.true_prop = ANONYMOUS if evaluator.privacy_monotone else MONOTONE_PART

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
        if self.lat.has(node, NOT_ANONYMOUS):
            return False
        if self.lat.has(node, ANONYMOUS):
            return True
        return self.probe(node).anonymous

    def resolved(self, node: Node) -> bool:
        return self.lat.has(node, self.true_prop) or self.lat.has(node, NOT_ANONYMOUS)

    def classify(self) -> None:
        """Settle the monotone property on every node: binary search along greedy upward paths."""
        if not self.ev.partly_monotone:
            return
        for level in range(self.lat.max_level + 1):
            for node in self.lat.nodes_at(level):
                if not self.resolved(node):
                    self._binary_on_path(self._greedy_path(node))

    def _greedy_path(self, node: Node) -> list[Node]:
        path = [node]
        while True:
            nxt = [s for s in self.lat.successors(path[-1]) if not self.resolved(s)]
            if not nxt:
                return path
            path.append(nxt[0])

    def _binary_on_path(self, path: list[Node]) -> None:
        lo, hi = 0, len(path)
        while lo < hi:
            mid = (lo + hi) // 2
            node = path[mid]
            if not self.resolved(node):
                self.probe(node)
            if self.lat.has(node, self.true_prop):
                hi = mid
            else:
                lo = mid + 1

    def best(self, nodes: list[Node]) -> tuple[Node | None, float | None, list[Node]]:
        """The node of minimal metric among checked satisfying ``nodes``, and all tied with it."""
        if not nodes:
            return None, None, []
        if not self.ev.has_metric:
            return min(nodes, key=self.order), None, []
        value = min(self.results[n].metric for n in nodes)
        ties = sorted((n for n in nodes if tied(self.results[n].metric, value)), key=self.order)
        return ties[0], value, ties

    def order(self, node: Node) -> tuple[int, int]:
        """Traversal order: lattice level, then ARX's node id."""
        return sum(node), self.lat.node_id(node)

    def result(self, node: Node | None, metric: float | None, ties: list[Node],
               solutions: list[Node], trace: list[tuple[int, bool]] | None = None) -> SearchResult:
        skip = self.lat.tagged(PRUNED) | self.lat.tagged(DOMINATED)
        pruned = len(skip - self.results.keys())
        return SearchResult(self.name, node, metric, ties, sorted(solutions, key=self.order),
                            len(self.results), len(self.lat) - len(self.results) - pruned, pruned,
                            time.perf_counter() - self.start, list(trace or []))


def exhaustive(lattice: Lattice, evaluator: NodeEvaluator) -> SearchResult:
    """Check every node."""
    s = _Search(lattice, evaluator, "exhaustive")
    ok = [n for n in lattice if s.probe(n).anonymous]
    node, value, ties = s.best(ok)
    return s.result(node, value, ties, ok)


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


def incognito(lattice: Lattice, evaluator: NodeEvaluator) -> SearchResult:
    """Every minimal satisfying node (no satisfying node below it).

    With monotone models the property is first settled by binary search along paths; then a
    bottom-up pass checks only nodes that are neither known to fail nor above a satisfying node.
    """
    s = _Search(lattice, evaluator, "incognito")
    s.classify()
    minimal = []
    for node in lattice:
        if lattice.has(node, DOMINATED) or lattice.has(node, NOT_ANONYMOUS):
            continue
        if s.anonymous(node):
            minimal.append(node)
            lattice.tag(node, DOMINATED)
    if evaluator.has_metric:
        for n in minimal:
            s.probe(n)
    node, value, ties = s.best(minimal)
    return s.result(node, value, ties, minimal)


def optimal(lattice: Lattice, evaluator: NodeEvaluator) -> SearchResult:
    """The anonymous node of minimal information loss, and every node tied with it.

    Phase 1 settles the monotone property (anonymity, or its monotone part) by binary search along
    greedy paths, tagging generalizations and specializations. Phase 2 checks every node not known
    to fail, the minimal ones first; a node whose lower bound exceeds the best value found prunes all
    its generalizations. Without monotone models phase 1 is skipped; without a lower bound nothing is
    pruned, so the result is the true optimum in every case.

    Raises:
        SpecError: when the evaluator has no metric.
    """
    if not evaluator.has_metric:
        raise SpecError("the optimal search needs a metric to minimize", path="metric")
    s = _Search(lattice, evaluator, "optimal")
    s.classify()
    best: list[float] = []

    def visit(node: Node) -> None:
        if lattice.has(node, NOT_ANONYMOUS) or lattice.has(node, PRUNED):
            return
        r = s.probe(node)
        if r.anonymous and r.metric is not None and (not best or r.metric < best[0]):
            best[:] = [r.metric]
            for done in list(s.results.values()):
                prune(done)
        else:
            prune(r)

    def prune(r: NodeResult) -> None:
        if best and r.lower_bound is not None and r.lower_bound > best[0] and \
                not tied(r.lower_bound, best[0]):
            lattice.tag(r.node, PRUNED)

    candidates = [n for n in lattice if not lattice.has(n, NOT_ANONYMOUS)]
    frontier = [n for n in candidates
                if all(lattice.has(p, NOT_ANONYMOUS) for p in lattice.predecessors(n))]
    for node in frontier:
        visit(node)
    for node in candidates:
        visit(node)
    ok = [n for n, r in s.results.items() if r.anonymous]
    node, value, ties = s.best(ok)
    return s.result(node, value, ties, ties)


STRATEGIES: dict[str, Callable[[Lattice, NodeEvaluator], SearchResult]] = {
    "exhaustive": exhaustive, "binary": binary, "incognito": incognito, "optimal": optimal}


def search(lattice: Lattice, evaluator: NodeEvaluator, strategy: str = "optimal") -> SearchResult:
    """Run one strategy by name.

    Raises:
        SpecError: for an unknown strategy name.
    """
    if strategy not in STRATEGIES:
        raise SpecError(f"unknown search strategy {strategy!r}; known: {', '.join(STRATEGIES)}."
                        + did_you_mean(strategy, STRATEGIES), path="strategy")
    return STRATEGIES[strategy](lattice, evaluator)
