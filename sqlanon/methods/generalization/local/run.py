"""Local recoding inside ``anonymize``: after the global search, recode its suppressed records."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlanon.errors import UnsupportedError
from sqlanon.methods.generalization.local.iterate import LocalResult, recode_locally
from sqlanon.methods.generalization.local.quality import output_figures, steps_report
from sqlanon.methods.generalization.local.settings import LocalRecoding
from sqlanon.methods.generalization.search.fast import FastEvaluator, FastNodeEvaluator
from sqlanon.methods.generalization.search.run import search_settings

if TYPE_CHECKING:
    from sqlanon.methods.generalization.evaluator import Evaluator
    from sqlanon.methods.generalization.search.nodes import NodeEvaluator
    from sqlanon.spec.schema import Spec


@dataclass
class Recoded:
    """A local recoding's steps, the loaded table they ran on, and the report's section."""

    fast: FastEvaluator
    result: LocalResult
    report: dict[str, Any]


def recode(spec: Spec, settings: LocalRecoding, ev: Evaluator, nodes: NodeEvaluator, levels: dict[str, int],
           found: dict[str, Any], *, time_limit: float | None) -> Recoded:
    """Run the local recoding from the searched ``levels`` on the search's in-memory table."""
    if not isinstance(nodes, FastNodeEvaluator):
        raise UnsupportedError(
            f"local recoding searches the suppressed records in memory, and the search checked nodes in "
            f"SQL (metric {found['metric']!r} or a model has no in-memory form); use recoding: global, "
            "or a metric and models the in-memory search supports (docs/search.md)")
    _, _, limit = search_settings(spec, found["strategy"], found["metric"], time_limit)
    result = recode_locally(nodes, ev, [levels[a] for a in ev.p.qis], settings, metric=found["metric"],
                            metric_options=spec.metric_options,
                            weights={a: spec.attributes[a].weight for a in ev.p.qis},
                            strategy=found["strategy"], time_limit=limit)
    report = {
        **settings.as_dict(),
        "steps": steps_report(result, ev.p.qis),
        "stopped": result.stop,
        **({"steps_without_solution": result.failed} if result.failed else {}),
        "output": output_figures(ev, nodes.fast, result),
    }
    return Recoded(nodes.fast, result, report)
