"""``method: microaggregation``: ``check``, ``apply`` and ``compile`` (docs/microaggregation.md).

The rows are grouped (:mod:`sqlanon.methods.microaggregation.pipeline`) and released as one SELECT
that the writer writes like any other output. Pulled algorithms read a group table: temporary for
``table`` and ``in_place``; kept as ``<output name>__groups`` for a view or printed SQL, which read it
later (the writer creates it and the view in one transaction).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sqlanon.methods.base import Method, Plan, Release, Sink, register

if TYPE_CHECKING:
    from collections.abc import Callable

    from sqlanon.compile.released import OutputQuery
    from sqlanon.methods.dataset import Dataset
    from sqlanon.methods.microaggregation.pipeline import Masking
    from sqlanon.methods.microaggregation.result import MicroaggregationReport
    from sqlanon.spec.schema import Spec
    from sqlanon.sql.dialects import DialectProfile

MICROAGGREGATION_KEYS = ("algorithm", "k", "attributes", "statistic", "projection", "block_by", "block_size",
                         "key", "centroid", "gamma", "seed", "t", "p", "q", "r", "attribute",
                         "distance", "order")
"""Every ``transformation`` key some microaggregation algorithm reads (docs/spec.md)."""


class MaskingRelease(Release):
    """Microaggregated rows; ``before`` sees the masking before anything is written (while the
    source is still the original, for the report's metrics)."""

    suppression = False  # microaggregation suppresses nothing

    def __init__(self, spec: Spec, *, progress: bool = False,
                 before: Callable[[Masking], None] | None = None, printed: bool = False) -> None:
        self.spec = spec
        self.standalone = printed or spec.output.mode in ("view", "sql")
        """Whether the SQL is read after the run (a view, printed SQL), so may not read working tables."""
        self.progress = progress
        self.before = before or (lambda m: None)
        self.masking: Masking | None = None

    def prepare(self, ds: Dataset, *, keep: str | None = None) -> None:
        from sqlanon.methods.microaggregation import pipeline

        if keep is not None:  # inside the writer's transaction: a failure leaves nothing
            m = pipeline.prepare(self.spec, ds, group_table=keep, group_schema=ds.schema,
                                 temporary=False, progress=self.progress)
            self.before(m)
            m.group_table = None  # kept: the output reads it
        else:
            m = pipeline.prepare(self.spec, ds, progress=self.progress, standalone=self.standalone)
            try:
                self.before(m)
            except BaseException:
                pipeline.drop_group_table(ds, m)
                raise
        self.masking = m

    def query(self, target: DialectProfile) -> OutputQuery:
        from sqlanon.methods.microaggregation import pipeline

        assert self.masking is not None
        return pipeline.output_query(self.spec, self.masking, target)

    def close(self, ds: Dataset) -> None:
        from sqlanon.methods.microaggregation import pipeline

        if self.masking is not None:
            pipeline.drop_group_table(ds, self.masking)


def _report(ds: Dataset, m: Masking, with_metrics: bool) -> MicroaggregationReport:
    from sqlanon.methods.microaggregation import pipeline
    from sqlanon.methods.microaggregation.persons import persons_figures
    from sqlanon.methods.microaggregation.result import MicroaggregationReport

    metrics = pipeline.quality(ds, m) if with_metrics else {}
    return MicroaggregationReport(m.summary(), m.rows, m.settings.k, m.groups, m.min_group_size,
                                  m.max_group_size, metrics, warnings=list(m.warnings),
                                  privacy_unit=persons_figures(ds, m))


@register
class Microaggregation(Method):
    name = "microaggregation"
    needs_hierarchies = False

    def transformation_keys(self) -> tuple[str, ...]:
        return MICROAGGREGATION_KEYS

    def settings(self, spec: Spec) -> Any:
        from sqlanon.methods.microaggregation.settings import microaggregation_settings

        t = spec.transformation
        return microaggregation_settings(t.options, {a.name: a.role for a in spec.attributes.values()},
                                         spec.privacy, t.levels,
                                         suppression=(t.suppression_limit, t.suppressed))

    def check_spec(self, spec: Spec) -> None:
        self.settings(spec)  # levels are refused first

    def check_privacy_unit(self, spec: Spec) -> None:
        from sqlanon.methods.microaggregation.persons import check_unit

        check_unit(spec)

    def keeps_table(self, spec: Spec) -> bool:
        """A microaggregation pulled into memory (not one SQL query), written as a view or SQL text,
        reads its group table later."""
        return spec.output.mode in ("view", "sql") and not spec.microaggregation.in_sql

    def kept_table_reader(self, spec: Spec) -> str:
        return f"algorithm {spec.microaggregation.algorithm}"

    def refuse(self, plan: Plan) -> None:
        if plan.verb == "anonymize":
            from sqlanon.errors import UnsupportedError

            raise UnsupportedError("anonymize searches generalization levels; a microaggregation has none "
                                   "to search: run `apply` (or `check`)")

    def run(self, plan: Plan, ds: Dataset, sink: Sink) -> Any:
        verb = "compile_sql" if plan.verb == "compile" else plan.verb
        with ds.engine.purpose(f"microaggregation ({verb.replace('_', ' ')})"):
            if plan.verb == "compile":
                return _compile(plan, ds, sink)
            if plan.verb == "apply" and plan.writes:
                return _apply(plan, ds, sink)
            return _check(plan, ds)


def _check(plan: Plan, ds: Dataset) -> MicroaggregationReport:
    """Group the rows (nothing is written) and report the achieved k and the metrics; a run's
    observer (the HTML report's figures) sees the released rows' SELECT while the groups exist."""
    from sqlanon.methods.microaggregation import pipeline

    with pipeline.temporary_masking(plan.spec, ds, progress=plan.option("progress", False)) as m:
        report = _report(ds, m, plan.option("metrics") != ())
        observer = plan.option("observer")
        if observer is not None:
            observer.checked(ds, pipeline.output_query(plan.spec, m, ds.engine.dialect))
        return report


def _apply(plan: Plan, ds: Dataset, sink: Sink) -> MicroaggregationReport:
    """Write the output and report; the metrics compare the released rows with the source as it was
    before the write (``in_place`` replaces it)."""
    reports: list[MicroaggregationReport] = []
    release = MaskingRelease(plan.spec, progress=plan.option("progress", False),
                             before=lambda m: reports.append(_report(ds, m, plan.option("metrics") != ())))
    outputs = sink.write(ds, release)
    release.close(ds)
    reports[0].outputs = outputs
    return reports[0]


def _compile(plan: Plan, ds: Dataset, sink: Sink) -> str:
    """The SQL of the spec's output mode; SQL methods only (pulled algorithms read a group table that
    only ``apply`` creates)."""
    from sqlanon.methods.microaggregation import pipeline

    pipeline.refuse_compile(plan.spec.microaggregation)
    release = MaskingRelease(plan.spec, printed=True)
    release.prepare(ds)
    try:
        return sink.compile(ds, release)
    finally:
        release.close(ds)
