"""A units table's result (:mod:`.units_sql`): the measures of the report (one aggregate each) and the
decisions, as a temporary table (an output written now) or as rows (a view or printed SQL).

The rows of a combination split between units are numbered by the released rows' query (within
their combination); the units of one combination take consecutive ranges of these numbers, in the
order of their unit numbers."""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp

from sqlanon.engines.base import internal_name
from sqlanon.methods.local_suppression.queries import FIRST, LAST, Decision, flag, value
from sqlanon.methods.local_suppression.units_sql import (
    COUNT,
    FK,
    ID,
    UNIT,
    Units,
    code,
    current,
    is_null,
    original,
    sub,
)
from sqlanon.sql.nodes import alias, as_expression, col, count_star, lit, table


@dataclass
class UnitMeasures:
    rows: int
    combinations: int
    cells: list[int]
    rows_touched: int
    achieved_k: float
    split: bool
    """Some combination's rows are in more than one unit."""


def lost(i: int) -> exp.Expression:
    return as_expression(exp.and_(exp.not_(is_null(col(code(i)))), is_null(col(current(i)))))


def any_lost(d: int) -> exp.Expression:
    return as_expression(exp.or_(*[lost(i) for i in range(d)]))


def measures(units: Units, alpha: float) -> UnitMeasures:
    d = units.width
    n = col(COUNT)
    zero = lit(0)
    q = exp.select(exp.Sum(this=n.copy()), exp.Count(this=exp.Distinct(expressions=[col(ID)])), count_star(),
                   *[exp.Sum(this=exp.Case().when(lost(i), n.copy()).else_(zero.copy())) for i in range(d)],
                   exp.Sum(this=exp.Case().when(any_lost(d), n.copy()).else_(zero.copy()))
                   ).from_(table(units.name), copy=False)
    row = units.engine.fetch(q)[1][0]
    lowest = exp.select(exp.Min(this=col(FK))).from_(sub(units.frequencies(alpha), "f"), copy=False)
    low = units.engine.fetch(lowest)[1][0][0]
    return UnitMeasures(int(row[0] or 0), int(row[1]), [int(x or 0) for x in row[3:3 + d]],
                        int(row[3 + d] or 0), float(low or 0.0), int(row[2]) > int(row[1]))


def _ranges(d: int, name: str) -> exp.Select:
    """The units that lose a cell: values, flags and their range of the combination's rows."""
    upto = exp.Window(this=exp.Sum(this=col(COUNT)), partition_by=[col(ID)],
                      order=exp.Order(expressions=[exp.Ordered(this=col(UNIT))]))
    numbered = exp.select(exp.Star(), alias(upto, LAST)).from_(table(name), copy=False)
    first = exp.Add(this=exp.Sub(this=col(LAST), expression=col(COUNT)), expression=lit(1))
    flags = [alias(exp.Case().when(lost(i), lit("1")).else_(lit("0")), flag(i)) for i in range(d)]
    return (exp.select(*[alias(col(original(i)), value(i)) for i in range(d)], *flags, alias(first, FIRST),
                       col(LAST)).from_(sub(numbered, "r"), copy=False).where(any_lost(d), copy=False))


def decision_table(units: Units) -> str:
    """A temporary table of the units that lose a cell: values, flags, first and last row."""
    name = internal_name("cells_decided")
    units.engine.create_table_as(name, _ranges(units.width, units.name), temporary=True)
    return name


def decisions(units: Units) -> list[Decision]:
    """The units that lose a cell, as rows (for a view or printed SQL)."""
    d = units.width
    out = []
    for r in units.engine.fetch(_ranges(d, units.name))[1]:
        out.append(Decision(tuple(None if v is None else str(v) for v in r[:d]),
                            tuple(r[d + i] == "1" for i in range(d)), int(r[2 * d]), int(r[2 * d + 1])))
    out.sort(key=lambda x: (tuple((v is None, str(v)) for v in x.values), x.first))
    return out
