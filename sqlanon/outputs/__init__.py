"""Writing the anonymized rows: ``output.mode`` table, view, in_place or sql (docs/outputs.md).

One writer (:mod:`sqlanon.outputs.writer`) writes every method's released rows; the output is
checked before anything is scanned (:mod:`sqlanon.outputs.preflight`). For generalization the
released rows are one self-contained SELECT
(:func:`~sqlanon.methods.generalization.output_query.output_query`) that generalizes the
quasi-identifiers, treats identifiers by their action and decides suppression per class in SQL, so
the printed SQL and what sqlanon runs are the same statement.
"""

from __future__ import annotations

from sqlanon.compile.released import OutputQuery
from sqlanon.methods.dataset import Dataset
from sqlanon.methods.generalization.evaluator import Evaluator, NodeCheck
from sqlanon.methods.generalization.method import CheckedNode, NodeRelease
from sqlanon.methods.generalization.output_query import output_query
from sqlanon.outputs import writer
from sqlanon.outputs.preflight import OutputPlan, plan_output
from sqlanon.spec.schema import Spec
from sqlanon.sql.dialects import DialectProfile, profile


def compile_output_sql(spec: Spec, ds: Dataset, ev: Evaluator, node: NodeCheck, dialect: str) -> str:
    """The SQL realizing the spec's output on ``dialect`` (the bare SELECT for modes sql and none)."""
    target = profile(dialect)
    plan_output(spec, ds, target, writing=False)
    oq = checked_output_query(spec, ds, ev, node, target)
    return writer.compile_script(spec, oq, target, source_name=ds.name, schema=ds.schema)


def checked_output_query(spec: Spec, ds: Dataset, ev: Evaluator, node: NodeCheck,
                         target: DialectProfile, *, portable: bool = True) -> OutputQuery:
    """The output statement for a node checked on the engine; refused when it is not anonymous.
    ``portable``: the statement outlives this connection (a view, printed SQL)."""
    return NodeRelease(spec, CheckedNode(ds, ev, node), portable=portable).query(target)


__all__ = ["OutputPlan", "checked_output_query", "compile_output_sql", "output_query", "plan_output"]
