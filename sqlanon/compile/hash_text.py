"""The canonical text of a value, which a salted hash digests: one string per value on every engine.

A cast to text differs between engines (a DOUBLE 3.0 is ``3.0`` on DuckDB and ``3`` on PostgreSQL,
a timestamp with time zone follows the session's zone), so each type is written out explicitly:

========================  ==========================================================================
type                      canonical text
========================  ==========================================================================
integer                   decimal digits, ``-`` for negatives: ``-42``
decimal / numeric         plain notation, no exponent, trailing fractional zeros and a bare ``.``
                          removed, zero is ``0``: ``3.50`` → ``3.5``, ``2.00`` → ``2``
double / real             Python's ``repr`` of the (double) value: ``3.0``, ``0.1``, ``1e+20``,
                          ``1e-05``; ``-0.0`` is ``0.0``; ``nan``, ``inf``, ``-inf``
boolean                   ``true`` / ``false``
date                      ``YYYY-MM-DD``
timestamp                 ``YYYY-MM-DD HH:MM:SS.ffffff`` (always six fractional digits)
timestamp with time zone  the instant in UTC, ``YYYY-MM-DD HH:MM:SS.ffffff+00:00``
uuid                      lower-case, hyphenated
text and anything else    the value as text
========================  ==========================================================================

:func:`canonical_text` is the same definition in Python (docs/outputs.md shows it standalone).
"""

from __future__ import annotations

import datetime
import decimal
import functools
from collections.abc import Iterable
from typing import Any

from sqlglot import exp

from sqlanon.sql.dialects import DialectProfile
from sqlanon.sql.nodes import as_text, lit

T = exp.DataType.Type
_DATETIME = {T.TIMESTAMP, T.TIMESTAMPNTZ, T.DATETIME, T.TIMESTAMP_S, T.TIMESTAMP_MS, T.TIMESTAMP_NS}
_DATETIME_TZ = {T.TIMESTAMPTZ, T.TIMESTAMPLTZ}
_DECIMAL = {T.DECIMAL, T.BIGDECIMAL, T.MONEY, T.SMALLMONEY, T.UDECIMAL}


def kind_of(data_type: exp.DataType | None) -> str:
    """The canonical form a column type takes: integer, decimal, double, boolean, date, timestamp,
    timestamptz, uuid or text."""
    if data_type is None:
        return "text"
    t = data_type.this
    if t in exp.DataType.INTEGER_TYPES:
        return "integer"
    if t in exp.DataType.FLOAT_TYPES:
        return "double"
    if t in _DECIMAL:
        return "decimal"
    if t == T.BOOLEAN:
        return "boolean"
    if t == T.DATE:
        return "date"
    if t in _DATETIME:
        return "timestamp"
    if t in _DATETIME_TZ:
        return "timestamptz"
    if t == T.UUID:
        return "uuid"
    return "text"


def parse_types(columns: Iterable[tuple[str, str]], dialect: str) -> dict[str, exp.DataType]:
    """Column types as the engine names them (``double precision``, ``DECIMAL(10,2)``), parsed;
    a type sqlglot cannot read is left out (and hashed as text)."""
    types = {}
    for name, sql_type in columns:
        parsed = _parsed_type(sql_type, dialect)
        if parsed is not None:
            types[name] = parsed.copy()
    return types


@functools.lru_cache(maxsize=256)
def _parsed_type(sql_type: str, dialect: str) -> exp.DataType | None:
    """A type name parsed once (each write parses the source's column types again); None when
    sqlglot cannot read it. Callers get copies: a tree is mutable."""
    try:
        return exp.DataType.build(sql_type, dialect=dialect)
    except Exception:  # noqa: BLE001 - an unknown type name: treated as text
        return None


_SPEC_TYPES = {"integer": "bigint", "decimal": "decimal", "date": "date", "string": "varchar"}


def declared_types(attribute_types: dict[str, str]) -> dict[str, exp.DataType]:
    """The types a spec declares (``type: integer``, ...), for when the database is not at hand."""
    return {a: exp.DataType.build(_SPEC_TYPES[t]) for a, t in attribute_types.items() if t in _SPEC_TYPES}


def canonical_sql(value: exp.Expression, data_type: exp.DataType | None,
                  target: DialectProfile) -> exp.Expression:
    """SQL giving the canonical text of ``value`` (of type ``data_type``) on ``target``; NULL for NULL."""
    kind = kind_of(data_type)
    if kind == "integer":
        return as_text(value)
    if kind == "decimal":
        return _decimal_text(value)
    if kind == "double":
        return _double_text(value, target)
    if kind == "boolean":
        return exp.Case().when(value.copy(), lit("true")).when(exp.Not(this=value.copy()), lit("false"))
    if kind in ("date", "timestamp", "timestamptz"):
        return _temporal_text(value, kind, target)
    if kind == "uuid":
        return exp.Lower(this=as_text(value))
    return as_text(value)


def canonical_text(value: Any) -> str:
    """The canonical text of a Python value (as a database driver returns it), as the SQL builds it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return "0.0" if value == 0 else repr(value)
    if isinstance(value, decimal.Decimal):
        if value == 0:
            return "0"
        text = format(value, "f")
        return text.rstrip("0").rstrip(".") if "." in text else text
    if isinstance(value, datetime.datetime):
        if value.tzinfo is not None:
            value = value.astimezone(datetime.timezone.utc)
        return value.isoformat(sep=" ", timespec="microseconds")
    if isinstance(value, datetime.date):
        return value.isoformat()
    return str(value)  # text, and a uuid.UUID as lower-case hyphenated


# -- SQL ------------------------------------------------------------------------------------------

def _concat(*parts: exp.Expression) -> exp.Expression:
    return exp.Concat(expressions=list(parts), safe=False, coalesce=False)


def _int(n: int) -> exp.Expression:
    return exp.Literal.number(n)


def _trim(text: exp.Expression, chars: str, position: str) -> exp.Expression:
    return exp.Trim(this=text, expression=lit(chars), position=position)


def _strpos(text: exp.Expression, needle: str) -> exp.Expression:
    return exp.StrPosition(this=text, substr=lit(needle))


def _substring(text: exp.Expression, start: exp.Expression, length: exp.Expression | None = None
               ) -> exp.Expression:
    return exp.Substring(this=text, start=start, length=length)


def _decimal_text(value: exp.Expression) -> exp.Expression:
    text = as_text(value)
    stripped = _trim(_trim(text.copy(), "0", "TRAILING"), ".", "TRAILING")
    return exp.Case().when(exp.EQ(this=value.copy(), expression=_int(0)), lit("0")) \
        .when(exp.GT(this=_strpos(text.copy(), "."), expression=_int(0)), stripped).else_(text)


def _double_text(value: exp.Expression, target: DialectProfile) -> exp.Expression:
    double = exp.cast(value.copy(), exp.DataType.build("double"))
    zero = exp.EQ(this=double.copy(), expression=exp.Literal.number("0.0"))
    if target.double_text_is_repr:
        return exp.Case().when(zero, lit("0.0")).else_(as_text(double))
    return exp.Case().when(zero, lit("0.0")).else_(repr_from_shortest(as_text(double), double))


# Python's repr writes a double in plain notation from 1e-4 up to 1e16, else as d.ddde±XX
_PLAIN_FROM, _PLAIN_BELOW = "1e-4", "1e16"
# every double of that range, in its shortest digits (at most 17), fits 16 + 21 decimal places
_PLAIN_DECIMAL = exp.DataType.build("decimal(38, 21)")


def repr_from_shortest(text: exp.Expression, double: exp.Expression) -> exp.Expression:
    """Python's ``repr`` of a non-zero double, rewritten from ``text``, the engine's shortest
    round-trip text of it in any usual notation (``3``, ``3.0``, ``1e+15``, ``1.0E20``, ``NaN``,
    ``Infinity``): the same digits, placed as Python places them.

    In Python's plain range the digits go through an exact decimal (which drops the engine's choice of
    notation); outside it the engine writes them as ``d.ddd`` and an exponent, which are rewritten as
    Python's ``e+XX``.
    """
    lower = exp.Lower(this=text.copy())
    magnitude = exp.Abs(this=double.copy())
    in_plain_range = exp.and_(exp.GTE(this=magnitude.copy(), expression=exp.Literal.number(_PLAIN_FROM)),
                              exp.LT(this=magnitude.copy(), expression=exp.Literal.number(_PLAIN_BELOW)))

    decimal_text = as_text(exp.cast(text.copy(), _PLAIN_DECIMAL))
    trimmed = _trim(decimal_text.copy(), "0", "TRAILING")
    plain = exp.Case().when(exp.EQ(this=_strpos(decimal_text.copy(), "."), expression=_int(0)),
                            _concat(decimal_text.copy(), lit(".0"))) \
        .when(exp.Like(this=trimmed.copy(), expression=lit("%.")), _concat(trimmed.copy(), lit("0"))) \
        .else_(trimmed)

    e_at = _strpos(lower.copy(), "e")
    mantissa = _substring(lower.copy(), _int(1), exp.Sub(this=e_at.copy(), expression=_int(1)))
    exponent = exp.cast(_substring(lower.copy(), exp.Add(this=e_at.copy(), expression=_int(1))),
                        exp.DataType.build("int"))
    scientific = _concat(
        _trim(_trim(mantissa, "0", "TRAILING"), ".", "TRAILING"), lit("e"),
        exp.Case().when(exp.LT(this=exponent.copy(), expression=_int(0)), lit("-")).else_(lit("+")),
        exp.Case().when(exp.LT(this=exp.Abs(this=exponent.copy()), expression=_int(10)), lit("0"))
        .else_(lit("")),
        as_text(exp.Abs(this=exponent.copy())))

    negative = exp.LT(this=double.copy(), expression=_int(0))
    return exp.Case() \
        .when(exp.Like(this=lower.copy(), expression=lit("%nan%")), lit("nan")) \
        .when(exp.Like(this=lower.copy(), expression=lit("%inf%")),
              exp.Case().when(negative, lit("-inf")).else_(lit("inf"))) \
        .when(in_plain_range, plain) \
        .else_(scientific)


_FORMATS = {"date": "%Y-%m-%d", "timestamp": "%Y-%m-%d %H:%M:%S.%f", "timestamptz": "%Y-%m-%d %H:%M:%S.%f"}


def _temporal_text(value: exp.Expression, kind: str, target: DialectProfile) -> exp.Expression:
    suffix = [lit("+00:00")] if kind == "timestamptz" else []
    own = target.temporal_formatter(kind)
    if own is not None:  # sqlglot would format a BigQuery TIMESTAMP with FORMAT_DATE
        function, pattern = own
        zone = [lit("UTC")] if kind == "timestamptz" else []
        formatted: exp.Expression = exp.Anonymous(this=function, expressions=[lit(pattern), value.copy(),
                                                                              *zone])
        return _concat(formatted, *suffix) if suffix else formatted
    if kind == "timestamptz":
        if target.timestamps_in_session_zone:
            value = exp.Anonymous(this="TO_UTC_TIMESTAMP", expressions=[
                value.copy(), exp.Anonymous(this="CURRENT_TIMEZONE", expressions=[])])
        else:
            value = exp.AtTimeZone(this=value.copy(), zone=lit("UTC"))
    formatted = exp.TimeToStr(this=value.copy(), format=lit(_FORMATS[kind]))
    return _concat(formatted, *suffix) if suffix else formatted
