"""``heuristic: batch_cover`` on the engine: the frequency table as a units table, the heuristic's
rounds (:mod:`.batch_cover`), the measures of the report; the units table stays on the engine for the
output (:mod:`.units_output`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlanon.errors import SpecError
from sqlanon.methods.local_suppression import batch_cover, units_output, units_sql
from sqlanon.methods.local_suppression.queries import COUNT, Rows, frequency_query, value

if TYPE_CHECKING:
    from sqlanon.engines.base import Engine
    from sqlanon.methods.local_suppression.method import Suppressed
    from sqlanon.methods.local_suppression.settings import LocalSuppressionSettings
    from sqlanon.spec.schema import Spec


def batched(spec: Spec, s: LocalSuppressionSettings, rows: Rows, engine: Engine) -> Suppressed:
    from sqlanon.methods.local_suppression.method import Suppressed, _enough_rows, _report

    d = len(rows.qis)
    if d > batch_cover.MAX_WIDTH:
        raise SpecError(f"heuristic batch_cover takes up to {batch_cover.MAX_WIDTH} quasi-identifiers "
                        f"(it counts every pattern of cells, 2^{d} here); use heuristic rounds",
                        path="transformation.heuristic", source=spec.path)
    weights = [s.weight(a) for a in rows.qis]
    units = units_sql.start(engine, frequency_query(rows), [value(i) for i in range(d)], COUNT)
    try:
        with engine.scratch_statements():
            batch_cover.run(units, s.k, s.alpha, weights)
            m = units_output.measures(units, s.alpha)
        _enough_rows(spec, s, m.rows)
    except BaseException:
        units.drop_kept()
        engine.drop(units.name)
        raise
    report = _report(spec, s, rows.qis, m.rows, m.combinations, m.cells, m.rows_touched, m.achieved_k,
                     float(sum(w * c for w, c in zip(weights, m.cells))), False, [])
    return Suppressed(rows, [], m.split, report, units=units)
