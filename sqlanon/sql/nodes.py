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
    """``expression AS "name"`` (a subquery or table takes the alias itself, as sqlglot's ``alias_``);
    takes ``expression`` itself (no copy)."""
    return as_expression(exp.alias_(expression, name, quoted=True, copy=False))


_PARSED_TYPES: dict[str, exp.DataType] = {}


def data_type(name: str) -> exp.DataType:
    """``exp.DataType.build(name)``, parsed once per name (a fresh copy each call)."""
    parsed = _PARSED_TYPES.get(name)
    if parsed is None:
        parsed = _PARSED_TYPES[name] = exp.DataType.build(name)
    return parsed.copy()


def as_double(expression: exp.Expression) -> exp.Expression:
    """``CAST(expression AS DOUBLE)``; takes ``expression`` itself (no copy)."""
    return exp.cast(expression, data_type("double"), copy=False)


def as_text(expression: exp.Expression) -> exp.Expression:
    """``CAST(expression AS TEXT)``; takes ``expression`` itself (no copy)."""
    return exp.cast(expression, data_type("varchar"), copy=False)


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
        return direct_values(direct, columns, name)
    return exp.values(
        [tuple(lit(v) for v in row) for row in rows],
        alias=name,
        columns=columns,
    )


def direct_values(rows_text: str, columns: list[str], name: str) -> exp.Expression:
    """``(VALUES <rows_text>) AS name(columns)``, the rows pre-rendered (:class:`TextQuoter`)."""
    return exp.Values(expressions=[exp.Var(this=rows_text)], alias=exp.TableAlias(
        this=exp.to_identifier(name), columns=[exp.to_identifier(c) for c in columns]))


class TextQuoter:
    """Text cells and NULL as ``dialect``'s generator writes them (its quote characters and
    ``escape_str``, as it writes a string literal), for rows rendered directly.

    :meth:`for_dialect` gives None where a direct rendering could differ from the generator's: a
    dialect that rewrites VALUES (BigQuery) or writes rows or strings its own way. :meth:`quote`
    gives None for a cell that is not text or NULL, or holds a line break (pretty printing indents
    lines of pre-rendered text)."""

    def __init__(self, dialect: Any) -> None:
        self._dialect = dialect
        self._generator = dialect.generator()
        self.null = self._generator.sql(exp.Null())

    @classmethod
    def for_dialect(cls, dialect: str) -> TextQuoter | None:
        from sqlglot.dialects.dialect import Dialect
        from sqlglot.generator import Generator

        d = Dialect.get_or_raise(dialect)
        generator_class = d.generator_class
        rewrites = any(node in generator_class.TRANSFORMS for node in (exp.Values, exp.Tuple, exp.Literal))
        overrides = any(getattr(generator_class, m) is not getattr(Generator, m)
                        for m in ("literal_sql", "tuple_sql"))
        if not generator_class.VALUES_AS_TABLE or rewrites or overrides:
            return None
        return cls(d)

    @property
    def start(self) -> str:
        return self._dialect.QUOTE_START

    @property
    def end(self) -> str:
        return self._dialect.QUOTE_END

    def escaped(self) -> list[str]:
        """The characters the generator rewrites in a string: text without them is written as is."""
        d = self._dialect
        out = ["\n", "\r", d.QUOTE_END]
        if d.STRINGS_SUPPORT_ESCAPED_SEQUENCES:
            out += list(d.ESCAPED_SEQUENCES)
        return out

    def quote(self, value: Any) -> str | None:
        if value is None:
            return self.null
        if not isinstance(value, str) or "\n" in value or "\r" in value:
            return None
        d = self._dialect
        return f"{d.QUOTE_START}{self._generator.escape_str(value)}{d.QUOTE_END}"


def _direct_rows(rows: list[tuple[Any, ...]], dialect: str) -> str | None:
    """The rows ``('a', 'b'), ('c', NULL), ...`` as text quoted by :class:`TextQuoter`, or None."""
    quoter = TextQuoter.for_dialect(dialect)
    if quoter is None:
        return None
    quoted: dict[Any, str] = {}
    for row in rows:
        for v in row:
            if v in quoted:
                continue
            q = quoter.quote(v)
            if q is None:
                return None
            quoted[v] = q
    return ", ".join("(" + ", ".join(quoted[v] for v in row) + ")" for row in rows)
