"""Dates up a ladder of calendar units, compiled to portable SQL."""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp

from sqlanon.sql.nodes import as_double, as_text, lit
from sqlanon.errors import HierarchyError, did_you_mean
from sqlanon.domain.hierarchy.base import TOP, Hierarchy, check_level, null_safe

DATE_UNITS = ("month", "quarter", "year", "decade", "century")
"""From finest to coarsest."""


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
        order = [DATE_UNITS.index(u) for u in self.units]
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
        unit = self.units[level - 1]
        int_t = exp.DataType.build("int")
        date = exp.cast(exp.Substring(this=as_text(column), start=lit(1), length=lit(10)),
                        exp.DataType.build("date"))
        year = exp.cast(exp.Extract(this=exp.var("YEAR"), expression=date), int_t)
        year_text = _pad(as_text(year.copy()), 4)
        if unit in ("month", "quarter"):
            month = exp.cast(exp.Extract(this=exp.var("MONTH"), expression=date.copy()), int_t)
            if unit == "month":
                label = _concat(year_text, lit("-"), _pad(as_text(month), 2))
            else:
                quarter = exp.Add(this=_floor_div(exp.Sub(this=month, expression=lit(1)), 3),
                                  expression=lit(1))
                label = _concat(year_text, lit("-Q"), as_text(quarter))
        elif unit == "year":
            label = year_text
        elif unit == "decade":
            label = _concat(_pad(as_text(exp.Mul(this=_floor_div(year, 10), expression=lit(10))), 4),
                            lit("s"))
        else:
            start = exp.Mul(this=_floor_div(year, 100), expression=lit(100))
            label = _concat(_pad(as_text(start), 4), lit("-"),
                            _pad(as_text(exp.Add(this=start.copy(), expression=lit(99))), 4))
        return null_safe(column, label)

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
