"""A run with ``generalize_first: {search: optimal}``: every node the levels' search visits is one
run at those levels (a GROUP BY and the solver), then the best node's run is the result."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol, TypeVar

from sqlanon.methods.local_suppression import level_search

if TYPE_CHECKING:
    from sqlanon.methods.dataset import Dataset
    from sqlanon.methods.local_suppression.result import LocalSuppressionReport
    from sqlanon.methods.local_suppression.rounds_sql import Mapping
    from sqlanon.methods.local_suppression.settings import LocalSuppressionSettings
    from sqlanon.methods.local_suppression.units_sql import Units
    from sqlanon.spec.schema import Spec


class Run(Protocol):
    report: LocalSuppressionReport
    mapping: Mapping | None
    units: Units | None


R = TypeVar("R", bound=Run)


def searched(spec: Spec, ds: Dataset, s: LocalSuppressionSettings,
             suppressed: Callable[[Spec, Dataset, LocalSuppressionSettings], R]) -> R:
    """``suppressed``: one run at given settings."""
    assert s.cell_weight is not None
    order = ds.column_names
    qis = sorted(spec.quasi_identifiers, key=order.index)
    heights = {a: h.height for a in qis if (h := spec.attributes[a].hierarchy) is not None}

    def at(levels: dict[str, int]) -> R:
        return suppressed(spec, ds, dataclasses.replace(s, levels=levels, cell_weight=None))

    def evaluate(levels: dict[str, int]) -> tuple[dict[str, int], int]:
        done = at(levels)
        for table in (done.mapping, done.units):
            if table is not None:
                ds.engine.drop(table.name)
        return done.report.cells, done.report.rows

    result = level_search.search(heights, qis, evaluate, s.cell_weight)
    done = at(result.best.levels)
    done.report.transformation["levels"] = dict(result.best.levels)
    done.report.transformation["generalize_first"] = {
        "search": "optimal", "cell_weight": s.cell_weight, "objective": round(result.best.objective, 12),
        "generalization_loss": round(result.best.generalization, 12), "lattice": result.lattice,
        "evaluated": len(result.evaluated)}
    return done
