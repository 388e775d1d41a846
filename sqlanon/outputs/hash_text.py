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
import uuid
from collections.abc import Iterable
from typing import Any

from sqlglot import exp

from sqlanon.compile.dialects import DialectProfile
from sqlanon.compile.sql import as_text, lit

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
        try:
            types[name] = exp.DataType.build(sql_type, dialect=dialect)
        except Exception:  # noqa: BLE001 - an unknown type name: treated as text
            continue
    return types


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
    if isinstance(value, uuid.UUID):
        return str(value)
    return str(value)


# -- SQL ------------------------------------------------------------------------------------------

def _concat(*parts: exp.Expression) -> exp.Expression:
    return exp.Concat(expressions=list(parts), safe=False, coalesce=False)


def _int(n: int) -> exp.Expression:
    return exp.Literal.number(n)


def _pad(text: exp.Expression, length: exp.Expression, left: bool) -> exp.Expression:
    """Pad with zeros to ``length`` (an INT: DuckDB has no LPAD over BIGINT)."""
    return exp.Pad(this=text, expression=exp.cast(length, exp.DataType.build("int")), fill_pattern=lit("0"),
                   is_left=left)


def _trim(text: exp.Expression, chars: str, position: str) -> exp.Expression:
    return exp.Trim(this=text, expression=lit(chars), position=position)


def _strpos(text: exp.Expression, needle: str) -> exp.Expression:
    return exp.StrPosition(this=text, substr=lit(needle))


def _substring(text: exp.Expression, start: exp.Expression, length: exp.Expression | None = None
               ) -> exp.Expression:
    return exp.Substring(this=text, start=start, length=length)


def _length(text: exp.Expression) -> exp.Expression:
    return exp.Length(this=text)


def _decimal_text(value: exp.Expression) -> exp.Expression:
    text = as_text(value)
    stripped = _trim(_trim(text.copy(), "0", "TRAILING"), ".", "TRAILING")
    return exp.Case().when(exp.EQ(this=value.copy(), expression=_int(0)), lit("0")) \
        .when(exp.GT(this=_strpos(text.copy(), "."), expression=_int(0)), stripped).else_(text)


def _double_text(value: exp.Expression, target: DialectProfile) -> exp.Expression:
    double = exp.cast(value.copy(), exp.DataType.build("double"))
    zero = exp.EQ(this=double.copy(), expression=exp.Literal.number("0.0"))
    if target.name == "duckdb":  # DuckDB's cast already writes Python's repr
        return exp.Case().when(zero, lit("0.0")).else_(as_text(double))
    return exp.Case().when(zero, lit("0.0")).else_(python_float_repr(as_text(double), double))


def python_float_repr(text: exp.Expression, double: exp.Expression) -> exp.Expression:
    """Python's ``repr`` of a non-zero double, rewritten from ``text``, the engine's shortest
    round-trip text of it in any usual notation (``3``, ``3.0``, ``1e+20``, ``1.0E20``, ``NaN``,
    ``Infinity``): the same digits, placed as Python places them (exponent below 1e-4 and from 1e16
    on, at least two exponent digits)."""
    lower = exp.Lower(this=text)
    negative = exp.LT(this=double.copy(), expression=_int(0))
    sign = exp.Case().when(negative.copy(), lit("-")).else_(lit(""))
    a = _trim(lower.copy(), "-", "LEADING")  # the magnitude's text
    e_at = _strpos(a.copy(), "e")
    no_e = exp.EQ(this=e_at.copy(), expression=_int(0))
    mantissa = exp.Case().when(no_e.copy(), a.copy()).else_(
        _substring(a.copy(), _int(1), exp.Sub(this=e_at.copy(), expression=_int(1))))
    exponent = exp.Case().when(no_e.copy(), _int(0)).else_(exp.cast(
        _substring(a.copy(), exp.Add(this=e_at.copy(), expression=_int(1))), exp.DataType.build("int")))
    point = _strpos(mantissa.copy(), ".")
    before_point = exp.Case().when(exp.EQ(this=point.copy(), expression=_int(0)), _length(mantissa.copy())) \
        .else_(exp.Sub(this=point.copy(), expression=_int(1)))
    all_digits = exp.Case().when(exp.EQ(this=point.copy(), expression=_int(0)), mantissa.copy()).else_(
        _concat(_substring(mantissa.copy(), _int(1), exp.Sub(this=point.copy(), expression=_int(1))),
                _substring(mantissa.copy(), exp.Add(this=point.copy(), expression=_int(1)))))
    unpadded = _trim(all_digits.copy(), "0", "LEADING")
    leading_zeros = exp.Paren(this=exp.Sub(this=_length(all_digits.copy()), expression=_length(unpadded.copy())))
    digits = _trim(unpadded, "0", "TRAILING")
    e10 = exp.Paren(this=exp.Add(this=exp.Sub(this=exp.Sub(this=before_point, expression=_int(1)),
                                               expression=leading_zeros), expression=exponent))
    n = _length(digits.copy())

    def e(): return e10.copy()

    def d(): return digits.copy()

    scientific = _concat(
        _substring(d(), _int(1), _int(1)),
        exp.Case().when(exp.GT(this=n.copy(), expression=_int(1)), _concat(lit("."), _substring(d(), _int(2))))
        .else_(lit("")),
        lit("e"),
        exp.Case().when(exp.LT(this=e(), expression=_int(0)), lit("-")).else_(lit("+")),
        exp.Case().when(exp.LT(this=exp.Abs(this=e()), expression=_int(10)), lit("0")).else_(lit("")),
        as_text(exp.Abs(this=e())))
    below_one = _concat(lit("0."), _pad(lit(""), exp.Sub(this=exp.Neg(this=e()), expression=_int(1)), left=True),
                        d())
    whole = exp.Add(this=e(), expression=_int(1))
    plain = exp.Case().when(
        exp.GT(this=n.copy(), expression=whole.copy()),
        _concat(_substring(d(), _int(1), whole.copy()), lit("."),
                _substring(d(), exp.Add(this=e(), expression=_int(2))))
    ).else_(_concat(_pad(d(), whole.copy(), left=False), lit(".0")))
    finite = exp.Case().when(exp.or_(exp.LT(this=e(), expression=_int(-4)),
                                     exp.GTE(this=e(), expression=_int(16))), scientific) \
        .when(exp.LT(this=e(), expression=_int(0)), below_one).else_(plain)
    return exp.Case() \
        .when(exp.Like(this=lower.copy(), expression=lit("%nan%")), lit("nan")) \
        .when(exp.Like(this=lower.copy(), expression=lit("%inf%")), _concat(sign.copy(), lit("inf"))) \
        .else_(_concat(sign, finite))


_FORMATS = {"date": "%Y-%m-%d", "timestamp": "%Y-%m-%d %H:%M:%S.%f", "timestamptz": "%Y-%m-%d %H:%M:%S.%f"}
_BIGQUERY = {"date": ("FORMAT_DATE", "%Y-%m-%d"), "timestamp": ("FORMAT_DATETIME", "%Y-%m-%d %H:%M:%E6S"),
             "timestamptz": ("FORMAT_TIMESTAMP", "%Y-%m-%d %H:%M:%E6S")}


def _temporal_text(value: exp.Expression, kind: str, target: DialectProfile) -> exp.Expression:
    suffix = [lit("+00:00")] if kind == "timestamptz" else []
    if target.name == "bigquery":  # sqlglot would format a TIMESTAMP with FORMAT_DATE
        function, pattern = _BIGQUERY[kind]
        zone = [lit("UTC")] if kind == "timestamptz" else []
        formatted: exp.Expression = exp.Anonymous(this=function, expressions=[lit(pattern), value.copy(),
                                                                              *zone])
        return _concat(formatted, *suffix) if suffix else formatted
    if kind == "timestamptz":
        if target.name == "spark":  # a Spark timestamp is shown in the session's zone
            value = exp.Anonymous(this="TO_UTC_TIMESTAMP", expressions=[
                value.copy(), exp.Anonymous(this="CURRENT_TIMEZONE", expressions=[])])
        else:
            value = exp.AtTimeZone(this=value.copy(), zone=lit("UTC"))
    formatted = exp.TimeToStr(this=value.copy(), format=lit(_FORMATS[kind]))
    return _concat(formatted, *suffix) if suffix else formatted
