"""Writing the anonymized rows: ``output.mode`` table, view, in_place or sql (docs/outputs.md).

Every mode is built around one self-contained SELECT (:func:`~sqlanon.outputs.query.output_query`)
that generalizes the quasi-identifiers, treats identifiers by their action and decides suppression
per class in SQL, so the printed SQL and what sqlanon runs are the same statement.
"""

from __future__ import annotations

from typing import Any

from sqlanon.sql.dialects import DialectProfile, profile
from sqlanon.methods.dataset import Dataset
from sqlanon.errors import UnsupportedError
from sqlanon.methods.generalization.evaluator import Evaluator, NodeCheck
from sqlanon.outputs import modes
from sqlanon.outputs.preflight import OutputPlan, plan_output
from sqlanon.outputs.query import OutputQuery, output_query, require_anonymous
from sqlanon.spec.schema import Spec
from sqlanon.engines.staging import remove_leftovers


def write_output(spec: Spec, ds: Dataset, ev: Evaluator, node: NodeCheck,
                 plan: OutputPlan | None = None) -> dict[str, Any]:
    """Write the spec's output for a checked node; returns what was written (for the report).

    ``plan`` is the output checked before the source was scanned (checked now when not given).

    Raises:
        InfeasibleError: the node is not anonymous (outliers above the suppression limit).
        SpecError: the output exists and ``output.replace`` is not set; a hash without salt; ...
    """
    mode = spec.output.mode
    if mode == "none":
        return {"mode": "none"}
    _require_generalization(spec)
    plan = plan or plan_output(spec, ds)
    target = profile(spec.output.dialect) if mode == "sql" else ds.engine.dialect
    oq = checked_output_query(spec, ds, ev, node, target, portable=mode not in ("table", "in_place"))
    if mode == "sql":
        return modes.write_sql(spec, oq, target)
    removed = remove_leftovers(ds.engine)
    summary = modes.WRITERS[mode](spec, ds, oq, plan)
    if removed:
        summary["staging_removed"] = removed
    return summary


def compile_output_sql(spec: Spec, ds: Dataset, ev: Evaluator, node: NodeCheck, dialect: str) -> str:
    """The SQL realizing the spec's output on ``dialect`` (the bare SELECT for modes sql and none)."""
    _require_generalization(spec)
    target = profile(dialect)
    plan_output(spec, ds, target, writing=False)
    oq = checked_output_query(spec, ds, ev, node, target)
    return modes.compile_script(spec, oq, target, source_name=ds.name, schema=ds.schema)


def checked_output_query(spec: Spec, ds: Dataset, ev: Evaluator, node: NodeCheck,
                         target: DialectProfile, *, portable: bool = True) -> OutputQuery:
    """The output statement for a node checked on the engine; refused when it is not anonymous.
    ``portable``: the statement outlives this connection (a view, printed SQL)."""
    require_anonymous(node)
    return output_query(spec, ds.column_names, ev.p, node.levels, node.suppression_limit, target,
                        evaluator=ev, enforce_limit=spec.output.mode != "view", portable=portable)


def _require_generalization(spec: Spec) -> None:
    method = spec.transformation.method
    if method != "generalization":
        raise UnsupportedError(f"transformation.method {method!r}: outputs write generalized rows only; "
                               "this method's rows are not written by the output modes")


__all__ = ["OutputPlan", "compile_output_sql", "output_query", "plan_output", "write_output"]
