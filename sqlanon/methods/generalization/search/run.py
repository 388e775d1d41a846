"""Search the lattice for the best transformation (the `anonymize` verb), then apply it like `apply`.

Nodes are checked in memory on the frequency table when every model and the metric are supported there
(:mod:`sqlanon.methods.generalization.search.fast`), else in SQL on the engine; both give the same answers.
The chosen node is then checked once more in SQL, so the report and the output come from the same code as
``check``.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from sqlanon.domain.metrics import get_metric
from sqlanon.errors import InfeasibleError, SpecError, UnsupportedError, did_you_mean
from sqlanon.methods.generalization.evaluator import Evaluator
from sqlanon.methods.generalization.search import lattice_of
from sqlanon.methods.generalization.search.fast import FastNodeEvaluator
from sqlanon.methods.generalization.search.heuristic import DEFAULT_TIME_LIMIT
from sqlanon.methods.generalization.search.limits import TerminalProgress, search_within
from sqlanon.methods.generalization.search.nodes import NodeEvaluator, SqlNodeEvaluator
from sqlanon.spec.schema import Spec
from sqlanon.spec.search import SEARCH_STRATEGIES


def node_evaluator(ev: Evaluator, limit: float, metric: str, weights: dict[str, float],
                   options: dict[str, Any] | None = None) -> tuple[NodeEvaluator, str]:
    try:
        return FastNodeEvaluator(ev, limit, metric, weights=weights, options=options), "memory"
    except UnsupportedError:
        return SqlNodeEvaluator(ev, limit, metric, weights=weights, options=options), "sql"


def search_spec(spec: Spec, ev: Evaluator, *, strategy: str | None = None, metric: str | None = None,
                time_limit: float | None = None, progress: bool = False
                ) -> tuple[dict[str, int], dict[str, Any]]:
    """The chosen levels and the report's ``search`` object."""
    levels, report, _ = search_nodes(spec, ev, strategy=strategy, metric=metric, time_limit=time_limit,
                                     progress=progress)
    return levels, report


def search_settings(spec: Spec, strategy: str | None = None, metric: str | None = None,
                    time_limit: float | None = None) -> tuple[str, str, float | None]:
    """The strategy, metric and time limit a search runs with: the verb's, else the spec's, else the
    defaults (the heuristic's default time limit included)."""
    options = spec.transformation.options
    strategy = strategy or options.get("search", "optimal")
    metric = metric or options.get("metric", "loss")
    time_limit = time_limit if time_limit is not None else options.get("time_limit")
    if time_limit is not None and (isinstance(time_limit, bool) or not isinstance(time_limit, (int, float))
                                   or time_limit <= 0):
        raise SpecError(f"time_limit must be a number of seconds > 0, got {time_limit!r}",
                        path="transformation.time_limit", source=spec.path)
    if strategy not in SEARCH_STRATEGIES:
        known = SEARCH_STRATEGIES.names()
        raise SpecError(f"unknown search strategy {strategy!r}; one of {', '.join(known)}."
                        + did_you_mean(str(strategy), known), path="transformation.search",
                        source=spec.path)
    if strategy == "heuristic" and time_limit is None:
        time_limit = DEFAULT_TIME_LIMIT
    return strategy, metric, time_limit


def search_nodes(spec: Spec, ev: Evaluator, *, strategy: str | None = None, metric: str | None = None,
                 time_limit: float | None = None, progress: bool = False
                 ) -> tuple[dict[str, int], dict[str, Any], NodeEvaluator]:
    """:func:`search_spec`, and the node evaluator the search checked nodes with (a local recoding
    searches again on part of its rows)."""
    strategy, metric, time_limit = search_settings(spec, strategy, metric, time_limit)
    weights = {a: spec.attributes[a].weight for a in ev.p.qis}
    limit = spec.transformation.suppression_limit
    nodes, where = node_evaluator(ev, limit, metric, weights, spec.metric_options)
    bar = TerminalProgress(metric, attributes=ev.p.qis, total=lattice_of(ev.p).size) \
        if progress else None
    try:
        result = search_within(lattice_of(ev.p), nodes, strategy, time_limit=time_limit, progress=bar)
    finally:
        if bar is not None:
            bar.close()
    if result.node is None and not result.complete:
        raise InfeasibleError(f"the time limit of {time_limit:g} s passed before any anonymous "
                              f"transformation was found ({result.checked} nodes checked)")
    if result.node is None:
        raise InfeasibleError(
            f"no transformation satisfies the privacy models within the suppression limit {limit:g} "
            f"({result.checked} nodes checked): raise transformation.suppression_limit or relax a model")
    levels = dict(zip(ev.p.qis, result.node))
    alternatives = [dict(zip(ev.p.qis, n)) for n in (result.ties or result.solutions) if n != result.node]
    variant = get_metric(metric, options=spec.metric_options).variant
    report = {
        "strategy": result.strategy, "metric": metric,
        **({"metric_variant": variant} if variant else {}),
        "value": result.metric,
        "seconds": result.seconds, "nodes_checked": result.checked, "nodes_tagged": result.tagged,
        "nodes_pruned": result.pruned,
        "nodes_rolled_up": nodes.fast.rolled_up if isinstance(nodes, FastNodeEvaluator) else 0,
        "lattice_size": lattice_of(ev.p).size, "evaluated_in": where,
        "complete": result.complete,
        "optimal": strategy in ("optimal", "exhaustive", "heuristic") and result.complete,
        "alternatives": alternatives[:20],
        "ranked": [{"levels": dict(zip(ev.p.qis, n)), "value": v} for n, v in result.ranked],
        "explored": {"attributes": list(ev.p.qis), "heights": list(lattice_of(ev.p).heights),
                     "nodes": [[[int(x) for x in n], bool(a), None if v is None else float(v)]
                               for n, a, v in result.explored]},
    }
    return levels, report, nodes


def with_levels(spec: Spec, levels: dict[str, int]) -> Spec:
    return replace(spec, transformation=replace(spec.transformation, levels=levels))
