"""``method: local_suppression``: ``check``, ``apply`` and ``compile`` (docs/local-recoding.md).

One GROUP BY reads the frequency table of the (generalized) quasi-identifiers (only that table, one
row per combination, leaves the engine); the solver decides per combination which cells to suppress;
the released rows are one SELECT that joins every row to its combination's decision (an inline
VALUES relation), written by the writer in every output mode.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlanon.methods.base import Method, Plan, Release, Sink, refusal, register

if TYPE_CHECKING:
    from sqlanon.compile.released import OutputQuery
    from sqlanon.methods.dataset import Dataset
    from sqlanon.methods.local_suppression.queries import Decision, Rows
    from sqlanon.methods.local_suppression.result import LocalSuppressionReport
    from sqlanon.methods.local_suppression.rounds_sql import Mapping
    from sqlanon.methods.local_suppression.settings import LocalSuppressionSettings
    from sqlanon.methods.local_suppression.units_sql import Units
    from sqlanon.spec.schema import Spec
    from sqlanon.sql.dialects import DialectProfile


MAX_COMBINATIONS = 200_000
"""The frequency table the solvers read (one row per combination) is refused above this size."""


@dataclass
class Suppressed:
    """The decisions of a run and its report."""

    rows: Rows
    decisions: list[Decision]
    split: bool
    report: LocalSuppressionReport
    mapping: Mapping | None = None
    """The rounds' mapping table on the engine (the decisions are then read from it)."""
    units: Units | None = None
    """The ``batch_cover`` units table on the engine (the decisions are then read from it)."""
    kept: str | None = None
    """A temporary table of the decisions, read by an output written now."""


class CellRelease(Release):
    """The rows with their decided cells suppressed."""

    suppression = False  # no row is suppressed

    def __init__(self, spec: Spec, ds: Dataset, done: Suppressed) -> None:
        from sqlanon.compile.hash_text import parse_types

        self.spec = spec
        self.done = done
        self.types = parse_types(ds.columns, ds.engine.dialect.sqlglot)

    def query(self, target: DialectProfile) -> OutputQuery:
        from sqlanon.methods.local_suppression.queries import output_query

        marker = self.spec.settings.suppressed_value
        return output_query(self.spec, self.done.rows, self.done.decisions, self.done.split, target,
                            self.types, marker, self.done.kept)


@register
class LocalSuppression(Method):
    name = "local_suppression"
    needs_hierarchies = False

    def transformation_keys(self) -> tuple[str, ...]:
        from sqlanon.methods.local_suppression.settings import KEYS

        return KEYS

    def settings(self, spec: Spec) -> Any:
        from sqlanon.methods.local_suppression.settings import local_suppression_settings

        t = spec.transformation
        return local_suppression_settings(
            t.options, {a.name: a.role for a in spec.attributes.values()},
            {a.name: a.hierarchy is not None for a in spec.attributes.values()}, spec.privacy, t.levels,
            suppression=(t.suppression_limit, t.suppressed))

    def check_spec(self, spec: Spec) -> None:
        self.settings(spec)

    def refuse(self, plan: Plan) -> None:
        if plan.verb == "anonymize":
            raise refusal(plan.spec, "anonymize searches generalization levels; local_suppression takes "
                                     "its levels from transformation.levels: run apply (or check)")

    def run(self, plan: Plan, ds: Dataset, sink: Sink) -> Any:
        with ds.engine.purpose(f"local suppression ({plan.verb})"):
            done = suppressed(plan.spec, ds)
            try:
                if plan.verb == "compile":
                    _refuse_foreign_labels(plan, ds, done.rows.levels)
                    _read_decisions(done, kept=False)
                    return sink.compile(ds, CellRelease(plan.spec, ds, done))
                if plan.verb == "apply" and plan.writes:
                    _read_decisions(done, kept=plan.spec.output.mode in ("table", "in_place"))
                    done.report.outputs = sink.write(ds, CellRelease(plan.spec, ds, done))
                return done.report
            finally:
                for name in (done.kept, done.mapping.name if done.mapping else None,
                             done.units.name if done.units else None):
                    if name is not None:
                        ds.engine.drop(name)


def _read_decisions(done: Suppressed, kept: bool) -> None:
    """Decisions left on the engine: a temporary table for an output written now (it is read by
    nothing later), else rows for the inline relation of a view or printed SQL."""
    from sqlanon.methods.local_suppression.in_engine import decision_table, decisions

    if done.units is not None:
        from sqlanon.methods.local_suppression import units_output

        if kept:
            done.kept = units_output.decision_table(done.units)
        else:
            done.decisions = units_output.decisions(done.units)
        return
    if done.mapping is None:
        return
    if kept:
        done.kept = decision_table(done.mapping)
    else:
        done.decisions = decisions(done.mapping)


def _refuse_foreign_labels(plan: Plan, ds: Dataset, levels: Any) -> None:
    """Generalized values are matched as the text this engine wrote for them; another dialect may
    write the numbers inside a label differently, so the printed decisions would not match."""
    target = plan.dialect or plan.spec.output.dialect
    if any(levels.values()) and target and target != ds.engine.dialect.name:
        raise refusal(plan.spec, f"the decisions hold generalized values as {ds.engine.dialect.name} writes "
                                 f"them, which {target} may write otherwise: compile for "
                                 f"{ds.engine.dialect.name}, or run apply on the {target} database",
                      "transformation.levels")


def suppressed(spec: Spec, ds: Dataset, s: LocalSuppressionSettings | None = None) -> Suppressed:
    """Read the frequency table, solve, and measure the result (``s``: the settings, when not the
    spec's own, as for a node of the levels' search)."""
    from sqlanon.methods.local_suppression.queries import Rows, frequency_query

    if s is None:
        s = spec.settings
        if s.cell_weight is not None:
            from sqlanon.methods.local_suppression.searched import searched

            return searched(spec, ds, s, suppressed)
    order = ds.column_names
    qis = sorted(spec.quasi_identifiers, key=order.index)
    hierarchies = {a: h for a in qis if (h := spec.attributes[a].hierarchy) is not None}
    rows = Rows(ds.relation, order, qis, hierarchies, s.levels)
    if s.solver == "heuristic" and s.heuristic == "batch_cover":
        return _batched(spec, s, rows, ds)
    if s.solver == "heuristic" and s.heuristic == "rounds":
        from sqlanon.methods.local_suppression.in_engine import (
            IN_MEMORY_MAX,
            fetch_frequencies,
            frequency_table,
        )

        mapping, count = frequency_table(ds.engine, rows)
        if count > IN_MEMORY_MAX:
            return _in_engine(spec, s, rows, mapping)
        try:
            fetched = fetch_frequencies(mapping)
        finally:
            ds.engine.drop(mapping.name)
    else:
        _, fetched = ds.engine.fetch(frequency_query(rows).limit(MAX_COMBINATIONS + 1))
    return _in_memory(spec, s, rows, fetched)


def _in_memory(spec: Spec, s: LocalSuppressionSettings, rows: Rows, fetched: list[tuple[Any, ...]]
               ) -> Suppressed:
    import numpy as np

    from sqlanon.errors import SpecError
    from sqlanon.methods.local_suppression.combos import Combos
    from sqlanon.methods.local_suppression.solve import decisions, suppress

    qis = rows.qis
    if len(fetched) > MAX_COMBINATIONS:
        raise SpecError(f"the quasi-identifiers have more than {MAX_COMBINATIONS:,} distinct combinations; "
                        "the solvers decide per combination and read them all: generalize first "
                        "(transformation.levels), declare fewer quasi-identifiers, or use heuristic rounds "
                        "(it runs on the engine)", path="transformation.levels", source=spec.path)
    fetched.sort(key=lambda r: tuple((v is None, str(v)) for v in r[:-1]))
    values = [tuple(None if v is None else str(v) for v in r[:-1]) for r in fetched]
    combos = Combos.of(values, [int(r[-1]) for r in fetched])
    _enough_rows(spec, s, combos.rows)
    result = suppress(combos, qis, s)
    chosen, split = decisions(combos, values, result)
    cells = result.cells_per_attribute(combos)
    weights = [s.weight(a) for a in qis]
    warnings = [result.status] if s.solver == "heuristic" and result.status else []
    report = _report(spec, s, qis, combos.rows, len(combos.counts), [int(n) for n in cells],
                     result.rows_touched(combos), result.achieved_k(combos, s.alpha),
                     result.cost(combos, np.array(weights)), result.optimal, warnings)
    return Suppressed(rows, chosen, split, report)


def _in_engine(spec: Spec, s: LocalSuppressionSettings, rows: Rows, mapping: Mapping) -> Suppressed:
    """The rounds as SQL; the mapping table stays on the engine for the output."""
    from sqlanon.methods.local_suppression.in_engine import measures, solve

    weights = [s.weight(a) for a in rows.qis]
    try:
        solve(mapping, s, weights, _count(mapping))
        m = measures(mapping, s.alpha)
        _enough_rows(spec, s, m.rows)
    except BaseException:
        mapping.engine.drop(mapping.name)
        raise
    report = _report(spec, s, rows.qis, m.rows, m.combinations, m.cells, m.rows_touched, m.achieved_k,
                     float(sum(w * c for w, c in zip(weights, m.cells))), False, [])
    return Suppressed(rows, [], False, report, mapping)


def _batched(spec: Spec, s: LocalSuppressionSettings, rows: Rows, ds: Dataset) -> Suppressed:
    """``heuristic: batch_cover``, its units table kept on the engine for the output."""
    from sqlanon.methods.local_suppression.batched import batched

    units, m = batched(s, rows, ds.engine, spec.path)
    try:
        _enough_rows(spec, s, m.rows)
    except BaseException:
        ds.engine.drop(units.name)
        raise
    weights = [s.weight(a) for a in rows.qis]
    report = _report(spec, s, rows.qis, m.rows, m.combinations, m.cells, m.rows_touched, m.achieved_k,
                     float(sum(w * c for w, c in zip(weights, m.cells))), False, [])
    return Suppressed(rows, [], m.split, report, units=units)


def _count(mapping: Mapping) -> int:
    from sqlglot import exp

    from sqlanon.sql.nodes import count_star, table

    return int(mapping.engine.fetch(exp.select(count_star()).from_(table(mapping.name)))[1][0][0])


def _enough_rows(spec: Spec, s: LocalSuppressionSettings, rows: int) -> None:
    from sqlanon.errors import SpecError

    if rows < s.k:
        raise SpecError(f"k = {s.k} is larger than the number of rows ({rows})",
                        path="transformation.k", source=spec.path)


def _report(spec: Spec, s: LocalSuppressionSettings, qis: list[str], rows: int, combinations: int,
            cells: list[int], touched: int, achieved: float, cost: float, optimal: bool, warnings: list[str]
            ) -> LocalSuppressionReport:
    from sqlanon.methods.local_suppression.result import LocalSuppressionReport

    summary: dict[str, Any] = {"method": "local_suppression", "k": s.k, "solver": s.solver,
                               **({"heuristic": s.heuristic} if s.solver == "heuristic" else
                                  {"time_limit": s.time_limit}),
                               **({"importance": dict(s.importance)} if s.importance else {}),
                               **({"levels": dict(s.levels)} if s.levels else {}),
                               **({"suppressed_value": s.suppressed_value} if s.suppressed_value else {}),
                               **({"alpha": s.alpha} if s.alpha != 1 else {})}
    warnings = warnings + [f"privacy model {m} is not enforced by local_suppression; the report gives the "
                           "achieved k only" for m in spec.privacy if getattr(m, "name", "") != "k_anonymity"]
    return LocalSuppressionReport(summary, rows, s.k, combinations, dict(zip(qis, cells)), touched,
                                  _number(achieved), cost, optimal=optimal if s.solver == "exact" else None,
                                  warnings=warnings)


def _number(x: float) -> float | int:
    """An integral frequency as an int (always with ``alpha`` 1); else rounded to 12 digits."""
    return int(round(x)) if abs(x - round(x)) < 1e-9 else round(x, 12)
