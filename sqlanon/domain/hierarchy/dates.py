"""Dates up a ladder of calendar units, compiled to portable SQL."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from sqlglot import exp

from sqlanon.domain.hierarchy.base import TOP, Hierarchy, check_level, null_safe
from sqlanon.errors import HierarchyError, did_you_mean
from sqlanon.registry import Registry
from sqlanon.sql.nodes import as_double, as_text, lit

LabelOf = Callable[[exp.Expression, exp.Expression], exp.Expression]
"""``(date, year) -> label`` of one unit, from the date and its year as integer."""

DATE_UNITS: Registry[LabelOf] = Registry("date unit", sort=False)
"""Unit -> its label, registered from finest to coarsest."""


@DATE_UNITS.register("month")
def _month(date: exp.Expression, year: exp.Expression) -> exp.Expression:
    return _concat(_year_text(year), lit("-"), _pad(as_text(_month_of(date)), 2))


@DATE_UNITS.register("quarter")
def _quarter(date: exp.Expression, year: exp.Expression) -> exp.Expression:
    quarter = exp.Add(this=_floor_div(exp.Sub(this=_month_of(date), expression=lit(1)), 3),
                      expression=lit(1))
    return _concat(_year_text(year), lit("-Q"), as_text(quarter))


@DATE_UNITS.register("year")
def _year(date: exp.Expression, year: exp.Expression) -> exp.Expression:
    return _year_text(year)


@DATE_UNITS.register("decade")
def _decade(date: exp.Expression, year: exp.Expression) -> exp.Expression:
    return _concat(_pad(as_text(exp.Mul(this=_floor_div(year, 10), expression=lit(10))), 4), lit("s"))


@DATE_UNITS.register("century")
def _century(date: exp.Expression, year: exp.Expression) -> exp.Expression:
    start = exp.Mul(this=_floor_div(year, 100), expression=lit(100))
    return _concat(_pad(as_text(start), 4), lit("-"),
                   _pad(as_text(exp.Add(this=start.copy(), expression=lit(99))), 4))


def _year_text(year: exp.Expression) -> exp.Expression:
    return _pad(as_text(year.copy()), 4)


def _month_of(date: exp.Expression) -> exp.Expression:
    return exp.cast(exp.Extract(this=exp.var("MONTH"), expression=date.copy()), exp.DataType.build("int"))


@dataclass(frozen=True)
class DateHierarchy(Hierarchy):
    """Dates up a ladder of units, fine to coarse.

    Labels: month ``2021-03``, quarter ``2021-Q1``, year ``2021``, decade ``2020s``, century
    ``2000-2099``; then ``*``. Years print with four digits (``0999``), as in ISO 8601. The column
    may be a DATE, a TIMESTAMP or ISO 8601 text (``2021-03-14``, ``2021-03-14T10:00:00``): its first
    ten characters as text are read as the date, which every target prints the same way. NULL stays
    NULL below the top.

    Example:
        >>> DateHierarchy(("month", "year")).height
        3
    """

    units: tuple[str, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "units", tuple(self.units))
        if not self.units:
            raise HierarchyError("a date hierarchy needs at least one unit", path="")
        for i, u in enumerate(self.units):
            if u not in DATE_UNITS:
                raise HierarchyError(f"unknown date unit {u!r}; use one of {', '.join(DATE_UNITS)}."
                                     + did_you_mean(str(u), DATE_UNITS), path=f"[{i}]")
        units = DATE_UNITS.names()
        order = [units.index(u) for u in self.units]
        if order != sorted(set(order)):
            raise HierarchyError("date units must go from fine to coarse without repeats "
                                 f"({', '.join(DATE_UNITS)})", path="")

    @property
    def height(self) -> int:
        return len(self.units) + 1

    def expression(self, column: exp.Expression, level: int) -> exp.Expression:
        check_level(self, level)
        if level == 0:
            return column
        if level == self.height:
            return lit(TOP)
        date = exp.cast(exp.Substring(this=as_text(column), start=lit(1), length=lit(10)),
                        exp.DataType.build("date"))
        year = exp.cast(exp.Extract(this=exp.var("YEAR"), expression=date), exp.DataType.build("int"))
        return null_safe(column, DATE_UNITS.get(self.units[level - 1])(date, year))

    def describe(self) -> str:
        return f"dates by {', '.join(self.units)} then *"


def _floor_div(value: exp.Expression, divisor: int) -> exp.Expression:
    """floor(value / divisor) as an integer, in double arithmetic on every dialect."""
    return exp.cast(exp.Floor(this=exp.Div(this=as_double(exp.Paren(this=value)), expression=lit(divisor),
                                           typed=False, safe=False)), exp.DataType.build("int"))


def _pad(text: exp.Expression, width: int) -> exp.Expression:
    """Zero-padded on the left to ``width`` characters (years 1-9999 print as in ISO 8601)."""
    return exp.Pad(this=text, expression=lit(width), fill_pattern=lit("0"), is_left=True)


def _concat(*parts: exp.Expression) -> exp.Expression:
    return exp.Concat(expressions=list(parts), safe=False, coalesce=False)
