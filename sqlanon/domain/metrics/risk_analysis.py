"""The risk analysis of one table on its engine: one GROUP BY, every figure from the histogram.

:func:`analyze` reads the class-size histogram ``{size: number of classes}`` with a single query
(the classes of a relation's quasi-identifiers, or the kept classes of a checked node's verdict), so
the rows never leave the database; the sample figures and the population estimators
(:mod:`sqlanon.domain.risk`) then work on that small histogram.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sqlglot import exp

from sqlanon.domain.models.base import KEEP, SIZE
from sqlanon.sql.nodes import alias, col, count_star, internal

if TYPE_CHECKING:
    from sqlanon.domain.risk.analysis import RiskAnalysis
    from sqlanon.domain.risk.histogram import SizeHistogram
    from sqlanon.engines.base import Engine

_SIZE, _CLASSES = internal("risk_size"), internal("risk_classes")


def analyze(engine: Engine, relation_or_verdict: Any, qis: list[str] | None = None, *,
            population: int | None = None, threshold: float | None = None) -> RiskAnalysis:
    """The risk analysis of a relation (its classes over ``qis``) or of a checked node (an object
    with ``verdict`` and ``anonymous``: its released classes, suppressed ones excluded); ``threshold``
    defaults to :data:`~sqlanon.domain.risk.analysis.DEFAULT_THRESHOLD`."""
    # the estimators are imported here: the metrics registry imports this package's modules on every
    # run that measures a metric, and a run without risk figures need not load them
    from sqlanon.domain.risk.analysis import DEFAULT_THRESHOLD, of_histogram

    histogram = class_histogram(engine, relation_or_verdict, qis)
    return of_histogram(histogram, population=population,
                        threshold=DEFAULT_THRESHOLD if threshold is None else threshold)


def class_histogram(engine: Engine, relation_or_verdict: Any, qis: list[str] | None = None
                    ) -> SizeHistogram:
    """``{size: number of classes}`` with one query on the engine."""
    from sqlanon.domain.risk.histogram import SizeHistogram

    verdict = getattr(relation_or_verdict, "verdict", None)
    if verdict is not None:
        kept = col(KEEP) if relation_or_verdict.anonymous else exp.true()
        query = exp.select(alias(col(SIZE), _SIZE), alias(count_star(), _CLASSES)) \
            .from_(verdict.copy()).where(kept).group_by(col(SIZE))
    else:
        if not qis:
            raise ValueError("a relation's risk needs its quasi-identifiers")
        classes = exp.select(alias(count_star(), _SIZE)).from_(relation_or_verdict.copy()) \
            .group_by(*[col(q) for q in qis])
        query = exp.select(col(_SIZE), alias(count_star(), _CLASSES)) \
            .from_(exp.alias_(exp.Subquery(this=classes), internal("risk_c"), quoted=True)) \
            .group_by(col(_SIZE))
    _, rows = engine.fetch(query)
    return SizeHistogram.of({int(s): int(c) for s, c in rows})
