"""``method: generalization``: full-domain generalization with suppression (``check``, ``apply``,
``compile``), and the search for the best levels (``anonymize``)."""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlanon.methods.base import Method, Plan, Release, Sink, register
from sqlanon.spec.methods import METHODS
from sqlanon.spec.values import check_metric_name, choose

if TYPE_CHECKING:
    from sqlanon.compile.released import OutputQuery
    from sqlanon.methods.dataset import Dataset
    from sqlanon.methods.generalization.evaluator import Evaluator, NodeCheck
    from sqlanon.methods.generalization.local.run import Recoded
    from sqlanon.methods.generalization.result import Report
    from sqlanon.spec.schema import Spec, Transformation
    from sqlanon.sql.dialects import DialectProfile

SEARCH_KEYS = ("search", "metric", "time_limit", "recoding", "local_recoding")
"""The ``transformation`` keys besides levels and suppression (read by ``anonymize``, checked for
every verb)."""


@dataclass
class CheckedNode:
    """The spec's node checked on the opened source with one generalizing scan."""

    ds: Dataset
    evaluator: Evaluator
    node: NodeCheck


class NodeRelease(Release):
    """The rows of a checked node: generalized, suppressed per class, identifiers treated."""

    def __init__(self, spec: Spec, checked: CheckedNode, *, portable: bool | None = None) -> None:
        self.spec = spec
        self.checked = checked
        self.portable = spec.output.mode not in ("table", "in_place") if portable is None else portable
        """The statement outlives this connection (a view, printed SQL); by default, unless the
        output is a table written here."""

    def query(self, target: DialectProfile) -> OutputQuery:
        from sqlanon.methods.generalization.output_query import output_query, require_anonymous

        c, spec = self.checked, self.spec
        require_anonymous(c.node)
        return output_query(spec, c.ds.column_names, c.evaluator.p, c.node.levels,
                            c.node.suppression_limit, target, evaluator=c.evaluator,
                            enforce_limit=spec.output.mode != "view", portable=self.portable,
                            verdict=c.node.verdict, kept=c.node.rows - c.node.suppressed_rows,
                            dropped=c.node.suppressed_rows)


@contextlib.contextmanager
def checked_node(spec: Spec, ds: Dataset, *, labels: bool = True, row_keys: bool = False
                 ) -> Iterator[CheckedNode]:
    """Check the spec's node with one generalizing scan; the evaluator stays open inside.

    ``labels``: the caller reads the checked classes' labels (metrics, a report's figures); without,
    the scan may group by cheaper class keys (:class:`Evaluator`). ``row_keys``: an output written
    here reads the checked classes too: it picks their rows by key where the scan can list them,
    else it joins the classes on their labels."""
    from sqlanon.methods.generalization.evaluator import Evaluator
    from sqlanon.methods.generalization.problem import problem_for
    from sqlanon.methods.generalization.result import levels_of

    problem = problem_for(spec, ds)
    levels = levels_of(spec, problem.qis)
    with ds.engine.purpose("class statistics"):
        ev = Evaluator(problem, scan_levels=levels, scan_labels=labels, row_keys=row_keys)
    with ev:
        with ds.engine.purpose("class statistics"):
            node = ev.check(levels, spec.transformation.suppression_limit)
        yield CheckedNode(ds, ev, node)


@register
class Generalization(Method):
    name = "generalization"
    needs_hierarchies = True
    releases_several_tables = True
    fits_persons_to_classes = True
    compiles_offline = True

    def transformation_keys(self) -> tuple[str, ...]:
        return SEARCH_KEYS

    def check_transformation(self, transformation: Transformation) -> None:
        """The keys ``anonymize`` reads, checked for every verb; other methods' keys are refused."""
        from sqlanon.errors import SpecError

        o = transformation.options
        for key in o:
            if key == "weights":
                raise SpecError("attribute weights are set per attribute (attributes.<name>.weight), not "
                                "under transformation", path="transformation.weights")
            if key not in SEARCH_KEYS:
                others = [m for m in reversed(METHODS.names()) if m != self.name]
                readers = [m for m in others if key in METHODS.get(m).transformation_keys()] or others
                raise SpecError(f"applies to method {' or '.join(readers)}, not generalization",
                                path=f"transformation.{key}")
        if "search" in o:
            from sqlanon.spec.search import SEARCH_STRATEGIES

            choose(o["search"], SEARCH_STRATEGIES.names(), "transformation.search", "search strategy")
        if "time_limit" in o:
            t = o["time_limit"]
            if isinstance(t, bool) or not isinstance(t, (int, float)) or not math.isfinite(t) or t <= 0:
                raise SpecError(f"must be a number of seconds > 0, got {t!r}",
                                path="transformation.time_limit")
        if "metric" in o:
            check_metric_name(o["metric"], "transformation.metric")
        from sqlanon.methods.generalization.local.settings import local_recoding

        local_recoding(o)

    def check_privacy_unit(self, spec: Spec) -> None:
        """Persons are generalized and suppressed whole; a local recoding works on rows."""
        from sqlanon.methods.generalization.local.settings import recoding_of

        if recoding_of(spec.transformation.options) == "local":
            from sqlanon.errors import SpecError

            raise SpecError("recoding: local recodes rows, not persons; use the global recoding "
                            "(the default) with a privacy unit", path="transformation.recoding",
                            source=spec.path)
        unit = spec.privacy_unit
        if unit is not None and unit.one_class and spec.transformation.suppressed == "mask":
            from sqlanon.errors import SpecError

            raise SpecError("rule one_class suppresses whole persons; masked suppression releases their "
                            "rows: use suppressed: remove", path="transformation.suppressed",
                            source=spec.path)

    def keeps_table(self, spec: Spec) -> bool:
        """A local recoding written as a view or SQL text reads its steps table later."""
        from sqlanon.methods.generalization.local.settings import recoding_of

        return recoding_of(spec.transformation.options) == "local" and spec.output.mode in ("view", "sql")

    def kept_table_reader(self, spec: Spec) -> str:
        return "a local recoding"

    def refuse(self, plan: Plan) -> None:
        from sqlanon.methods.generalization.local.settings import recoding_of

        if recoding_of(plan.spec.transformation.options) == "local" and plan.verb != "anonymize":
            from sqlanon.errors import UnsupportedError

            raise UnsupportedError(f"recoding: local re-runs the search on the suppressed records, so it "
                                   f"runs with `anonymize`, not `{plan.verb}`")
        if plan.verb == "compile":
            _refuse_search(plan.spec)
            if not plan.option("offline"):
                _require_lasting_subset(plan.spec)

    def run(self, plan: Plan, ds: Dataset, sink: Sink) -> Any:
        from sqlanon.methods.generalization.result import measured, metric_names

        spec = plan.spec
        if plan.verb == "anonymize":
            return _anonymize(plan, ds, sink)
        # compile prints a statement that decides the classes itself: it reads only the node's counts
        metrics = metric_names(spec, plan.option("metrics")) if plan.verb != "compile" else ()
        labels = bool(metrics) or plan.option("observer") is not None or spec.privacy_unit is not None \
            or _masked_here(plan)
        with checked_node(spec, ds, labels=labels, row_keys=_written_here(plan)) as c:
            if plan.verb == "compile":
                return sink.compile(ds, NodeRelease(spec, c, portable=True))
            report = measured(c.node, metrics, c.evaluator, spec, c.evaluator.p.qis)
            _observe(plan, c)
            if plan.writes:
                with ds.engine.purpose("write the output"):
                    report.outputs = sink.write(ds, NodeRelease(spec, c))
            return report


def _anonymize(plan: Plan, ds: Dataset, sink: Sink) -> Report:
    """Search the lattice, check the chosen node in SQL, measure it, and write the output (with
    ``recoding: local``, the rows of ARX's local recoding from that node)."""
    from sqlanon.domain.metrics import get_metric
    from sqlanon.methods.generalization.evaluator import Evaluator
    from sqlanon.methods.generalization.local.settings import local_recoding
    from sqlanon.methods.generalization.problem import problem_for
    from sqlanon.methods.generalization.result import measured, metric_names
    from sqlanon.methods.generalization.search.fast import FastEvaluator, FastNodeEvaluator
    from sqlanon.methods.generalization.search.measure import MemoryMetrics
    from sqlanon.methods.generalization.search.run import search_nodes, with_levels

    spec = plan.spec
    local = local_recoding(spec.transformation.options)

    def finish(ev: Evaluator, levels: dict[str, int], found: dict[str, Any],
               recoded: Recoded | None = None, fast: FastEvaluator | None = None) -> Report:
        chosen = with_levels(spec, levels)
        with ds.engine.purpose("class statistics"):
            node = ev.check(levels, spec.transformation.suppression_limit)
        in_memory = MemoryMetrics(fast, levels).value if fast is not None and recoded is None else None
        report = measured(node, metric_names(chosen, plan.option("metrics")), ev, chosen, ev.p.qis,
                          in_memory=in_memory, search=found)
        report.spec = spec
        if recoded is not None:
            report.local_recoding = recoded.report
        _observe(plan, CheckedNode(ds, ev, node))
        sink.before_write(report)
        if plan.writes:
            release = _release(chosen, ds, ev, node, recoded)
            try:
                with ds.engine.purpose("write the output"):
                    report.outputs = sink.write(ds, release)
            finally:
                release.close(ds)
        return report

    problem = problem_for(spec, ds)
    recoded = None
    with Evaluator(problem) as ev:
        with ds.engine.purpose("search"):
            levels, found, nodes = search_nodes(spec, ev, strategy=plan.option("strategy"),
                                                metric=plan.option("metric"),
                                                time_limit=plan.option("time_limit"),
                                                progress=plan.option("progress", False))
            if local is not None:  # imported here: the local recoding's modules cost start-up time
                from sqlanon.methods.generalization.local.run import recode

                recoded = recode(spec, local, ev, nodes, levels, found, time_limit=plan.option("time_limit"))
        if found["evaluated_in"] == "sql":  # the raw frequency table is there: reuse it
            return finish(ev, levels, found)
        if problem.persons is not None:  # the person-level records are there: scan them
            with ds.engine.purpose("class statistics"):
                checked = Evaluator(problem, scan_levels=levels, persons=ev.counted)
            with checked:
                return finish(checked, levels, found, recoded)
    # searched in memory: one generalizing scan checks the chosen node, as `check` does; the search
    # read every row already, so the scan need not count them or look for values outside the hierarchies
    known = nodes.fast if isinstance(nodes, FastNodeEvaluator) else None
    # the classes' labels are read by a metric without an in-memory form, and by the HTML report
    labels = known is None or recoded is not None or plan.option("observer") is not None \
        or _masked_here(plan) or not all(
        MemoryMetrics.computes(known, get_metric(name, "metrics", spec.metric_options))
        for name in metric_names(with_levels(spec, levels), plan.option("metrics")))
    with ds.engine.purpose("class statistics"):
        ev = Evaluator(problem, scan_levels=levels, rows=known.n if known else None,
                       covered=known is not None, scan_labels=labels,
                       row_keys=recoded is None and _written_here(plan))
    with ev:
        return finish(ev, levels, found, recoded, known)


def _masked_here(plan: Plan) -> bool:
    """The verb writes a table here with suppressed rows masked: every row, joined to its class's
    verdict on the labels, which the check's scan must then hold."""
    spec = plan.spec
    return plan.verb != "compile" and plan.writes and spec.output.mode in ("table", "in_place") \
        and spec.transformation.suppressed == "mask"


def _written_here(plan: Plan) -> bool:
    """The verb writes a table here from the checked classes (not a view or printed SQL, which
    decide the classes themselves); masked suppression writes every row."""
    spec = plan.spec
    return plan.verb != "compile" and plan.writes and spec.output.mode in ("table", "in_place") \
        and spec.transformation.suppressed != "mask"


def _observe(plan: Plan, checked: CheckedNode) -> None:
    """Show the run's observer (the HTML report's figures) the checked node while it is open."""
    observer = plan.option("observer")
    if observer is not None:
        observer.checked(checked.ds, checked)


def _release(spec: Spec, ds: Dataset, ev: Evaluator, node: NodeCheck, recoded: Any) -> Release:
    if recoded is None:
        return NodeRelease(spec, CheckedNode(ds, ev, node))
    from sqlanon.methods.generalization.local.release import LocalRelease

    return LocalRelease(spec, ds.column_names, ev, recoded.fast, recoded.result,
                        portable=spec.output.mode not in ("table", "in_place"))


def _refuse_search(spec: Spec) -> None:
    """``compile`` prints a fixed transformation: a spec that asks for a search has none yet."""
    from sqlanon.errors import SpecError

    t = spec.transformation
    if "search" in t.options and not t.levels:
        raise SpecError("compile needs fixed levels, and a search needs the data: run `sqlanon anonymize "
                        "SPEC --write-spec CHOSEN.yml` (with --database), then compile CHOSEN.yml",
                        path="transformation.search", source=spec.path)


def _require_lasting_subset(spec: Spec) -> None:
    """A research subset read from a file lives in a temporary table: compiled SQL could not read it."""
    from sqlanon.domain.models.presence import require_lasting_subset

    require_lasting_subset(spec.privacy, portable=True)
