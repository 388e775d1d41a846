"""Hierarchies defined by a rule rather than a table; each level compiles to a SQL expression."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlglot import exp

from sqlanon.compile.sql import as_text, lit
from sqlanon.errors import HierarchyError
from sqlanon.hierarchy.base import TOP, Hierarchy, check_level


def _null_safe(column: exp.Expression, value: exp.Expression) -> exp.Expression:
    """NULL stays NULL below the top level (a value of its own that generalizes like any other)."""
    return exp.Case().when(exp.Is(this=column, expression=exp.Null()), exp.Null()).else_(value)


def _number(v: float) -> exp.Expression:
    return lit(int(v) if float(v).is_integer() else float(v))


@dataclass(frozen=True)
class IntervalHierarchy(Hierarchy):
    """Numbers into nested intervals: ``widths=[5, 10, 50]`` gives ``[20, 25)``, ``[20, 30)``, ``[0, 50)``, ``*``.

    ``bottom``/``top`` code the tails: values below ``bottom`` become ``<bottom`` and values at or above
    ``top`` become ``>=top`` at every level below the top. Widths must each divide the next so that
    every interval has one parent.
    """

    widths: tuple[float, ...]
    origin: float = 0
    bottom: float | None = None
    top: float | None = None

    def __post_init__(self) -> None:
        if not self.widths:
            raise HierarchyError("intervals need at least one width", path="intervals.widths")
        for i, w in enumerate(self.widths):
            if not w > 0:
                raise HierarchyError(f"width {w!r} must be > 0", path=f"intervals.widths[{i}]")
        for i in range(1, len(self.widths)):
            ratio = self.widths[i] / self.widths[i - 1]
            if ratio < 1 or abs(ratio - round(ratio)) > 1e-9:
                raise HierarchyError(
                    f"width {self.widths[i]!r} is not a multiple of the previous width "
                    f"{self.widths[i - 1]!r}; intervals would have two parents",
                    path=f"intervals.widths[{i}]")
        if self.bottom is not None and self.top is not None and self.bottom >= self.top:
            raise HierarchyError("bottom must be below top", path="intervals")

    @property
    def height(self) -> int:
        return len(self.widths) + 1

    def _integral(self) -> bool:
        vals = [*self.widths, self.origin, *(v for v in (self.bottom, self.top) if v is not None)]
        return all(float(v).is_integer() for v in vals)

    def expression(self, column: exp.Expression, level: int) -> exp.Expression:
        check_level(self, level)
        if level == 0:
            return column
        if level == self.height:
            return lit(TOP)
        w = self.widths[level - 1]
        x = exp.cast(column, exp.DataType.build("double"))
        lo = exp.Add(
            this=exp.Mul(this=exp.Floor(this=exp.Div(this=exp.Paren(this=exp.Sub(
                this=x, expression=_number(self.origin))), expression=_number(w))),
                expression=_number(w)),
            expression=_number(self.origin))
        hi = exp.Add(this=lo.copy(), expression=_number(w))
        kind = "bigint" if self._integral() else "double"
        lo_t = as_text(exp.cast(lo, exp.DataType.build(kind)))
        hi_t = as_text(exp.cast(hi, exp.DataType.build(kind)))
        label: exp.Expression = exp.Concat(expressions=[lit("["), lo_t, lit(", "), hi_t, lit(")")],
                                           safe=False, coalesce=False)
        case = exp.Case()
        if self.bottom is not None:
            case = case.when(exp.LT(this=x.copy(), expression=_number(self.bottom)),
                             lit(f"<{_fmt(self.bottom)}"))
        if self.top is not None:
            case = case.when(exp.GTE(this=x.copy(), expression=_number(self.top)),
                             lit(f">={_fmt(self.top)}"))
        value = case.else_(label) if case.args.get("ifs") else label
        return _null_safe(column, value)


def _fmt(v: float) -> str:
    return str(int(v)) if float(v).is_integer() else repr(float(v))


_DATE_UNITS = ("month", "quarter", "year", "decade", "century")


@dataclass(frozen=True)
class DateHierarchy(Hierarchy):
    """Dates up a ladder of units, e.g. ``[month, year, decade]``: 2021-03-14 → 2021-03 → 2021 → 2020s → ``*``."""

    units: tuple[str, ...]

    def __post_init__(self) -> None:
        if not self.units:
            raise HierarchyError("a date hierarchy needs at least one unit", path="date")
        for i, u in enumerate(self.units):
            if u not in _DATE_UNITS:
                from sqlanon.errors import did_you_mean

                raise HierarchyError(f"unknown date unit {u!r}; use one of {', '.join(_DATE_UNITS)}."
                                     + did_you_mean(u, _DATE_UNITS), path=f"date[{i}]")
        order = [_DATE_UNITS.index(u) for u in self.units]
        if order != sorted(set(order)):
            raise HierarchyError("date units must go from fine to coarse without repeats "
                                 f"({', '.join(_DATE_UNITS)})", path="date")

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
        date = exp.cast(column, exp.DataType.build("date"))
        year = exp.Extract(this=exp.var("YEAR"), expression=date)
        month = exp.Extract(this=exp.var("MONTH"), expression=date.copy())
        int_t = exp.DataType.build("int")
        if unit == "month":
            label = exp.Concat(expressions=[as_text(exp.cast(year, int_t)), lit("-"), exp.Pad(
                this=as_text(exp.cast(month, int_t)), expression=lit(2), fill_pattern=lit("0"),
                is_left=True)], safe=False, coalesce=False)
        elif unit == "quarter":
            q = exp.Add(this=exp.cast(exp.Floor(this=exp.Div(this=exp.Paren(this=exp.Sub(
                this=exp.cast(month, int_t), expression=lit(1))), expression=lit(3))), int_t),
                expression=lit(1))
            label = exp.Concat(expressions=[as_text(exp.cast(year, int_t)), lit("-Q"), as_text(q)],
                               safe=False, coalesce=False)
        elif unit == "year":
            label = as_text(exp.cast(year, int_t))
        else:
            span = 10 if unit == "decade" else 100
            start = exp.Mul(this=exp.cast(exp.Floor(this=exp.Div(
                this=exp.cast(year, exp.DataType.build("double")), expression=lit(span))), int_t),
                expression=lit(span))
            label = exp.Concat(expressions=[as_text(start), lit("s")], safe=False, coalesce=False)
        return _null_safe(column, label)


@dataclass(frozen=True)
class MaskHierarchy(Hierarchy):
    """Redaction one character per level: 47677 → 4767* → 476** → … → *****.

    ``levels`` is the number of characters masked at the top level; ``from_right`` masks the end.
    Values shorter than the level become all ``*`` of their own length.
    """

    levels: int
    from_right: bool = True
    char: str = "*"

    def __post_init__(self) -> None:
        if not isinstance(self.levels, int) or self.levels < 1:
            raise HierarchyError(f"levels must be an integer >= 1, got {self.levels!r}",
                                 path="mask.levels")
        if len(self.char) != 1:
            raise HierarchyError("the mask character must be exactly one character", path="mask.char")

    @property
    def height(self) -> int:
        return self.levels

    def expression(self, column: exp.Expression, level: int) -> exp.Expression:
        check_level(self, level)
        if level == 0:
            return column
        text = as_text(column)
        length = exp.Length(this=text.copy())
        stars = exp.Repeat(this=lit(self.char), times=lit(level))
        keep = exp.Sub(this=length, expression=lit(level))
        if self.from_right:
            kept = exp.Substring(this=text.copy(), start=lit(1), length=keep)
            masked = exp.Concat(expressions=[kept, stars], safe=False, coalesce=False)
        else:
            kept = exp.Substring(this=text.copy(), start=lit(level + 1), length=keep)
            masked = exp.Concat(expressions=[stars, kept], safe=False, coalesce=False)
        short = exp.Repeat(this=lit(self.char), times=exp.Length(this=text.copy()))
        value = exp.Case().when(exp.LTE(this=length.copy(), expression=lit(level)), short).else_(masked)
        return _null_safe(column, value)


def OrderedHierarchy(values: Sequence[str], group_sizes: Sequence[int], *,  # noqa: N802
                     source: str = "ordered") -> Hierarchy:
    """Ordered categories grouped into runs: ``sizes=[2, 4]`` groups 2 neighbours, then 4, then ``*``.

    Labels are ``first-last`` of each run. Each size must divide the next.
    """
    from sqlanon.hierarchy.table import TableHierarchy

    values = [str(v) for v in values]
    if len(set(values)) != len(values):
        raise HierarchyError("ordered values must be distinct", path=f"{source}.values")
    rows: list[list[str]] = [[v] for v in values]
    prev = 1
    for i, size in enumerate(group_sizes):
        if not isinstance(size, int) or size < 1 or size % prev:
            raise HierarchyError(f"group size {size!r} must be a positive multiple of {prev}",
                                 path=f"{source}.sizes[{i}]")
        prev = size
        for start in range(0, len(values), size):
            run = values[start:start + size]
            label = run[0] if len(run) == 1 else f"{run[0]}-{run[-1]}"
            for r in rows[start:start + size]:
                r.append(label)
    for r in rows:
        r.append(TOP)
    return TableHierarchy(rows, source=source)
