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


def as_expression(node: object) -> exp.Expression:
    """``node``, typed as the :class:`~sqlglot.exp.Expression` it is.

    sqlglot annotates its builders (``exp.alias_``, ``exp.and_``, ``exp.not_``, ...) with base classes
    that every node they build subclasses; this narrows such a result for the type checker.
    """
    if not isinstance(node, exp.Expression):
        raise TypeError(f"not a sqlglot expression: {type(node).__name__}")
    return node


def alias(expression: exp.Expression, name: str) -> exp.Expression:
    """``expression AS "name"`` (a subquery or table takes the alias itself, as sqlglot's ``alias_``)."""
    return as_expression(exp.alias_(expression, name, quoted=True))


def as_double(expression: exp.Expression) -> exp.Expression:
    return exp.cast(expression, exp.DataType.build("double"))


def as_text(expression: exp.Expression) -> exp.Expression:
    return exp.cast(expression, exp.DataType.build("varchar"))


def count_star() -> exp.Expression:
    return exp.Count(this=exp.Star())


def nullsafe_join(left: str, right: str, columns: list[str]) -> exp.Expression:
    """``left.c IS NOT DISTINCT FROM right.c AND ...``: class keys may be NULL (a value of its own)."""
    conds = [exp.NullSafeEQ(this=col(c, left), expression=col(c, right)) for c in columns]
    return as_expression(exp.and_(*conds)) if conds else exp.true()


def div(a: exp.Expression, b: exp.Expression) -> exp.Expression:
    """Floating-point division on every dialect."""
    return exp.Div(this=as_double(a), expression=b, typed=False, safe=False)


DIRECT_VALUES_MIN_ROWS = 1000
"""From this many rows on, an inline VALUES relation's rows are rendered directly as text (each cell
quoted by the dialect's own generator) instead of one sqlglot node per cell: building, copying and
generating a node per cell costs seconds per 100,000 rows. Smaller relations stay nodes, so their
SQL is exactly as before (pretty-printed one row per line); larger ones are written on one line."""


def values_table(rows: list[tuple[Any, ...]], columns: list[str], name: str,
                 dialect: str | None = None) -> exp.Expression:
    """An inline ``(VALUES ...) AS name(columns)`` relation.

    With ``dialect`` (a sqlglot dialect name), large relations of text cells carry their rows as
    text quoted for that dialect (see :data:`DIRECT_VALUES_MIN_ROWS`): the same SQL (in one line
    where pretty printing would write one row per line).
    """
    direct = (_direct_rows(rows, dialect)
              if dialect is not None and len(rows) >= DIRECT_VALUES_MIN_ROWS else None)
    if direct is not None:
        return exp.Values(expressions=[direct], alias=exp.TableAlias(
            this=exp.to_identifier(name), columns=[exp.to_identifier(c) for c in columns]))
    return exp.values(
        [tuple(lit(v) for v in row) for row in rows],
        alias=name,
        columns=columns,
    )


def _direct_rows(rows: list[tuple[Any, ...]], dialect: str) -> exp.Var | None:
    """The rows ``('a', 'b'), ('c', NULL), ...`` as one pre-rendered node, each string quoted by
    ``dialect``'s generator (its quote characters and ``escape_str``, as it writes a string literal).

    None where a direct rendering could differ from the generator's: a dialect that rewrites VALUES
    (BigQuery), a cell that is not text or NULL, or a line break in a cell (pretty printing indents
    lines of pre-rendered text)."""
    from sqlglot.dialects.dialect import Dialect
    from sqlglot.generator import Generator

    d = Dialect.get_or_raise(dialect)
    generator_class = d.generator_class
    if not generator_class.VALUES_AS_TABLE or any(
            node in generator_class.TRANSFORMS for node in (exp.Values, exp.Tuple, exp.Literal)) or any(
            getattr(generator_class, m) is not getattr(Generator, m) for m in ("literal_sql", "tuple_sql")):
        return None  # the dialect writes VALUES, rows or strings its own way: keep the nodes
    generator = d.generator()
    quoted: dict[Any, str] = {None: generator.sql(exp.Null())}
    for row in rows:
        for v in row:
            if v in quoted:
                continue
            if not isinstance(v, str) or "\n" in v or "\r" in v:
                return None
            quoted[v] = f"{d.QUOTE_START}{generator.escape_str(v)}{d.QUOTE_END}"
    return exp.Var(this=", ".join("(" + ", ".join(quoted[v] for v in row) + ")" for row in rows))
