"""``heuristic: batch_cover`` on the engine: the frequency table as a units table, the heuristic's
rounds (:mod:`.batch_cover`) and the measures of the report; the units table stays on the engine for
the output (:mod:`.units_output`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlanon.errors import SpecError
from sqlanon.methods.local_suppression import batch_cover, units_output, units_sql
from sqlanon.methods.local_suppression.queries import COUNT, Rows, frequency_query, value

if TYPE_CHECKING:
    from sqlanon.engines.base import Engine
    from sqlanon.methods.local_suppression.settings import LocalSuppressionSettings


def batched(s: LocalSuppressionSettings, rows: Rows, engine: Engine, source: str | None
            ) -> tuple[units_sql.Units, units_output.UnitMeasures]:
    """Run the heuristic; the units table (the caller drops it) and its measures."""
    d = len(rows.qis)
    if d > batch_cover.MAX_WIDTH:
        raise SpecError(f"heuristic batch_cover takes up to {batch_cover.MAX_WIDTH} quasi-identifiers "
                        f"(it counts every pattern of cells, 2^{d} here); use heuristic rounds",
                        path="transformation.heuristic", source=source)
    units = units_sql.start(engine, frequency_query(rows), [value(i) for i in range(d)], COUNT)
    try:
        with engine.scratch_statements():
            batch_cover.run(units, s.k, s.alpha, [s.weight(a) for a in rows.qis])
            return units, units_output.measures(units, s.alpha)
    except BaseException:
        units.drop_kept()
        engine.drop(units.name)
        raise
