"""The privacy unit checked against the data: the person column exists and is never NULL, and a
quasi-identifier declared ``constant`` has one value per person."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlglot import exp

from sqlanon.compile.checks import KEEP
from sqlanon.compile.persons import Persons, aligned_rows, null_persons_query, varying_query
from sqlanon.compile.plan import nullsafe_join
from sqlanon.engines.base import Engine
from sqlanon.errors import SpecError, did_you_mean
from sqlanon.methods.generalization.evaluator import Evaluator, NodeCheck
from sqlanon.spec.schema import Spec
from sqlanon.sql.nodes import alias, col, count_star, internal, lit


def persons_of(spec: Spec, engine: Engine, relation: exp.Expression, columns: Sequence[str],
               qis: Sequence[str]) -> Persons | None:
    """The spec's privacy unit as :class:`Persons`, checked on ``relation``; None without one.

    Raises:
        SpecError: the person column or ``order_by`` is not a column, a row has no person, or a
            ``constant`` quasi-identifier differs between a person's rows (naming the persons).
    """
    unit = spec.privacy_unit
    if unit is None:
        return None
    for key, name in (("column", unit.column), ("order_by", unit.order_by)):
        if name is not None and name not in columns:
            raise SpecError(f"unknown column {name!r}." + did_you_mean(name, columns),
                            path=f"privacy_unit.{key}", source=spec.path)
    nulls = int(engine.fetch_one(null_persons_query(relation, unit.column))["n"] or 0)
    if nulls:
        raise SpecError(f"{nulls} row(s) have no person: {unit.column!r} is NULL (every row must "
                        "belong to a person; fill or drop them first)", path="privacy_unit.column",
                        source=spec.path)
    for a in qis:
        if unit.rule(a) != "constant":
            continue
        differing = [str(p) for (p,) in engine.fetch(varying_query(relation, unit.column, a))[1]]
        if differing:
            raise SpecError(f"quasi-identifier {a!r} differs between the rows of person(s) "
                            f"{', '.join(differing)} ({unit.column}); declare a rule for it "
                            f"(privacy_unit.attributes.{a}: min, max or first)",
                            path=f"privacy_unit.attributes.{a}", source=spec.path)
    return Persons(unit.column, {a: unit.rule(a) for a in qis}, unit.order_by)


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
