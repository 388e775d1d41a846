"""ARX's local recoding: the suppressed records anonymized again, step by step, with the optimal search.

Each step takes the records still suppressed as a data set of their own (privacy models and the
quality model cloned onto it, ARX's ``getInstanceForLocalRecoding``), searches its lattice for the
optimum, and releases the records of the classes that pass at that node; the rest stay suppressed for
the next step. Steps run while the models allow it, at least the models' smallest class size of
records remain (ARX's ``isOptimizable``), and the last step recovered any record; the iterative
variant first raises the gs-factor when a step recovers nothing (``optimizeIterative``,
``optimizeIterativeFast``). Everything runs on the frequency table in memory.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from sqlanon.errors import UnsupportedError
from sqlanon.methods.generalization.evaluator import Evaluator
from sqlanon.methods.generalization.local.settings import LocalRecoding
from sqlanon.methods.generalization.search import lattice_of
from sqlanon.methods.generalization.search.fast import FastNodeEvaluator
from sqlanon.methods.generalization.search.fast_subset import restrict
from sqlanon.methods.generalization.search.limits import search_within

SUPPRESSED = -1
"""The step of a frequency row no step released."""


@dataclass(frozen=True)
class Step:
    """One search over the records still suppressed (step 0: the global optimum over every record)."""

    levels: tuple[int, ...]
    records: int
    """Records the step was given."""
    recovered: int
    """Records released at the step's node."""
    suppression_limit: float
    gs_factor: float | None
    """The Loss metric's gs-factor the step searched with (None: the metric's own)."""
    metric: float | None
    seconds: float = 0.0
    """The step's search (the global search's for step 0)."""
    nodes_checked: int = 0


@dataclass
class LocalResult:
    steps: list[Step]
    step_of_row: np.ndarray
    """Per frequency row of the loaded table, the step that released it, or :data:`SUPPRESSED`."""
    stop: str
    """Why the steps ended."""
    failed: list[dict[str, Any]] = field(default_factory=list)
    """Steps whose search found no anonymous node (they count as recovering nothing)."""

    @property
    def suppressed(self) -> int:
        return self.steps[0].records - sum(s.recovered for s in self.steps)


def refuse_models(models: Sequence[Any]) -> None:
    """Local recoding re-anonymizes a subset; refuse models that cannot be cloned onto one."""
    bad = [m.label for m in models if not m.local_recoding()]
    if bad:
        raise UnsupportedError(
            f"local recoding is not available with {', '.join(bad)}: a suppressed subset cannot be "
            "anonymized on its own under this model (ARX refuses it too, or sqlanon does not yet; "
            "docs/search.md#local-recoding); use recoding: global")


class _Steps:
    def __init__(self, nodes: FastNodeEvaluator, ev: Evaluator, first: tuple[int, ...], *, metric: str | None,
                 metric_options: Mapping[str, Any], weights: Mapping[str, float], strategy: str,
                 time_limit: float | None) -> None:
        self.full = nodes.fast
        self.ev = ev
        self.metric, self.metric_options, self.weights = metric, dict(metric_options), dict(weights)
        self.strategy, self.time_limit = strategy, time_limit
        kept = self.full.kept_rows(first)
        self.step_of = np.where(kept, 0, SUPPRESSED).astype(np.int64)
        self.total = self.full.n
        self.steps = [Step(tuple(first), self.total, int(self.full.row_n[kept].sum()),
                           self.full.limit, None, None)]
        self.failed: list[dict[str, Any]] = []
        self.min_size = max([m.min_class_size() for m in ev.p.models] or [1])

    def remaining(self) -> int:
        return int(self.full.row_n[self.step_of == SUPPRESSED].sum())

    def optimizable(self) -> bool:
        left = self.remaining()
        return left > 0 and left >= self.min_size

    def run(self, limit: float, gs_factor: float | None) -> int:
        """One step over the suppressed records: the records it recovered."""
        rows = np.flatnonzero(self.step_of == SUPPRESSED)
        options = dict(self.metric_options)
        if gs_factor is not None:
            options["gs_factor"] = gs_factor
        sub = restrict(self.full, rows, limit, options)
        nodes = FastNodeEvaluator(self.ev, limit, self.metric, weights=self.weights, options=options,
                                  fast=sub)
        result = search_within(lattice_of(self.ev.p), nodes, self.strategy, time_limit=self.time_limit)
        if result.node is None:
            self.failed.append({"records": sub.n, "suppression_limit": limit, "gs_factor": gs_factor,
                                "seconds": result.seconds, "nodes_checked": result.checked})
            return 0
        kept = sub.kept_rows(result.node)
        recovered = int(sub.row_n[kept].sum())
        self.step_of[rows[kept]] = len(self.steps)
        self.steps.append(Step(tuple(int(x) for x in result.node), sub.n, recovered, limit, gs_factor,
                               result.metric, result.seconds, result.checked))
        return recovered


def recode_locally(nodes: FastNodeEvaluator, ev: Evaluator, first: Sequence[int], settings: LocalRecoding, *,
                   metric: str | None, metric_options: Mapping[str, Any], weights: Mapping[str, float],
                   strategy: str, time_limit: float | None) -> LocalResult:
    """Run ARX's local recoding from the global optimum ``first`` found with ``nodes``."""
    refuse_models(ev.p.models)
    s = _Steps(nodes, ev, tuple(int(x) for x in first), metric=metric, metric_options=metric_options,
               weights=weights, strategy=strategy, time_limit=time_limit)
    current: float = float("inf")
    if settings.variant == "fast":
        while s.optimizable() and current > 0:
            records = settings.records * s.total / s.remaining()  # ARX's doubles, in its order
            records = min(max(records, 0.0), 1.0)
            current = s.run(1.0 - records, None)
        stop = "no records left to recover" if not s.optimizable() else "a step recovered nothing"
        return LocalResult(s.steps, s.step_of, stop, s.failed)
    gs, iterations = settings.gs_factor, 0
    while s.optimizable() and iterations < settings.iterations and current > 0:
        current = s.run(s.full.limit, gs)
        if current == 0 and settings.adaption > 0:
            gs += settings.adaption
            if gs <= 1.0:
                current = float("inf")
        iterations += 1
    if not s.optimizable():
        stop = "no records left to recover"
    elif iterations >= settings.iterations:
        stop = f"{settings.iterations} iterations"
    else:
        stop = "a step recovered nothing at gs-factor 1"
    return LocalResult(s.steps, s.step_of, stop, s.failed)
