"""The Python API: the same verbs as the command line. Orchestration only."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from sqlanon.dataset import Dataset, open_dataset, problem_for
from sqlanon.engines.base import Engine
from sqlanon.evaluate import Evaluator, NodeCheck
from sqlanon.metrics import MetricContext, get_metric
from sqlanon.spec.load import load_spec
from sqlanon.spec.schema import Spec

DEFAULT_METRICS = ("loss", "loss_arithmetic", "precision", "height", "discernibility",
                   "discernibility_star", "aecs")


@dataclass
class Report:
    """What a table achieves under a spec's transformation."""

    node: NodeCheck
    metrics: dict[str, float]
    qis: list[str]
    outputs: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    search: dict[str, Any] | None = None
    """For ``anonymize``: the strategy, its wall time and node counts, and tied alternatives."""

    @property
    def anonymous(self) -> bool:
        return self.node.anonymous

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
            "outputs": self.outputs,
            "warnings": self.warnings,
            **({"search": self.search} if self.search is not None else {}),
        }


def _metric_names(spec: Spec, metrics: tuple[str, ...] | None) -> tuple[str, ...]:
    """``metrics`` when given (``()`` = none), else the spec's list, else the ARX defaults."""
    if metrics is not None:
        return tuple(metrics)
    return spec.metrics or DEFAULT_METRICS


def _spec(spec: Spec | str) -> Spec:
    return load_spec(spec) if isinstance(spec, str) else spec


def levels_of(spec: Spec, qis: list[str]) -> dict[str, int]:
    return {a: spec.transformation.levels.get(a, 0) for a in qis}


def evaluate_metrics(names: tuple[str, ...] | list[str], ev: Evaluator, node: NodeCheck,
                     spec: Spec) -> dict[str, float]:
    weights = {a: spec.attributes[a].weight for a in ev.p.qis}
    ctx = MetricContext(ev, node, weights, spec.metric_options)
    return {name: get_metric(name, "metrics").compute(ctx) for name in names}


@contextlib.contextmanager
def _checked_node(spec: Spec, engine: Engine | None, database: str | None
                  ) -> Iterator[tuple[Dataset, Evaluator, NodeCheck]]:
    """Open the source, check the spec's node with one generalizing scan, and clean up after."""
    ds = open_dataset(spec, engine, database=database)
    try:
        problem = problem_for(spec, ds)
        levels = levels_of(spec, problem.qis)
        with Evaluator(problem, scan_levels=levels) as ev:
            yield ds, ev, ev.check(levels, spec.transformation.suppression_limit)
    finally:
        ds.close()


def _microaggregation(spec: Spec, engine: Engine | None, database: str | None, verb: str,
                      **options: Any) -> Any:
    """``method: microaggregation``: the verb of :mod:`sqlanon.microagg.verbs` on the opened source."""
    from sqlanon.microagg import verbs

    ds = open_dataset(spec, engine, database=database)
    try:
        return getattr(verbs, verb)(spec, ds, **options)
    finally:
        ds.close()


def check(spec: Spec | str, *, engine: Engine | None = None, database: str | None = None,
          metrics: tuple[str, ...] | None = None) -> Any:
    """What the spec's source achieves under its transformation (levels and suppression limit; for
    microaggregation the groups, achieved k and information loss: a ``MicroaggregationReport``)."""
    spec = _spec(spec)
    if spec.transformation.method == "microaggregation":
        return _microaggregation(spec, engine, database, "check", metrics=metrics != ())
    if spec.transformation.method == "noise":
        from sqlanon.errors import SpecError

        raise SpecError("check has nothing to measure before the noise is drawn: run apply, whose "
                        "report gives the utility and risk of the noisy table (apply --dry-run only "
                        "validates)", path="transformation.method", source=spec.path)
    with _checked_node(spec, engine, database) as (_, ev, node):
        return Report(node, evaluate_metrics(_metric_names(spec, metrics), ev, node, spec), ev.p.qis)


def apply(spec: Spec | str, *, engine: Engine | None = None, database: str | None = None,
          metrics: tuple[str, ...] | None = None, dry_run: bool = False, progress: bool = False) -> Any:
    """Check the transformation and write the spec's output (table, view, in place, or SQL).

    ``progress`` draws a progress line on a terminal for long microaggregations.
    """
    from sqlanon.outputs import write_output

    spec = _spec(spec)
    if not dry_run:
        _check_file_output(spec, engine, database)
    if spec.transformation.method == "microaggregation":
        return _microaggregation(spec, engine, database, "apply", metrics=metrics != (),
                                 dry_run=dry_run, progress=progress)
    if spec.transformation.method == "noise":
        from sqlanon.noise.apply import apply_noise

        return apply_noise(spec, engine=engine, database=database, dry_run=dry_run,
                           quality=metrics != ())
    with _checked_node(spec, engine, database) as (ds, ev, node):
        report = Report(node, evaluate_metrics(_metric_names(spec, metrics), ev, node, spec), ev.p.qis)
        if not dry_run:
            report.outputs = write_output(spec, ds, ev, node)
        return report


def _check_file_output(spec: Spec, engine: Engine | None, database: str | None) -> None:
    """A file source is read into a temporary table: say where a table output should land."""
    from sqlanon.errors import SpecError

    if not spec.source.file or spec.output.mode not in ("table", "view"):
        return
    if spec.output.mode == "view":
        raise SpecError("a view over a file source would read a temporary copy that disappears; use "
                        "mode table (with output.database) or sql", path="output.mode", source=spec.path)
    if engine is None and not (database or spec.source.database or spec.output.database):
        raise SpecError("the source is a file, so there is no database to write the table into: set "
                        "output.database to a DuckDB file (or pass --database). sqlanon never writes "
                        "beside the input file on its own", path="output.database", source=spec.path)


def open_source(spec: Spec | str, *, engine: Engine | None = None, database: str | None = None
                ) -> Dataset:
    return open_dataset(_spec(spec), engine, database=database)


def compile_sql(spec: Spec | str, *, engine: Engine | None = None, database: str | None = None,
                dialect: str | None = None) -> str:
    """The spec's transformation as one SQL statement for ``dialect`` (default ``output.dialect``)."""
    from sqlanon.outputs import compile_output_sql

    spec = _spec(spec)
    if spec.transformation.method == "microaggregation":
        return _microaggregation(spec, engine, database, "compile_sql",
                                 dialect=dialect or spec.output.dialect)
    if spec.transformation.method == "noise":
        from sqlanon.errors import SpecError

        raise SpecError("compile prints the SQL of a generalization or a microaggregation; noise is drawn "
                        "outside the database when the output is written: run apply",
                        path="transformation.method", source=spec.path)
    with _checked_node(spec, engine, database) as (ds, ev, node):
        return compile_output_sql(spec, ds, ev, node, dialect or spec.output.dialect)


def anonymize(spec: Spec | str, *, engine: Engine | None = None, database: str | None = None,
              strategy: str | None = None, metric: str | None = None,
              metrics: tuple[str, ...] | None = None, dry_run: bool = False,
              time_limit: float | None = None, progress: bool = False) -> Report:
    """Search the lattice for the transformation of least information loss, then write the output.

    ``strategy`` and ``metric`` default to ``transformation.search`` (``optimal``) and
    ``transformation.metric`` (``loss``). With ``time_limit`` (seconds; default
    ``transformation.time_limit``) the search may stop early with the best node found so far; the
    report's ``search.complete`` and ``search.optimal`` then say so. ``progress`` draws a progress line
    on a terminal for searches that take more than a second.
    """
    from sqlanon.anonymize import search_spec, with_levels
    from sqlanon.outputs import write_output

    spec = _spec(spec)
    if spec.transformation.method == "microaggregation":
        from sqlanon.errors import UnsupportedError

        raise UnsupportedError("anonymize searches generalization levels; a microaggregation has none "
                               "to search: run `apply` (or `check`)")
    if spec.transformation.method == "noise":
        from sqlanon.errors import SpecError

        raise SpecError("anonymize searches generalization levels; a noise spec has none to search: run "
                        "apply", path="transformation.method", source=spec.path)
    if not dry_run:
        _check_file_output(spec, engine, database)
    ds = open_dataset(spec, engine, database=database)

    def finish(ev: Evaluator, levels: dict[str, int], found: dict[str, Any]) -> Report:
        chosen = with_levels(spec, levels)
        node = ev.check(levels, spec.transformation.suppression_limit)
        report = Report(node, evaluate_metrics(_metric_names(chosen, metrics), ev, node, chosen),
                        ev.p.qis, search=found)
        if not dry_run:
            report.outputs = write_output(chosen, ds, ev, node)
        return report

    try:
        problem = problem_for(spec, ds)
        with Evaluator(problem) as ev:
            levels, found = search_spec(spec, ev, strategy=strategy, metric=metric,
                                        time_limit=time_limit, progress=progress)
            if found["evaluated_in"] == "sql":  # the raw frequency table is there: reuse it
                return finish(ev, levels, found)
        # searched in memory: one generalizing scan checks the chosen node, as `check` does
        with Evaluator(problem, scan_levels=levels) as ev:
            return finish(ev, levels, found)
    finally:
        ds.close()
