"""The order of a sensitive attribute's values, for the statistics that read values as ordered or numeric."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from sqlglot import exp

from sqlanon.domain.models.base import StatisticInputs
from sqlanon.errors import SpecError
from sqlanon.sql.nodes import alias, as_double, as_text, col, lit

NUMERIC_TYPES = ("integer", "decimal")
"""Declared attribute types (``type:`` in the spec) whose text values are read as numbers."""


def column_kind(attribute: str, column_types: Mapping[str, str], dialect: str) -> str:
    """``numeric``, ``temporal``, ``other`` (text, boolean...) or ``unknown`` for a source column."""
    sql_type = column_types.get(attribute)
    if sql_type is None:
        return "unknown"
    try:
        dt = exp.DataType.build(str(sql_type), dialect=dialect)
    except Exception:  # a type sqlglot cannot parse is not one we can order or add
        return "other"
    if dt.is_type(*exp.DataType.NUMERIC_TYPES):
        return "numeric"
    if dt.is_type(*exp.DataType.TEMPORAL_TYPES):
        return "temporal"
    return "other"


def order_key(attribute: str, value: exp.Expression, value_order: Mapping[str, Sequence[object]],
              column_types: Mapping[str, str], attribute_types: Mapping[str, str], dialect: str, *,
              what: str) -> exp.Expression:
    """The expression that sorts the values of ``attribute`` for the ordered distance.

    A declared ``order:`` list wins (values compared as text); then a numeric or temporal column's own
    order; then a text column declared ``type: integer`` or ``decimal`` (cast to double). NULL sorts last.

    Raises:
        SpecError: when the attribute has none of these.
    """
    order = value_order.get(attribute)
    if order:
        case = exp.Case(this=as_text(value))
        for i, v in enumerate(order, start=1):
            case = case.when(lit(str(v)), lit(i))
        return case
    kind = column_kind(attribute, column_types, dialect)
    if kind in ("numeric", "temporal", "unknown"):
        return value
    if attribute_types.get(attribute) in NUMERIC_TYPES:
        return as_double(value)
    if attribute_types.get(attribute) == "date":
        return value
    raise SpecError(f"{what} needs an ordered attribute, but {attribute!r} is a text column without "
                    "an order: declare `type: integer` or `decimal` for numbers, or list its values "
                    "lowest first in `order:`", path=f"attributes.{attribute}")


def check_numbers(inputs: StatisticInputs, attribute: str, what: str) -> None:
    """Fail clearly when a text column read as numbers holds something else."""
    if column_kind(attribute, inputs.column_types, inputs.engine.dialect.sqlglot) in ("numeric", "unknown"):
        return
    q = exp.select(alias(as_text(col(attribute)), "v")).distinct() \
        .from_(inputs.sensitive_source.copy()) \
        .where(exp.Not(this=exp.Is(this=col(attribute), expression=exp.Null())))
    bad = 0
    for (v,) in inputs.engine.fetch(q)[1]:
        try:
            float(v)
        except (TypeError, ValueError):
            bad += 1
    if bad:
        raise SpecError(f"{what} reads {attribute!r} as numbers, but {bad} of its distinct values are "
                        "not numbers", path=f"attributes.{attribute}")
