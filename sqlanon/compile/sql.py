"""Small builders for quoted identifiers and literals: user text reaches SQL only through these."""

from __future__ import annotations

from typing import Any

from sqlglot import exp

INTERNAL_PREFIX = "__sa_"


def internal(name: str) -> str:
    """The name of a column sqlanon generates; input columns may not start with this prefix.

    >>> internal("n")
    '__sa_n'
    """
    return INTERNAL_PREFIX + name


def ident(name: str) -> exp.Identifier:
    return exp.to_identifier(name, quoted=True)


def col(name: str, table: str | None = None) -> exp.Column:
    """A quoted column reference, optionally qualified by a quoted table alias."""
    return exp.Column(this=ident(name), table=ident(table) if table else None)


def table(name: str, schema: str | None = None) -> exp.Table:
    """A quoted table reference. ``name`` may not be pre-quoted SQL; it is one identifier."""
    return exp.Table(this=ident(name), db=ident(schema) if schema else None)


def lit(value: Any) -> exp.Expression:
    """A SQL literal for a Python value (strings are quoted by the generator, never by hand)."""
    if value is None:
        return exp.Null()
    if isinstance(value, bool):
        return exp.Boolean(this=value)
    if isinstance(value, (int, float)):
        if isinstance(value, float) and value != value:  # NaN has no portable literal
            raise ValueError("NaN cannot be written as a SQL literal")
        return exp.Literal.number(repr(value) if isinstance(value, float) else value)
    return exp.Literal.string(str(value))


def alias(expression: exp.Expression, name: str) -> exp.Alias:
    return exp.alias_(expression, name, quoted=True)


def as_double(expression: exp.Expression) -> exp.Expression:
    return exp.cast(expression, exp.DataType.build("double"))


def as_text(expression: exp.Expression) -> exp.Expression:
    return exp.cast(expression, exp.DataType.build("varchar"))


def count_star() -> exp.Expression:
    return exp.Count(this=exp.Star())


def div(a: exp.Expression, b: exp.Expression) -> exp.Expression:
    """Floating-point division on every dialect."""
    return exp.Div(this=as_double(a), expression=b, typed=False, safe=False)


def values_table(rows: list[tuple[Any, ...]], columns: list[str], name: str) -> exp.Expression:
    """An inline ``(VALUES ...) AS name(columns)`` relation."""
    return exp.values(
        [tuple(lit(v) for v in row) for row in rows],
        alias=name,
        columns=columns,
    )
