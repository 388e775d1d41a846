"""``check``, ``apply`` and ``compile`` for ``method: microaggregation`` (called by :mod:`sqlanon.api`)."""

from __future__ import annotations

from sqlanon.sql.dialects import profile
from sqlanon.methods.dataset import Dataset
from sqlanon.methods.microaggregation import pipeline
from sqlanon.methods.microaggregation.report import MicroaggregationReport
from sqlanon.outputs import modes
from sqlanon.outputs.preflight import OutputPlan


def _report(ds: Dataset, m: pipeline.Masking, with_metrics: bool) -> MicroaggregationReport:
    metrics = pipeline.quality(ds, m) if with_metrics else {}
    return MicroaggregationReport(m.summary(), m.rows, m.settings.k, m.groups, m.min_group_size,
                                  m.max_group_size, metrics, warnings=list(m.warnings))


def check(spec, ds: Dataset, *, metrics: bool = True, progress: bool = False) -> MicroaggregationReport:
    """Group the rows (nothing is written) and report the achieved k and the metrics."""
    with pipeline.temporary_masking(spec, ds, progress=progress) as m:
        return _report(ds, m, metrics)


def apply(spec, ds: Dataset, *, metrics: bool = True, dry_run: bool = False,
          progress: bool = False, plan: OutputPlan | None = None) -> MicroaggregationReport:
    """Write the output (unless ``dry_run``) and report; the metrics compare the released rows with
    the source as it was before the write (``in_place`` replaces it). ``plan``: the output as
    checked before anything was scanned."""
    if dry_run:
        return check(spec, ds, metrics=metrics, progress=progress)
    from sqlanon.outputs.microaggregation import write

    reports: list[MicroaggregationReport] = []
    m, outputs = write(spec, ds, progress=progress, before=lambda m: reports.append(_report(ds, m, metrics)),
                       plan=plan)
    pipeline.drop_group_table(ds, m)
    reports[0].outputs = outputs
    return reports[0]


def compile_sql(spec, ds: Dataset, dialect: str, plan: OutputPlan | None = None) -> str:
    """The SQL of the spec's output mode for ``dialect``; SQL methods only (pulled algorithms read a
    group table that only ``apply`` creates). ``plan``: the output names as checked for ``dialect``."""
    pipeline.refuse_compile(spec.microaggregation)
    with pipeline.temporary_masking(spec, ds) as m:
        target = profile(dialect)
        return modes.compile_script(spec, pipeline.output_query(spec, m, target), target,
                                    source_name=ds.name, schema=ds.schema)
