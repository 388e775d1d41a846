"""DP microdata at a privacy unit: one released record per person.

Neighbouring tables differ by the **substitution of one person** (all of its rows replaced by
another person's rows; the number of persons is public). The release is the DP microaggregation of
:func:`~sqlanon.methods.dp.microdata.dp_microaggregate` applied to a person-level table built in
SQL, one record per person:

- a numeric attribute: the mean of the person's values clamped to the public bounds. Whatever the
  number of rows, the mean lies within the bounds, so substituting a person changes one record of
  the person-level table by at most the bounds' width, exactly the change the row-level release is
  calibrated for: the sensitivities and ε of the book's algorithms hold per person unchanged. A
  person's contribution is thus bounded to one record (no row bound is needed: the mean of any
  number of clamped rows is one bounded value);
- a nominal attribute: the person's value, which must be the same on every row (a person whose
  rows hold several values is an error naming up to five of them).

The output has one row per person and only the released attributes (the person column is not
released: it would identify the record's person). The number of rows a person has is not released.
The release is charged to the ledger at the person column's unit, under substitution.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from sqlglot import exp

from sqlanon.engines.staging import new_token, staging_name
from sqlanon.errors import SpecError, did_you_mean
from sqlanon.methods.dp.bounds import parse_all_bounds
from sqlanon.methods.dp.microdata import MicrodataReport, dp_microaggregate
from sqlanon.sql.nodes import alias, as_double, col, count_star, table

if TYPE_CHECKING:
    from sqlanon.engines.base import Engine


def dp_microaggregate_persons(engine: Engine, source: str, output: str, *, privacy_unit: str,
                              bounds: Mapping[str, Any] | None = None,
                              categorical: Mapping[str, Any] | None = None, schema: str | None = None,
                              **options: Any) -> MicrodataReport:
    """Write an ε-DP table of one record per person of ``source`` to ``output``.

    ``privacy_unit`` names the column identifying a person; the other arguments are those of
    :func:`~sqlanon.methods.dp.microdata.dp_microaggregate` (``k``, ``epsilon``, ``method``,
    ``dataset``, ``budget_epsilon``, ...), ``k`` counting persons.

    Raises:
        SpecError: an unknown person column, NULL persons, a nominal attribute whose value differs
            between a person's rows, or what :func:`dp_microaggregate` refuses.
    """
    columns = [c for c, _ in engine.columns(source, schema)] if engine.relation_exists(source, schema) \
        else []
    if privacy_unit not in columns:
        raise SpecError(f"unknown column {privacy_unit!r} in {source!r}."
                        + did_you_mean(privacy_unit, columns), path="privacy_unit")
    numeric = list(bounds or {})
    public = parse_all_bounds(bounds if bounds is not None else {}, numeric) if numeric else {}
    nominal = list(categorical or {})
    _check_persons(engine, source, privacy_unit, nominal, schema)
    person = col(privacy_unit)
    records = exp.select(
        *[alias(as_double(exp.Avg(this=b.clamp(col(a)))), a) for a, b in public.items()],
        *[alias(exp.Min(this=col(c)), c) for c in nominal],
    ).from_(table(source, schema)).group_by(person)
    work = staging_name(new_token(), "dpp")
    engine.create_table_as(work, records, temporary=schema is None, schema=schema)
    try:
        return dp_microaggregate(engine, work, output, bounds=bounds, categorical=categorical,
                                 privacy_unit=privacy_unit, schema=schema, **options)
    finally:
        engine.drop(work, schema=schema)


def release_microdata(engine: Engine, source: str, output: str, privacy_unit: str | None,
                      **options: Any) -> MicrodataReport:
    """Row-level DP microdata without a privacy unit, else one record per person."""
    if privacy_unit is None:
        return dp_microaggregate(engine, source, output, **options)
    return dp_microaggregate_persons(engine, source, output, privacy_unit=privacy_unit, **options)


def neighbours(privacy_unit: str | None) -> str:
    """The neighbouring relation of a DP microdata release, as the report states it."""
    if privacy_unit is None:
        return "substitution of one record"
    return f"substitution of one person ({privacy_unit!r}): one record per person"


def _check_persons(engine: Engine, source: str, unit: str, nominal: list[str],
                   schema: str | None) -> None:
    """No row without a person; every nominal attribute constant per person."""
    nulls = engine.fetch(exp.select(count_star()).from_(table(source, schema))
                         .where(exp.Is(this=col(unit), expression=exp.Null())))[1][0][0]
    if nulls:
        raise SpecError(f"{nulls} row(s) have no person: {unit!r} is NULL (every row must belong to "
                        "a person)", path="privacy_unit")
    for c in nominal:
        varying = exp.GT(this=exp.Count(this=exp.Distinct(expressions=[col(c)])),
                         expression=exp.Literal.number(1))
        found = engine.fetch(exp.select(col(unit)).from_(table(source, schema)).group_by(col(unit))
                             .having(varying).order_by(col(unit)).limit(5))[1]
        if found:
            raise SpecError(f"{c!r} differs between the rows of person(s) "
                            f"{', '.join(str(r[0]) for r in found)} ({unit}); a nominal attribute "
                            "must be constant per person in a person-level DP release",
                            path=f"categorical.{c}")
