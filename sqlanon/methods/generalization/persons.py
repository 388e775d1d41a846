"""The persons and rows behind a generalization's figures, which count persons (``privacy_unit``)."""

from __future__ import annotations

from typing import Any

from sqlglot import exp

from sqlanon.compile.checks import KEEP
from sqlanon.compile.persons import aligned_rows
from sqlanon.compile.plan import nullsafe_join
from sqlanon.methods.generalization.evaluator import Evaluator, NodeCheck
from sqlanon.sql.nodes import alias, col, count_star, internal, lit


def persons_report(ev: Evaluator, node: NodeCheck) -> dict[str, Any]:
    """Persons and rows of the table, and of what the node suppresses (the node's figures count
    persons; this adds the rows they hold)."""
    p = ev.p
    assert p.persons is not None
    rows = aligned_rows(p.source, list(p.qis), p.qis, p.persons)
    gen = ev.generalizer.select(rows, node.levels)
    out = internal("out")
    q = exp.select(alias(count_star(), "rows"), alias(exp.Sum(this=exp.Case().when(
        exp.Not(this=col(KEEP, "v")), lit(1)).else_(lit(0))), "out")).from_(
        exp.alias_(exp.Subquery(this=gen), out, quoted=True)).join(
        exp.alias_(node.verdict.copy(), "v", table=True, quoted=True),
        on=nullsafe_join(out, "v", list(p.qis)), join_type="inner")
    r = ev.engine.fetch_one(q)
    outlier_rows = int(r["out"] or 0)
    return {"column": p.persons.column, "persons": node.rows, "rows": int(r["rows"] or 0),
            "suppressed_persons": node.suppressed_rows,
            "suppressed_rows": outlier_rows if node.anonymous else 0}
