"""The privacy unit checked against the data: the person column exists and is never NULL, and an
attribute declared ``constant`` has one value per person."""

from __future__ import annotations

from collections.abc import Sequence

from sqlglot import exp

from sqlanon.compile.persons import Persons, unsettled_query
from sqlanon.engines.base import Engine
from sqlanon.errors import SpecError, did_you_mean
from sqlanon.spec.schema import Spec


def persons_of(spec: Spec, engine: Engine, relation: exp.Expression, columns: Sequence[str],
               attributes: Sequence[str]) -> Persons | None:
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
    constant = [a for a in attributes if unit.rule(a) == "constant"]
    found = engine.fetch(unsettled_query(relation, unit.column, constant))[1]
    if found and found[0][0] is None:
        raise SpecError(f"{found[0][1]} row(s) have no person: {unit.column!r} is NULL (every row must "
                        "belong to a person; fill or drop them first)", path="privacy_unit.column",
                        source=spec.path)
    for i, a in enumerate(constant):
        differing = [str(row[0]) for row in found if row[2 + i]]
        if differing:
            raise SpecError(f"{a!r} differs between the rows of person(s) "
                            f"{', '.join(differing)} ({unit.column}); declare a rule for it "
                            f"(privacy_unit.attributes.{a}: min, max or first)",
                            path=f"privacy_unit.attributes.{a}", source=spec.path)
    return Persons(unit.column, {a: unit.rule(a) for a in attributes}, unit.order_by)

