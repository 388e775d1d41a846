"""The Python API: the same verbs as the command line. Orchestration only."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlanon.methods.dataset import Dataset, open_dataset, problem_for
from sqlanon.engines.base import Engine
from sqlanon.methods.generalization.evaluator import Evaluator, NodeCheck
from sqlanon.domain.metrics import MetricContext, get_metric
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
    spec: Spec | None = field(default=None, repr=False)
    """For ``anonymize``: the input spec (:meth:`write_spec` re-emits it with the chosen levels)."""
    written_spec: str | None = None
    """Where :meth:`write_spec` wrote the chosen spec."""
    metric_details: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Per metric: the rows it counts (``rows``; ``population`` ``table`` or, for ARX's quality models
    under δ-presence, ``research subset``) and, for metrics with two ARX variants, which one."""

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
        search = {k: v for k, v in self.search.items() if k != "ranked"}
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
                     spec: Spec, details: dict[str, dict[str, Any]] | None = None) -> dict[str, float]:
    """The metrics' values; ``details`` receives, per metric, the rows it counts (and its variant)."""
    weights = {a: spec.attributes[a].weight for a in ev.p.qis}
    ctx = MetricContext(ev, node, weights, spec.metric_options)
    values = {}
    with ev.engine.purpose("metrics"):
        for name in names:
            metric = get_metric(name, "metrics", spec.metric_options)
            values[name] = metric.compute(ctx)
            if details is not None:
                details[name] = ctx.counted(metric)
    return values


def measured(node: NodeCheck, names: tuple[str, ...], ev: Evaluator, spec: Spec, qis: list[str],
             **extra: Any) -> Report:
    """The report of a checked node with its metrics and which rows each counts."""
    details: dict[str, dict[str, Any]] = {}
    metrics = evaluate_metrics(names, ev, node, spec, details)
    return Report(node, metrics, qis, metric_details=details, **extra)


def _require_rows(spec: Spec, ds: Dataset) -> None:
    """Refuse a source without rows.

    An empty table is an error rather than trivially anonymous: there is nothing to release, and
    every figure of the report (suppression limit, loss, class sizes) is a ratio over no rows.
    """
    from sqlglot import exp

    from sqlanon.errors import SpecError

    with ds.engine.purpose("count the source's rows"):
        _, rows = ds.engine.fetch(exp.select(exp.Literal.number(1)).from_(ds.relation.copy()).limit(1))
    if not rows:
        where = "source.file" if spec.source.file else "source.table"
        raise SpecError(f"{ds.name!r} has no rows: there is nothing to anonymize", path=where,
                        source=spec.path)


@contextlib.contextmanager
def _checked_node(spec: Spec, engine: Engine | None, database: str | None,
                  before: Callable[[Dataset], Any] | None = None
                  ) -> Iterator[tuple[Dataset, Evaluator, NodeCheck, Any]]:
    """Open the source, run ``before`` on it (the output checks, before any scan), check the spec's
    node with one generalizing scan, and clean up after."""
    ds = open_dataset(spec, engine, database=database)
    try:
        ahead = before(ds) if before else None  # the output is checked before the source is read
        _require_rows(spec, ds)
        problem = problem_for(spec, ds)
        levels = levels_of(spec, problem.qis)
        with ds.engine.purpose("class statistics"):
            ev = Evaluator(problem, scan_levels=levels)
        with ev:
            with ds.engine.purpose("class statistics"):
                node = ev.check(levels, spec.transformation.suppression_limit)
            yield ds, ev, node, ahead
    finally:
        ds.close()


def _microaggregation(spec: Spec, engine: Engine | None, database: str | None, verb: str,
                      before: Callable[[Dataset], Any] | None = None, **options: Any) -> Any:
    """``method: microaggregation``: the verb of :mod:`sqlanon.methods.microaggregation.verbs` on the opened
    source (``before`` runs first and its result is passed on as ``plan``)."""
    from sqlanon.methods.microaggregation import verbs

    ds = open_dataset(spec, engine, database=database)
    try:
        if before is not None:
            options["plan"] = before(ds)
        _require_rows(spec, ds)
        with ds.engine.purpose(f"microaggregation ({verb.replace('_', ' ')})"):
            return getattr(verbs, verb)(spec, ds, **options)
    finally:
        ds.close()


def _output_plan(spec: Spec, dialect: str | None = None) -> Callable[[Dataset], Any]:
    """The pre-flight output check of a verb that writes (``dialect`` None) or compiles for ``dialect``."""
    from sqlanon.sql.dialects import profile
    from sqlanon.outputs.preflight import plan_output

    if dialect is None:
        return lambda ds: plan_output(spec, ds)
    return lambda ds: plan_output(spec, ds, profile(dialect), writing=False)


def _check_before_opening(spec: Spec, engine: Engine | None, database: str | None) -> None:
    from sqlanon.outputs.preflight import check_before_opening

    check_before_opening(spec, engine, database)


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
    with _checked_node(spec, engine, database) as (_, ev, node, _):
        return measured(node, _metric_names(spec, metrics), ev, spec, ev.p.qis)


def apply(spec: Spec | str, *, engine: Engine | None = None, database: str | None = None,
          metrics: tuple[str, ...] | None = None, dry_run: bool = False, progress: bool = False) -> Any:
    """Check the transformation and write the spec's output (table, view, in place, or SQL).

    ``progress`` draws a progress line on a terminal for long microaggregations.
    """
    from sqlanon.outputs import write_output

    spec = _spec(spec)
    if not dry_run:
        _check_before_opening(spec, engine, database)
        _check_subset_output(spec, compiled=False)
    plan = None if dry_run else _output_plan(spec)
    if spec.transformation.method == "microaggregation":
        return _microaggregation(spec, engine, database, "apply", plan, metrics=metrics != (),
                                 dry_run=dry_run, progress=progress)
    if spec.transformation.method == "noise":
        from sqlanon.methods.perturbation.apply import apply_noise

        return apply_noise(spec, engine=engine, database=database, dry_run=dry_run,
                           quality=metrics != ())
    with _checked_node(spec, engine, database, plan) as (ds, ev, node, checked):
        report = measured(node, _metric_names(spec, metrics), ev, spec, ev.p.qis)
        if not dry_run:
            with ds.engine.purpose("write the output"):
                report.outputs = write_output(spec, ds, ev, node, checked)
        return report


def _check_subset_output(spec: Spec, *, compiled: bool) -> None:
    """A research subset read from a file lives in a temporary table: refused where the output
    would outlive the connection (a view, printed SQL)."""
    from sqlanon.domain.models.presence import require_lasting_subset

    require_lasting_subset(spec.privacy, portable=compiled or spec.output.mode in ("view", "sql"))


def open_source(spec: Spec | str, *, engine: Engine | None = None, database: str | None = None
                ) -> Dataset:
    return open_dataset(_spec(spec), engine, database=database)


def compile_sql(spec: Spec | str, *, engine: Engine | None = None, database: str | None = None,
                dialect: str | None = None, offline: bool | None = None) -> str:
    """The spec's transformation as SQL for ``dialect`` (default ``output.dialect``); see
    :func:`compile_spec`, which also says what could not be verified without a connection."""
    return compile_spec(spec, engine=engine, database=database, dialect=dialect, offline=offline).sql


def compile_spec(spec: Spec | str, *, engine: Engine | None = None, database: str | None = None,
                 dialect: str | None = None, offline: bool | None = None) -> Any:
    """The SQL of the spec's output mode for ``dialect`` (a ``CompiledSQL``: ``sql``, ``unverified``).

    With a connection (``engine``, ``database``, ``source.database`` or a file source) the source is
    checked first: columns, types, hierarchy coverage, and that the transformation is anonymous.
    Without one (``offline=True``, or nothing to connect to) the SQL is built from the spec alone
    for a fixed transformation; it decides suppression and the suppression limit itself, and
    ``unverified`` (also a comment at the top of the SQL) lists what it could not check.
    """
    from sqlanon.outputs import compile_output_sql
    from sqlanon.outputs.offline import CompiledSQL, compile_offline, refuse_search

    spec = _spec(spec)
    dialect = dialect or spec.output.dialect
    refuse_search(spec)
    if spec.transformation.method == "noise":
        from sqlanon.errors import SpecError

        raise SpecError("compile prints the SQL of a fixed transformation; noise is drawn when the "
                        "output is written, so there is no SQL to print: run apply",
                        path="transformation.method", source=spec.path)
    if offline is None:
        offline = engine is None and not (database or spec.source.database or spec.source.file)
    if offline:
        return compile_offline(spec, dialect)
    if spec.transformation.method == "microaggregation":
        return CompiledSQL(_microaggregation(spec, engine, database, "compile_sql",
                                             _output_plan(spec, dialect), dialect=dialect))
    _check_subset_output(spec, compiled=True)
    with _checked_node(spec, engine, database, _output_plan(spec, dialect)) as (ds, ev, node, _):
        return CompiledSQL(compile_output_sql(spec, ds, ev, node, dialect))


def anonymize(spec: Spec | str, *, engine: Engine | None = None, database: str | None = None,
              strategy: str | None = None, metric: str | None = None,
              metrics: tuple[str, ...] | None = None, dry_run: bool = False,
              time_limit: float | None = None, progress: bool = False,
              write_spec: str | os.PathLike[str] | None = None) -> Report:
    """Search the lattice for the transformation of least information loss, then write the output.

    ``strategy`` and ``metric`` default to ``transformation.search`` (``optimal``) and
    ``transformation.metric`` (``loss``). With ``time_limit`` (seconds; default
    ``transformation.time_limit``) the search may stop early with the best node found so far; the
    report's ``search.complete`` and ``search.optimal`` then say so. ``progress`` draws a progress line
    on a terminal for searches that take more than a second. ``write_spec`` names a file to write
    the spec with the chosen levels to (:meth:`Report.write_spec`), before the output is written.
    """
    from sqlanon.methods.generalization.search.run import search_spec, with_levels
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
        _check_before_opening(spec, engine, database)
        _check_subset_output(spec, compiled=False)
    if write_spec is not None:
        from sqlanon.spec.chosen import destination

        destination(spec, write_spec)  # a bad path is found before the search
    ds = open_dataset(spec, engine, database=database)
    plan = None

    def finish(ev: Evaluator, levels: dict[str, int], found: dict[str, Any]) -> Report:
        chosen = with_levels(spec, levels)
        with ds.engine.purpose("class statistics"):
            node = ev.check(levels, spec.transformation.suppression_limit)
        report = measured(node, _metric_names(chosen, metrics), ev, chosen, ev.p.qis, search=found)
        report.spec = spec
        if write_spec is not None:
            report.write_spec(write_spec)
        if not dry_run:
            with ds.engine.purpose("write the output"):
                report.outputs = write_output(chosen, ds, ev, node, plan)
        return report

    try:
        if not dry_run:
            plan = _output_plan(spec)(ds)
        _require_rows(spec, ds)
        problem = problem_for(spec, ds)
        with Evaluator(problem) as ev:
            with ds.engine.purpose("search"):
                levels, found = search_spec(spec, ev, strategy=strategy, metric=metric,
                                            time_limit=time_limit, progress=progress)
            if found["evaluated_in"] == "sql":  # the raw frequency table is there: reuse it
                return finish(ev, levels, found)
        # searched in memory: one generalizing scan checks the chosen node, as `check` does
        with ds.engine.purpose("class statistics"):
            ev = Evaluator(problem, scan_levels=levels)
        with ev:
            return finish(ev, levels, found)
    finally:
        ds.close()
