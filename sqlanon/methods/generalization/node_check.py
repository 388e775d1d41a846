"""Check the privacy models on one node in SQL: per-class statistics, the verdict, and its totals."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlglot import exp

from sqlanon.compile import checks
from sqlanon.domain.models.base import (
    CheckContext,
    ClassSize,
    ModelResult,
    PrivacyModel,
    StatisticInputs,
    stat_attribute,
)
from sqlanon.errors import InternalError
from sqlanon.methods.generalization.temporaries import Temporaries
from sqlanon.sql.nodes import internal


def suppression_budget(limit: float, n: int) -> int:
    """floor(limit · n) computed in doubles, as ARX does (0.29 · 100 gives 28)."""
    return int(math.floor(float(limit) * n))


@dataclass
class NodeCheck:
    """The result of checking one node."""

    levels: dict[str, int]
    rows: int
    classes: int
    outlier_rows: int
    outlier_classes: int
    suppression_limit: float
    max_suppressed: int
    min_class_size: int | None
    min_class_size_all: int
    dm_star: int
    dm_kept: int
    models: list[ModelResult]
    verdict: exp.Table
    """The per-class relation (QIs, __sa_size, statistics, __sa_keep) while the evaluator lives."""

    @property
    def anonymous(self) -> bool:
        return self.outlier_rows <= self.max_suppressed

    @property
    def suppressed_rows(self) -> int:
        return self.outlier_rows if self.anonymous else 0


def check_node(inputs: StatisticInputs, temporaries: Temporaries, models: Sequence[PrivacyModel],
               gen: exp.Table, levels: dict[str, int], rows: int | None, suppression_limit: float, *,
               grouped: bool = False, weighted: bool = False, unfit: int = 0,
               carry: Sequence[str] = (), class_keys: bool = True) -> NodeCheck:
    """Materialize the node's histograms, statistics and verdict from ``gen`` (the source's frequency
    table at the node's levels) and read their totals; ``rows`` is the table's row count (None: the
    classes hold every row, as a scan of the whole table does);
    ``grouped``: ``gen`` has one row per class; ``unfit``: the persons left out of ``gen`` because
    their rows do not fit one class at the node (rule ``one_class``), suppressed; ``carry``: more
    columns of a grouped ``gen`` that the verdict keeps (a class's row keys); ``class_keys``: False
    when a grouped ``gen`` holds no quasi-identifier, only counts (every statistic the class size)."""
    qis = list(inputs.qis)
    statistics = checks.statistics_of(models)
    hist_attrs = sorted({a for s in statistics if (a := stat_attribute(s))})
    histograms = {
        a: temporaries.node(f"hist{i}", checks.histogram_query(gen, qis, a, inputs.value_order.get(a),
                                                               weighted=weighted))
        for i, a in enumerate(hist_attrs)
    }
    ctx = CheckContext(temporaries.plan, qis, gen, histograms, inputs.value_order,
                       inputs.sensitive_hierarchies, levels, inputs.column_types, inputs.attribute_types,
                       inputs.engine.dialect.sqlglot, inputs=inputs)  # its generalizer on first use
    # stats_query registers a "classes" step in the plan; it and the statistics are CTEs of the verdict
    stats = temporaries.plan.add("stats", checks.stats_query(ctx, statistics, grouped=grouped,
                                                                        carry=carry, class_keys=class_keys))
    # over a scan with one row a class and no statistic but the size, the verdict only projects it
    sizes_only = grouped and all(isinstance(s, ClassSize) for s in statistics)
    verdict = temporaries.node_reading_pending("verdict", checks.verdict_query(stats, models, statistics),
                                               view=sizes_only)
    s = inputs.engine.fetch_one(checks.summary_query(verdict, models, statistics))
    return _node_check(s, models, levels, rows, suppression_limit, verdict, unfit)


def _node_check(s: Mapping[str, Any], models: Sequence[PrivacyModel], levels: dict[str, int],
                table_rows: int | None, suppression_limit: float, verdict: exp.Table, unfit: int = 0
                ) -> NodeCheck:
    """The totals of :func:`~sqlanon.compile.checks.summary_query` as a :class:`NodeCheck`."""
    rows = int(s[internal("rows")] or 0) + unfit
    if table_rows is not None and rows != table_rows:
        raise InternalError(f"classes hold {rows} rows but the table has {table_rows}")
    outlier_rows = int(s[internal("outlier_rows")]) + unfit
    max_sup = suppression_budget(suppression_limit, rows)
    anonymous = outlier_rows <= max_sup
    results = []
    for i, m in enumerate(models):
        bad_rows = int(s[internal(f"bad_rows{i}")]) + unfit
        bad_classes = int(s[internal(f"bad_classes{i}")])
        key = internal(f"ach_kept{i}") if anonymous else internal(f"ach_all{i}")
        achieved = s.get(key)
        if isinstance(achieved, (int, float)) and not isinstance(achieved, bool):
            achieved = float(achieved) if not float(achieved).is_integer() or \
                isinstance(achieved, float) else int(achieved)
        results.append(ModelResult(m.label, anonymous or bad_rows == 0, achieved, bad_classes, bad_rows))
    classes_all = int(s[internal("classes_all")])
    kept = int(s[internal("kept_classes")])
    smallest = int(s[internal("min_all")] or 0)  # 0: no class (every person fits none, one_class)
    return NodeCheck(
        levels=levels, rows=rows, classes=kept if anonymous else classes_all,
        outlier_rows=outlier_rows, outlier_classes=classes_all - kept,
        suppression_limit=suppression_limit, max_suppressed=max_sup,
        min_class_size=(int(s[internal("min_kept")]) if s[internal("min_kept")] is not None else None)
        if anonymous else (smallest if classes_all else None),
        min_class_size_all=smallest,
        dm_star=int(s[internal("dm_star")] or 0), dm_kept=int(s[internal("dm_kept")] or 0),
        models=results, verdict=verdict)
