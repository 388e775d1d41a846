"""Collecting the report's figures during a run: the source before the method runs, the released
node while the method's evaluator is still open (a generalization), the result and the written output
after, on the same connection (a :class:`~sqlanon.methods.runner.RunObserver`).

Only a run asked for an HTML report pays for these queries; each is a small aggregate.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlanon.errors import InternalError, UnsupportedError
from sqlanon.methods.dataset import Dataset
from sqlanon.report.html import figures_generalization, figures_numeric
from sqlanon.report.html.charts import start_renderer
from sqlanon.spec.schema import Spec

NUMERIC_METHODS = ("microaggregation", "noise")


class Figures:
    """The observer of one run; its figures end up on the result as ``result.figures``."""

    def __init__(self, spec: Spec, *, writes: bool, population: Mapping[str, Any] | None = None) -> None:
        start_renderer()
        self.spec = spec
        self.method = spec.method.name
        if self.method == "generalization" and writes and spec.output.mode == "in_place":
            raise UnsupportedError("an HTML report of a generalization reads the source after the run, and "
                                   "output.mode in_place replaces it: write a table (output.mode: table) "
                                   "or run `sqlanon check SPEC --html FILE` first")
        self.data: dict[str, Any] = {"method": self.method}
        self._released: dict[str, Any] | None = None
        if population is not None:
            self.data["population"] = dict(population)

    def opened(self, ds: Dataset) -> None:
        if self.method == "generalization":
            self.data.update(figures_generalization.before(self.spec, ds))
        elif self.method in NUMERIC_METHODS:
            self.data.update(figures_numeric.before(self.spec, ds))

    def checked(self, ds: Dataset, checked: Any) -> None:
        """The released node's figures, from the method's open evaluator (``checked.evaluator``) and
        the node it checked (``checked.node``); a perturbative release's figures after it, from the
        released rows (``checked.query``) of a run that writes nothing."""
        if self.method == "generalization":
            self._released = figures_generalization.after(self.spec, checked.evaluator, checked.node,
                                                          self.data.pop("sensitive_ranges", {}))
        elif self.method in NUMERIC_METHODS:  # the released rows' SELECT, nothing written
            self.data.update(figures_numeric.unwritten(self.spec, ds, checked.query, self.data))

    def finished(self, ds: Dataset, result: Any) -> None:
        if self.method == "generalization" and hasattr(result, "node"):
            if self._released is None:
                raise InternalError("the generalization did not show the report its checked node")
            found, self._released = self._released, None
            self.data["class_sizes"].update(found.pop("class_sizes"))
            sensitive = found.pop("sensitive")
            for a, before in self.data.pop("sensitive_before", {}).items():
                sensitive.setdefault(a, {})["before"] = before
            self.data["sensitive"] = sensitive
            self.data.update(found)
            if "population" not in self.data:
                estimates = population_estimates(self.spec, self.data["class_sizes"])
                if estimates is not None:
                    self.data["population"] = estimates
        elif self.method in NUMERIC_METHODS:
            self.data.update(figures_numeric.after(self.spec, ds, result, self.data))
        result.figures = self.data


def population_estimates(spec: Spec, class_sizes: Mapping[str, Any]) -> dict[str, Any] | None:
    """The population-uniqueness estimates before and after, from the class-size histograms already
    collected (no query), under the spec's population model (``metrics.options.population_size``
    or ``sampling_fraction``); None without one."""
    from sqlanon.domain.metrics.population_risk import population_model
    from sqlanon.domain.risk.analysis import of_histogram
    from sqlanon.domain.risk.histogram import SizeHistogram

    histograms = {phase: SizeHistogram.of({int(r["size"]): int(r["classes"]) for r in class_sizes[phase]})
                  for phase in ("before", "after") if class_sizes.get(phase) is not None}
    if "before" not in histograms:
        return None
    model = population_model(spec.metric_options, histograms["before"].records)
    if model is None:
        return None
    return {"model": {"population_size": model.size},
            **{phase: of_histogram(h, population=model.size).as_dict() for phase, h in histograms.items()}}
