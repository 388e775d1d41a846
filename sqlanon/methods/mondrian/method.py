"""``method: mondrian``: ``check``, ``apply`` and ``compile`` (docs/local-recoding.md#mondrian).

The partitioning runs in the database round by round (:mod:`sqlanon.methods.mondrian.partitioning`);
the released rows are one SELECT that the writer writes like any other output: a strict
partitioning's SQL is a CASE over the cuts (every output mode, ``compile`` included; a table made in
memory joins its tuples' boxes instead); a relaxed one reads the run's work table (table, in place),
or, as a view or printed SQL, its kept ranges of row positions (``<output name>__groups``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sqlanon.methods.base import Method, Plan, Release, Sink, refusal, register

if TYPE_CHECKING:
    from sqlanon.compile.released import OutputQuery
    from sqlanon.methods.dataset import Dataset
    from sqlanon.methods.mondrian.pipeline import Mondrian
    from sqlanon.methods.mondrian.result import MondrianReport
    from sqlanon.spec.schema import Spec
    from sqlanon.sql.dialects import DialectProfile


class MondrianRelease(Release):
    """Rows of a Mondrian partitioning; ``before`` sees it before anything is written."""

    suppression = False  # no row is suppressed

    def __init__(self, spec: Spec, before: Any = None, *, standalone: bool = False) -> None:
        self.spec = spec
        self.standalone = standalone
        """The SQL is printed (``compile``): it reads nothing the run makes."""
        self.before = before or (lambda m: None)
        self.mondrian: Mondrian | None = None
        self.ds: Dataset | None = None
        self.labelled: str | None = None
        """A temporary table of the tuples' boxes (a strict partitioning made in memory, written here)."""
        self.runs: Any = None
        """The kept table of a relaxed partitioning's position ranges (a view or printed SQL)."""

    def prepare(self, ds: Dataset, *, keep: str | None = None) -> None:
        from sqlanon.engines.base import internal_name
        from sqlanon.methods.mondrian import pipeline, released

        self.ds = ds
        self.mondrian = pipeline.partition(self.spec, ds, self.spec.settings, keep_work=True)
        self.before(self.mondrian)
        if keep is not None:
            from sqlanon.methods.mondrian import positions
            from sqlanon.sql.nodes import table

            ds.engine.create_table_as(keep, positions.runs_query(ds, self.mondrian), schema=ds.schema)
            self.runs = table(keep, ds.schema)
        elif self.mondrian.result.tuples is not None and not self.standalone and \
                self.spec.output.mode in ("table", "in_place"):
            self.labelled = internal_name("mondrian_boxes")
            ds.engine.create_table_from_arrow(self.labelled, released.labelled_tuples(self.mondrian),
                                              temporary=True)

    def query(self, target: DialectProfile) -> OutputQuery:
        from sqlanon.methods.mondrian import pipeline
        from sqlanon.sql.nodes import table

        assert self.mondrian is not None and self.ds is not None
        return pipeline.output_query(self.spec, self.ds, self.mondrian, target,
                                     labelled=table(self.labelled) if self.labelled else None,
                                     runs=self.runs)

    def close(self, ds: Dataset) -> None:
        if self.mondrian is not None and self.mondrian.result.work:
            ds.engine.drop(self.mondrian.result.work)
        if self.labelled is not None:
            ds.engine.drop(self.labelled)
            self.labelled = None


def _report(m: Mondrian) -> MondrianReport:
    from sqlanon.methods.mondrian.result import MondrianReport

    r = m.result
    return MondrianReport(m.summary(), r.rows, m.settings.k, len(r.partitions), m.classes,
                          min((p.rows for p in r.partitions), default=0), r.rounds, r.queries, m.metrics())


@register
class MondrianMethod(Method):
    name = "mondrian"
    needs_hierarchies = False

    def transformation_keys(self) -> tuple[str, ...]:
        from sqlanon.methods.mondrian.settings import MONDRIAN_KEYS

        return MONDRIAN_KEYS

    def settings(self, spec: Spec) -> Any:
        from sqlanon.methods.mondrian.settings import mondrian_settings

        t = spec.transformation
        return mondrian_settings(t.options, spec.privacy, (t.suppression_limit, t.suppressed), t.levels)

    def check_spec(self, spec: Spec) -> None:
        self.settings(spec)

    def keeps_table(self, spec: Spec) -> bool:
        """A relaxed partitioning written as a view or printed SQL reads its rows' position ranges."""
        return not spec.settings.strict and spec.output.mode in ("view", "sql")

    def kept_table_reader(self, spec: Spec) -> str:
        return "a relaxed mondrian partitioning"

    def refuse(self, plan: Plan) -> None:
        from sqlanon.errors import UnsupportedError

        if plan.verb == "anonymize":
            raise UnsupportedError("anonymize searches generalization levels; mondrian has none to search: "
                                   "run `apply` (or `check`)")
        settings = plan.spec.settings
        if not settings.strict and plan.verb == "compile":
            raise refusal(plan.spec, "a relaxed partitioning splits rows of equal values by their order, so "
                          "its SQL reads the run's ranges of row positions: run `apply` with output mode "
                          "view or sql, or use mode: strict, whose SQL stands alone",
                          "transformation.mode")

    def run(self, plan: Plan, ds: Dataset, sink: Sink) -> Any:
        with ds.engine.purpose(f"mondrian ({plan.verb})"):
            if plan.verb == "compile":
                return _compile(plan, ds, sink)
            if plan.verb == "apply" and plan.writes:
                return _apply(plan, ds, sink)
            return _check(plan, ds)


def _check(plan: Plan, ds: Dataset) -> MondrianReport:
    from sqlanon.methods.mondrian import pipeline

    return _report(pipeline.partition(plan.spec, ds, plan.spec.settings))


def _apply(plan: Plan, ds: Dataset, sink: Sink) -> MondrianReport:
    reports: list[MondrianReport] = []
    release = MondrianRelease(plan.spec, before=lambda m: reports.append(_report(m)))
    try:
        outputs = sink.write(ds, release)
    finally:
        release.close(ds)
    reports[0].outputs = outputs
    return reports[0]


def _compile(plan: Plan, ds: Dataset, sink: Sink) -> str:
    release = MondrianRelease(plan.spec, standalone=True)
    release.prepare(ds)
    try:
        return sink.compile(ds, release)
    finally:
        release.close(ds)
