"""What a table achieves under a generalization: the checked node, its metrics, the search."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlanon.domain.metrics import MetricContext, get_metric
from sqlanon.methods.generalization.evaluator import Evaluator, NodeCheck
from sqlanon.methods.notebook import NotebookReport

if TYPE_CHECKING:
    from sqlanon.domain.metrics.base import Metric
    from sqlanon.spec.schema import Spec

DEFAULT_METRICS = ("loss", "loss_arithmetic", "precision", "height", "discernibility",
                   "discernibility_star", "aecs")


@dataclass
class Report(NotebookReport):
    """What a table achieves under a spec's transformation."""

    node: NodeCheck
    metrics: dict[str, float]
    qis: list[str]
    outputs: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    search: dict[str, Any] | None = None
    """For ``anonymize``: the strategy, its wall time and node counts, and tied alternatives."""
    spec: Spec | None = field(default=None, repr=False)
    """For ``anonymize``: the input spec (:meth:`write_spec` re-emits it with the chosen levels)."""
    written_spec: str | None = None
    """Where :meth:`write_spec` wrote the chosen spec."""
    local_recoding: dict[str, Any] | None = None
    """With ``recoding: local``: the steps, their level vectors and rows, and the output's figures."""
    metric_details: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Per metric: the rows it counts (``rows``; ``population`` ``table`` or, for ARX's quality models
    under δ-presence, ``research subset``) and, for metrics with two ARX variants, which one."""
    privacy_unit: dict[str, Any] | None = None
    """With a privacy unit: the column, persons and rows, and the persons and rows suppressed (the
    node's figures count persons)."""

    @property
    def anonymous(self) -> bool:
        return self.node.anonymous

    def write_spec(self, path: str | os.PathLike[str]) -> Path:
        """Write the input spec with the chosen levels to ``path``, and the search's report as a
        comment at its top, so that ``apply`` and ``compile`` reuse the choice (docs/search.md)."""
        from sqlanon.errors import SpecError
        from sqlanon.spec.chosen import write_chosen_spec

        if self.search is None or self.spec is None:
            raise SpecError("only the report of `anonymize` carries a chosen transformation to write",
                            path="write_spec")
        d = self.as_dict()
        summary = {k: d[k] for k in ("rows", "suppressed_rows", "classes", "min_class_size", "privacy",
                                     "metrics")}
        search = {k: v for k, v in self.search.items() if k not in ("ranked", "explored")}
        written = write_chosen_spec(self.spec, self.node.levels, {"search": search, "result": summary},
                                    path)
        self.written_spec = str(written)
        return written

    def as_dict(self) -> dict[str, Any]:
        n = self.node
        privacy: dict[str, Any] = {}
        for m in n.models:
            key = m.model
            i = 2
            while key in privacy:
                key = f"{m.model}#{i}"
                i += 1
            privacy[key] = m.as_dict()
        return {
            "rows": n.rows,
            "anonymous": n.anonymous,
            "transformation": {"levels": dict(n.levels), "suppression_limit": n.suppression_limit,
                               "max_suppressed_rows": n.max_suppressed},
            "suppressed_rows": n.suppressed_rows,
            "outlier_rows": n.outlier_rows,
            "classes": n.classes,
            "min_class_size": n.min_class_size,
            "privacy": privacy,
            "metrics": self.metrics,
            **({"metric_details": self.metric_details} if self.metric_details else {}),
            "outputs": self.outputs,
            "warnings": self.warnings,
            **({"search": self.search} if self.search is not None else {}),
            **({"written_spec": self.written_spec} if self.written_spec is not None else {}),
            **({"local_recoding": self.local_recoding} if self.local_recoding is not None else {}),
            **({"privacy_unit": self.privacy_unit} if self.privacy_unit is not None else {}),
        }


def metric_names(spec: Spec, metrics: tuple[str, ...] | None) -> tuple[str, ...]:
    """``metrics`` when given (``()`` = none), else the spec's list, else the ARX defaults."""
    if metrics is not None:
        return tuple(metrics)
    return spec.metrics or DEFAULT_METRICS


def levels_of(spec: Spec, qis: list[str]) -> dict[str, int]:
    return {a: spec.transformation.levels.get(a, 0) for a in qis}


def evaluate_metrics(names: tuple[str, ...] | list[str], ev: Evaluator, node: NodeCheck,
                     spec: Spec, details: dict[str, dict[str, Any]] | None = None,
                     in_memory: Callable[[Metric], float | None] | None = None) -> dict[str, float]:
    """The metrics' values; ``details`` receives, per metric, the rows it counts (and its variant).
    ``in_memory`` gives a metric's value from the search's classes in memory (None: ask the engine)."""
    weights = {a: spec.attributes[a].weight for a in ev.p.qis}
    ctx = MetricContext(ev, node, weights, spec.metric_options)
    values = {}
    with ev.engine.purpose("metrics"):
        for name in names:
            metric = get_metric(name, "metrics", spec.metric_options)
            value = in_memory(metric) if in_memory is not None else None
            values[name] = metric.compute(ctx) if value is None else value
            if details is not None:
                details[name] = ctx.counted(metric)
    return values


def measured(node: NodeCheck, names: tuple[str, ...], ev: Evaluator, spec: Spec, qis: list[str],
             in_memory: Callable[[Metric], float | None] | None = None, **extra: Any) -> Report:
    """The report of a checked node with its metrics and which rows each counts."""
    details: dict[str, dict[str, Any]] = {}
    metrics = evaluate_metrics(names, ev, node, spec, details, in_memory)
    report = Report(node, metrics, qis, metric_details=details, **extra)
    if ev.p.persons is not None:
        from sqlanon.methods.generalization.persons import persons_report

        report.privacy_unit = persons_report(ev, node)
    return report
