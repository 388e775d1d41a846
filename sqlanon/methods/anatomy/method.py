"""``method: anatomy``: ``check``, ``apply`` and ``compile`` (docs/local-recoding.md#anatomy).

Two relations are released: the quasi-identifier table (QIT, the output: every column but the
sensitive one, and the group id) and the sensitive table (ST: group id, sensitive value, count),
written beside it by the sink's :meth:`~sqlanon.methods.base.Sink.beside` in the same mode. Both are
one SELECT over the source (:mod:`.assign`), so every output mode and ``compile`` work on every
engine; the sensitive table is written first (an in-place QIT replaces the source it reads).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sqlanon.methods.base import Method, Plan, Release, Sink, register

if TYPE_CHECKING:
    from sqlanon.compile.released import OutputQuery
    from sqlanon.methods.anatomy.groups import Grouping
    from sqlanon.methods.anatomy.result import AnatomyReport
    from sqlanon.methods.dataset import Dataset
    from sqlanon.spec.schema import Spec
    from sqlanon.sql.dialects import DialectProfile


class AnatomyRelease(Release):
    """One of the two relations; ``sensitive`` picks the sensitive table."""

    suppression = False  # Anatomy suppresses nothing

    def __init__(self, spec: Spec, grouping: Grouping, *, sensitive: bool) -> None:
        self.spec = spec
        self.grouping = grouping
        self.sensitive = sensitive

    def query(self, target: DialectProfile) -> OutputQuery:
        return self.grouping.sensitive_table(target) if self.sensitive \
            else self.grouping.quasi_identifier_table(self.spec, target)


@register
class Anatomy(Method):
    name = "anatomy"
    needs_hierarchies = False

    def transformation_keys(self) -> tuple[str, ...]:
        from sqlanon.methods.anatomy.settings import ANATOMY_KEYS

        return ANATOMY_KEYS

    def settings(self, spec: Spec) -> Any:
        from sqlanon.methods.anatomy.settings import anatomy_settings

        return anatomy_settings(spec)

    def check_spec(self, spec: Spec) -> None:
        self.settings(spec)

    def refuse(self, plan: Plan) -> None:
        if plan.verb == "anonymize":
            from sqlanon.errors import UnsupportedError

            raise UnsupportedError("anonymize searches generalization levels; Anatomy has none to "
                                   "search: run `apply` (or `check`)")

    def run(self, plan: Plan, ds: Dataset, sink: Sink) -> Any:
        from sqlanon.methods.anatomy.groups import assigned_once, group_rows, sensitive_sink

        verb = "compile_sql" if plan.verb == "compile" else plan.verb
        with ds.engine.purpose(f"anatomy ({verb.replace('_', ' ')})"):
            beside = sensitive_sink(plan, ds, sink) if plan.writes else None
            grouping = group_rows(plan.spec, ds)
            if beside is None:
                return _report(grouping, {})
            qit = AnatomyRelease(plan.spec, grouping, sensitive=False)
            st = AnatomyRelease(plan.spec, grouping, sensitive=True)
            if plan.verb == "compile":
                return beside.compile(ds, st).rstrip() + "\n\n" + sink.compile(ds, qit)
            report = _report(grouping, {})
            sink.before_write(report)
            if plan.spec.output.mode not in ("table", "in_place"):  # read later: assigns the rows itself
                return _write(report, ds, sink, beside, qit, st)
            with assigned_once(grouping, ds) as kept:
                qit.grouping = st.grouping = kept
                return _write(report, ds, sink, beside, qit, st)


def _write(report: AnatomyReport, ds: Dataset, sink: Sink, beside: Sink, qit: AnatomyRelease,
           st: AnatomyRelease) -> AnatomyReport:
    """The sensitive table first: an in-place QIT replaces the source it reads."""
    written = beside.write(ds, st)
    report.outputs = {**sink.write(ds, qit), "sensitive_table": written}
    return report


def _report(grouping: Grouping, outputs: dict[str, Any]) -> AnatomyReport:
    from sqlanon.methods.anatomy.result import AnatomyReport

    s = grouping.structure
    smallest, largest = s.group_sizes()
    return AnatomyReport(grouping.settings.summary(), s.rows, s.l, s.groups, smallest, largest,
                         len(s.sizes), len(s.residue), outputs=outputs)
