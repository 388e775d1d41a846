"""The Python API: the same verbs as the command line. Orchestration only.

Each verb builds a :class:`~sqlanon.methods.base.Plan` for the spec's method (from the method
registry, :data:`~sqlanon.spec.methods.METHODS`), lets the method refuse what it cannot do, and runs
the plan with the one runner (:func:`~sqlanon.methods.runner.run_plan`) and the output side
(:class:`~sqlanon.outputs.sink.OutputSink`, the one writer behind it).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from sqlanon.engines.base import Engine
from sqlanon.methods.base import Plan
from sqlanon.methods.dataset import Dataset, open_dataset
from sqlanon.methods.generalization.result import (
    DEFAULT_METRICS,
    Report,
    evaluate_metrics,
    levels_of,
    measured,
)
from sqlanon.methods.runner import run_plan
from sqlanon.outputs.sink import OutputSink
from sqlanon.spec.load import load_spec, spec_from_dict
from sqlanon.spec.schema import Spec

if TYPE_CHECKING:
    from sqlanon.outputs.in_memory import Result

__all__ = ["DEFAULT_METRICS", "Report", "anonymize", "apply", "check", "compile_spec", "compile_sql",
           "evaluate_metrics", "levels_of", "measured", "open_source", "risk"]


def _spec(spec: Spec | Mapping[str, Any] | str | os.PathLike[str]) -> Spec:
    if isinstance(spec, Spec):
        return spec
    return spec_from_dict(spec) if isinstance(spec, Mapping) else load_spec(spec)


def _plan(spec: Spec, verb: str, *, writes: bool = False, dialect: str | None = None,
          **options: Any) -> Plan:
    plan = Plan(spec.method, verb, spec, writes=writes, dialect=dialect, options=options)
    plan.method.refuse(plan)
    return plan


def _html_options(spec: Spec, html: Any, *, writes: bool) -> dict[str, Any]:
    """The run's observer that computes the HTML report's figures, when one is asked for."""
    if html is None or html is False:
        return {}
    from sqlanon.report.html.collect import Figures

    return {"observer": Figures(spec, writes=writes)}


def _with_html(report: Any, html: Any) -> Any:
    """The report, once its HTML page is written to ``html`` (a path)."""
    if html is not None and not isinstance(html, bool):
        from sqlanon.report.html import write

        write(report, html)
    return report


def _no_html(html: Any) -> None:
    if html is not None and html is not False:
        from sqlanon.errors import UnsupportedError

        raise UnsupportedError("the HTML report describes one table; a spec with `tables` writes none "
                               "(leave out --html)")


def _before_opening(spec: Spec, engine: Engine | None, database: str | None) -> None:
    """The checks of a verb that writes, before the source is opened: where a file source's output
    would go, a writable ``output.path``, and a research subset that outlives the session."""
    OutputSink.check_before_opening(spec, engine, database)
    if spec.output.mode in ("view", "sql"):  # δ-presence's module is imported only where it can refuse
        from sqlanon.domain.models.presence import require_lasting_subset

        require_lasting_subset(spec.privacy, portable=True)


def _tables(spec: Spec, verb: Any, engine: Engine | None, database: str | None, dry_run: bool,
            **options: Any) -> Any:
    """A spec with several tables: one person-level release written to every table."""
    from sqlanon.outputs.tables import release_tables

    if verb is not check:
        options["dry_run"] = dry_run
    return release_tables(spec, verb, engine=engine, database=database, writes=not dry_run, **options)


def _one_table(spec: Spec, what: str, instead: str = "remove `tables` to use it on the person table"
               ) -> None:
    if spec.tables:
        from sqlanon.errors import UnsupportedError

        raise UnsupportedError(f"{what} reads one table; {instead}")


def check(spec: Spec | str, *, engine: Engine | None = None, database: str | None = None,
          metrics: tuple[str, ...] | None = None, data: Any = None, against: str | None = None,
          html: str | os.PathLike[str] | bool | None = None) -> Any:
    """What the spec's source achieves under its transformation (levels and suppression limit; for
    microaggregation the groups, achieved k and information loss: a ``MicroaggregationReport``).

    ``data``: a table in memory (pandas or polars DataFrame, Arrow table or record batch reader) to
    check instead of the spec's source (docs/spec.md, in-memory data). ``html``: a file to write the
    HTML report to, or True to compute its figures for the report object's ``_repr_html_`` only
    (docs/report.md). ``against``: a previous release (a table or view): what intersecting the release
    the spec would publish now with it reveals (an ``IntersectionReport``, docs/republishing.md);
    nothing is written."""
    if against is not None:
        from sqlanon.methods.republication.against import check_against, refuse_data

        refuse_data(data)
        if html:
            from sqlanon.errors import UnsupportedError

            raise UnsupportedError("check --against writes no HTML report; leave out --html")
        spec = _spec(spec)
        _one_table(spec, "check --against")
        plan = _plan(spec, "apply", writes=True, metrics=metrics, against=against)
        return check_against(plan, against, OutputSink(spec), engine=engine, database=database)
    if data is not None:
        from sqlanon.outputs.in_memory import run_on_data

        return run_on_data(check, spec, data, engine=engine, database=database, writes=False,
                           metrics=metrics, html=html)
    spec = _spec(spec)
    if spec.tables:
        _no_html(html)
        return _tables(spec, check, engine, database, True, metrics=metrics)
    plan = _plan(spec, "check", metrics=metrics, **_html_options(spec, html, writes=False))
    return _with_html(run_plan(plan, OutputSink(spec), engine=engine, database=database), html)


def apply(spec: Spec | str, *, engine: Engine | None = None, database: str | None = None,
          metrics: tuple[str, ...] | None = None, dry_run: bool = False, progress: bool = False,
          data: Any = None, html: str | os.PathLike[str] | bool | None = None) -> Any:
    """Check the transformation and write the spec's output (table, view, in place, or SQL).

    ``progress`` draws a progress line on a terminal for long microaggregations. With ``data`` (a
    table in memory) the output comes back with the report as a :class:`Result`.
    """
    if data is not None:
        from sqlanon.outputs.in_memory import run_on_data

        return run_on_data(apply, spec, data, engine=engine, database=database, metrics=metrics,
                           dry_run=dry_run, progress=progress, html=html)
    spec = _spec(spec)
    if spec.tables:
        _no_html(html)
        return _tables(spec, apply, engine, database, dry_run, metrics=metrics)
    if not dry_run:
        _before_opening(spec, engine, database)
    plan = _plan(spec, "apply", writes=not dry_run, metrics=metrics, progress=progress,
                 **_html_options(spec, html, writes=not dry_run))
    return _with_html(run_plan(plan, OutputSink(spec), engine=engine, database=database), html)


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
    from sqlanon.outputs.offline import CompiledSQL, compile_offline

    spec = _spec(spec)
    _one_table(spec, "compile", "apply or anonymize with output.mode sql print every table's SQL")
    dialect = dialect or spec.output.dialect
    if offline is None:
        offline = engine is None and not (database or spec.source.database or spec.source.file)
    plan = _plan(spec, "compile", writes=True, dialect=dialect, offline=offline)
    if offline:
        return compile_offline(spec, dialect)
    sql = run_plan(plan, OutputSink(spec, dialect=dialect), engine=engine, database=database)
    return CompiledSQL(sql)


def anonymize(spec: Spec | str, *, engine: Engine | None = None, database: str | None = None,
              strategy: str | None = None, metric: str | None = None,
              metrics: tuple[str, ...] | None = None, dry_run: bool = False,
              time_limit: float | None = None, progress: bool = False,
              write_spec: str | os.PathLike[str] | None = None,
              data: Any = None, html: str | os.PathLike[str] | bool | None = None) -> Report | Result:
    """Search the lattice for the transformation of least information loss, then write the output.

    ``strategy`` and ``metric`` default to ``transformation.search`` (``optimal``) and
    ``transformation.metric`` (``loss``). With ``time_limit`` (seconds; default
    ``transformation.time_limit``) the search may stop early with the best node found so far; the
    report's ``search.complete`` and ``search.optimal`` then say so. ``progress`` draws a progress line
    on a terminal for searches that take more than a second. ``write_spec`` names a file to write
    the spec with the chosen levels to (:meth:`Report.write_spec`), before the output is written.
    With ``data`` (a table in memory) the output comes back with the report as a :class:`Result`.
    """
    if data is not None:
        from sqlanon.outputs.in_memory import run_on_data

        return run_on_data(anonymize, spec, data, engine=engine, database=database, strategy=strategy,
                           metric=metric, metrics=metrics, dry_run=dry_run, time_limit=time_limit,
                           progress=progress, write_spec=write_spec, html=html)
    spec = _spec(spec)
    if spec.tables:
        _no_html(html)
        return _tables(spec, anonymize, engine, database, dry_run, strategy=strategy, metric=metric,
                       metrics=metrics, time_limit=time_limit, progress=progress)
    plan = _plan(spec, "anonymize", writes=not dry_run, metrics=metrics, strategy=strategy,
                 metric=metric, time_limit=time_limit, progress=progress,
                 **_html_options(spec, html, writes=not dry_run))
    if not dry_run:
        _before_opening(spec, engine, database)
    if write_spec is not None:
        from sqlanon.spec.chosen import destination

        destination(spec, write_spec)  # a bad path is found before the search
    sink = OutputSink(spec, before_write=None if write_spec is None
                      else lambda report: report.write_spec(write_spec))
    return _with_html(run_plan(plan, sink, engine=engine, database=database), html)


def risk(spec: Spec | Mapping[str, Any] | str, *, engine: Engine | None = None,
         database: str | None = None, population: int | str | None = None,
         sampling_fraction: float | None = None, threshold: float | None = None,
         search: bool = False, sdcmicro: bool = False, weight: str | None = None, suda2: bool = False,
         suda2_max_size: int | None = None) -> Any:
    """The re-identification risk of the spec's table (all QIs at level 0) and, when the spec fixes
    levels (or ``search`` finds them, as ``anonymize`` without writing), of its release: ARX's
    sample figures and, given a population (a size, ``"usa"``, or a sampling fraction; default
    ``metrics.options``), the population-uniqueness estimates; with ``sdcmicro`` (or ``weight`` or
    ``suda2``), sdcMicro's individual and global risk (``weight``: the sampling-weight column,
    default ``metrics.options.sampling_weight``) and, with ``suda2``, SUDA2's special uniques up to
    ``suda2_max_size`` quasi-identifiers (default all)
    (a :class:`~sqlanon.report.risk.RiskReport`; docs/risk.md)."""
    import dataclasses

    from sqlanon.report.risk import risk_report
    from sqlanon.report.risk_sdc import SdcSettings

    spec = _spec(spec)
    _one_table(spec, "risk", "the person-level release's figures are in the report of anonymize")
    if search:
        found = anonymize(spec, engine=engine, database=database, dry_run=True)
        if not isinstance(found, Report):  # a Result comes back only for a table in memory
            from sqlanon.errors import InternalError

            raise InternalError(f"anonymize returned a {type(found).__name__}, not a Report")
        chosen = dataclasses.replace(spec.transformation, levels=dict(found.node.levels))
        spec = dataclasses.replace(spec, transformation=chosen)
    return risk_report(spec, engine=engine, database=database, population=population,
                       sampling_fraction=sampling_fraction, threshold=threshold, release=search,
                       sdc=SdcSettings(weight, (suda2_max_size or 0) if suda2 else None)
                       if sdcmicro or weight or suda2 else None)
