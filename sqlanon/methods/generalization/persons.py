"""The persons and rows behind a generalization's figures, which count persons (``privacy_unit``)."""

from __future__ import annotations

from typing import Any

from sqlglot import exp

from sqlanon.compile.checks import KEEP, WEIGHT
from sqlanon.compile.persons import ROWS_OF
from sqlanon.compile.plan import nullsafe_join
from sqlanon.methods.generalization.evaluator import Evaluator, NodeCheck
from sqlanon.sql.nodes import alias, as_expression, col, internal, lit


def persons_report(ev: Evaluator, node: NodeCheck) -> dict[str, Any]:
    """Persons and rows of the table, and of what the node suppresses (the node's figures count
    persons; this adds the rows they hold, read from the person-level records)."""
    p = ev.p
    assert p.persons is not None
    keep = [ROWS_OF, *([WEIGHT] if p.weighted else []), *p.fit_columns]
    gen = ev.generalizer.select(ev.counted, node.levels, keep=keep)
    out = internal("out")
    rows_of: exp.Expression = col(ROWS_OF)
    if p.weighted:  # one record of each person carries the weight
        rows_of = exp.Mul(this=rows_of, expression=col(WEIGHT))
    kept: exp.Expression = exp.Coalesce(this=col(KEEP, "v"), expressions=[exp.false()])
    fits = p.persons.fits(node.levels, out)
    if fits is not None:  # a person who fits no class at the node is suppressed
        kept = as_expression(exp.and_(fits, kept))
    suppressed = exp.Case().when(exp.Not(this=exp.Paren(this=kept)), rows_of.copy()).else_(lit(0))
    q = exp.select(alias(exp.Sum(this=rows_of), "rows"), alias(exp.Sum(this=suppressed), "out")).from_(
        exp.alias_(exp.Subquery(this=gen), out, quoted=True)).join(
        exp.alias_(node.verdict.copy(), "v", table=True, quoted=True),
        on=nullsafe_join(out, "v", list(p.qis)), join_type="left")
    r = ev.engine.fetch_one(q)
    return {"column": p.persons.column, "persons": node.rows, "rows": int(r["rows"] or 0),
            "suppressed_persons": node.suppressed_rows,
            "suppressed_rows": int(r["out"] or 0) if node.anonymous else 0}
