"""Writing the anonymized rows: ``output.mode`` table, view, in_place or sql (docs/outputs.md).

Every mode is built around one self-contained SELECT (:func:`~sqlanon.outputs.query.output_query`)
that generalizes the quasi-identifiers, treats identifiers by their action and decides suppression
per class in SQL, so the printed SQL and what sqlanon runs are the same statement.
"""

from __future__ import annotations

from typing import Any

from sqlanon.compile.dialects import profile
from sqlanon.dataset import Dataset
from sqlanon.errors import UnsupportedError
from sqlanon.evaluate import Evaluator, NodeCheck
from sqlanon.outputs import modes
from sqlanon.outputs.query import output_query
from sqlanon.spec.schema import Spec


def write_output(spec: Spec, ds: Dataset, ev: Evaluator, node: NodeCheck) -> dict[str, Any]:
    """Write the spec's output for a checked node; returns what was written (for the report).

    Raises:
        InfeasibleError: the node is not anonymous (outliers above the suppression limit).
        SpecError: the output exists and ``output.replace`` is not set; a hash without salt; ...
    """
    mode = spec.output.mode
    if mode == "none":
        return {"mode": "none"}
    _require_generalization(spec)
    target = profile(spec.output.dialect) if mode == "sql" else ds.engine.dialect
    oq = output_query(spec, ds.column_names, ev, node, target,
                      portable=mode not in ("table", "in_place"))
    if mode == "sql":
        return modes.write_sql(spec, oq, target)
    writer = {"table": modes.write_table, "view": modes.write_view, "in_place": modes.write_in_place}
    return writer[mode](spec, ds, oq)


def compile_output_sql(spec: Spec, ds: Dataset, ev: Evaluator, node: NodeCheck, dialect: str) -> str:
    """The SQL realizing the spec's output on ``dialect`` (the bare SELECT for modes sql and none)."""
    _require_generalization(spec)
    target = profile(dialect)
    oq = output_query(spec, ds.column_names, ev, node, target)
    return modes.compile_script(spec, ds, oq, target)


def _require_generalization(spec: Spec) -> None:
    method = spec.transformation.method
    if method != "generalization":
        raise UnsupportedError(f"transformation.method {method!r}: outputs write generalized rows only; "
                               "this method's rows are not written by the output modes")


__all__ = ["compile_output_sql", "output_query", "write_output"]
