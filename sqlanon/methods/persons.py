"""The privacy unit checked against the data: the person column exists and is never NULL, and an
attribute declared ``constant`` has one value per person."""

from __future__ import annotations

from collections.abc import Sequence

from sqlglot import exp

from sqlanon.compile.persons import Persons, unsettled_query, unsettled_records
from sqlanon.engines.base import Engine
from sqlanon.errors import SpecError, did_you_mean
from sqlanon.spec.schema import Spec


def persons_of(spec: Spec, columns: Sequence[str], attributes: Sequence[str]) -> Persons | None:
    """The spec's privacy unit as :class:`Persons` over ``attributes``; None without one.

    Raises:
        SpecError: the person column or ``order_by`` is not a column.
    """
    unit = spec.privacy_unit
    if unit is None:
        return None
    for key, name in (("column", unit.column), ("order_by", unit.order_by)):
        if name is not None and name not in columns:
            raise SpecError(f"unknown column {name!r}." + did_you_mean(name, columns),
                            path=f"privacy_unit.{key}", source=spec.path)
    return Persons(unit.column, {a: unit.rule(a) for a in attributes}, unit.order_by)


def declared_persons(spec: Spec, attributes: Sequence[str]) -> Persons | None:
    """The spec's privacy unit as :class:`Persons`, unchecked (SQL compiled without a connection: the
    statement's own windows read the person column)."""
    unit = spec.privacy_unit
    return None if unit is None else Persons(unit.column, {a: unit.rule(a) for a in attributes},
                                              unit.order_by)


def check_persons(spec: Spec, engine: Engine, persons: Persons, attributes: Sequence[str],
                  source: exp.Expression, records: exp.Expression | None = None) -> None:
    """Every row has a person, and ``constant`` attributes one value per person: read from the
    person-level ``records`` when they are :func:`~sqlanon.compile.persons.grouped` (no second scan),
    else from the ``source`` rows.

    Raises:
        SpecError: naming the NULL rows' count, or the attribute and up to five persons.
    """
    unit = persons.column
    constant = [a for a in attributes if persons.rules.get(a, "constant") == "constant"]
    query = unsettled_records(records, unit, len(constant)) if records is not None else \
        unsettled_query(source, unit, constant)
    found = engine.fetch(query)[1]
    if found and found[0][0] is None:
        raise SpecError(f"{found[0][1]} row(s) have no person: {unit!r} is NULL (every row must "
                        "belong to a person; fill or drop them first)", path="privacy_unit.column",
                        source=spec.path)
    for i, a in enumerate(constant):
        differing = [str(row[0]) for row in found if row[2 + i]]
        if differing:
            raise SpecError(f"{a!r} differs between the rows of person(s) "
                            f"{', '.join(differing)} ({unit}); declare a rule for it "
                            f"(privacy_unit.attributes.{a}: min, max or first)",
                            path=f"privacy_unit.attributes.{a}", source=spec.path)
