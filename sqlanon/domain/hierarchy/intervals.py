"""Numbers into nested intervals, compiled to portable SQL arithmetic."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal

from sqlglot import exp

from sqlanon.domain.hierarchy.base import TOP, Hierarchy, check_level, null_safe
from sqlanon.errors import HierarchyError
from sqlanon.sql.nodes import as_double, as_text, data_type, lit

MAX_DECIMALS = 9
MAX_MAGNITUDE = 10**15
"""Bounds beyond this are not exact as doubles (2**53 ~ 9e15), so their intervals could not be told apart."""
"""Widths, origin and codes may have at most this many decimal places."""


def _decimal(value: object, path: str) -> Decimal:
    if isinstance(value, bool) or not isinstance(value, (int, float, Decimal)):
        raise HierarchyError(f"must be a number, got {value!r}", path=path)
    d = Decimal(repr(value)) if isinstance(value, float) else Decimal(value)
    if not d.is_finite():
        raise HierarchyError(f"must be a finite number, got {value!r}", path=path)
    return d


def _parameter(value: object, path: str) -> Decimal:
    """A width, origin or bound: a finite number of at most :data:`MAX_MAGNITUDE`."""
    d = _decimal(value, path)
    if abs(d) > MAX_MAGNITUDE:
        raise HierarchyError(f"must be at most 1e+15 in absolute value (larger numbers are not exact "
                             f"as doubles), got {value!r}", path=path)
    return d


def _decimals(d: Decimal) -> int:
    exponent = d.normalize().as_tuple().exponent
    assert isinstance(exponent, int)
    return max(0, -exponent)


def format_fixed(value: Decimal, decimals: int) -> str:
    """``value`` with exactly ``decimals`` decimal places, as the SQL labels print it.

    >>> format_fixed(Decimal("-2.5"), 2), format_fixed(Decimal(20), 0)
    ('-2.50', '20')
    """
    return f"{value:.{decimals}f}"


@dataclass(frozen=True)
class IntervalHierarchy(Hierarchy):
    """Numbers into nested half-open intervals ``[lo, hi)`` aligned on ``origin``.

    ``widths=[5, 10, 50]`` gives ``[20, 25)``, ``[20, 30)``, ``[0, 50)`` and then ``*``. Each width must
    be a multiple of the previous one, so that every interval has exactly one parent. Widths may be
    non-integers (``[0.5, 1]``); labels then print every bound with the same number of decimals
    (``[2.5, 3.0)``). A value ``x`` falls in ``[lo, hi)`` when ``lo <= x < hi`` with the bounds read
    as the nearest doubles to their decimal values (so 0.3 is in ``[0.3, 0.4)``, as a person expects).

    ``bottom``/``top`` code the tails: values below ``bottom`` become ``<bottom`` and values at or
    above ``top`` become ``>=top`` at every level below the top. NULL stays NULL below the top.

    Example:
        >>> from sqlanon.sql.nodes import col
        >>> h = IntervalHierarchy((5, 10), bottom=18)
        >>> h.height, h.describe()
        (3, 'intervals of widths 5, 10 (bottom 18) then *')
    """

    widths: tuple[float, ...]
    origin: float = 0
    bottom: float | None = None
    top: float | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "widths", tuple(self.widths))
        if not self.widths:
            raise HierarchyError("intervals need at least one width", path="widths")
        widths = [_parameter(w, f"widths[{i}]") for i, w in enumerate(self.widths)]
        for i, w in enumerate(widths):
            if w <= 0:
                raise HierarchyError(f"width {self.widths[i]!r} must be > 0", path=f"widths[{i}]")
        for i in range(1, len(widths)):
            if widths[i] % widths[i - 1] != 0:
                raise HierarchyError(
                    f"width {self.widths[i]!r} is not a multiple of the previous width "
                    f"{self.widths[i - 1]!r}; its intervals would have two parents",
                    path=f"widths[{i}]")
        params = [*widths, _parameter(self.origin, "origin")]
        for name in ("bottom", "top"):
            if getattr(self, name) is not None:
                params.append(_parameter(getattr(self, name), name))
        if self.bottom is not None and self.top is not None and self.bottom >= self.top:
            raise HierarchyError(f"bottom ({self.bottom!r}) must be below top ({self.top!r})",
                                 path="bottom")
        decimals = max(_decimals(d) for d in params)
        if decimals > MAX_DECIMALS:
            raise HierarchyError(f"widths, origin, bottom and top may have at most {MAX_DECIMALS} "
                                 f"decimal places, got {decimals}", path="widths")
        object.__setattr__(self, "_decimals", decimals)

    @property
    def decimals(self) -> int:
        """Decimal places printed in labels (the most any parameter needs)."""
        return self._decimals  # type: ignore[attr-defined]

    @property
    def height(self) -> int:
        return len(self.widths) + 1

    def _scaled(self, value: float) -> int:
        """``value`` in units of 10**-decimals, exactly."""
        return int(_decimal(value, "") * 10 ** self.decimals)

    def _label_number(self, value: float) -> str:
        return format_fixed(_decimal(value, ""), self.decimals)

    def class_key(self, column: exp.Expression, level: int) -> exp.Expression:
        """The interval's index (an integer, NULL for NULL) where no tail is coded: one index per label."""
        check_level(self, level)
        if level in (0, self.height) or self.bottom is not None or self.top is not None:
            return self.expression(column, level)
        return self._index(as_double(column), level)[0]

    def _index(self, x: exp.Expression, level: int
               ) -> tuple[exp.Expression, Callable[[exp.Expression], exp.Expression], int]:
        """The index of the interval of ``x`` (a double) at ``level``, the start of an interval of a
        given index (in units of 10**-decimals) and the width in those units."""
        scale = 10 ** self.decimals
        w, o = self._scaled(self.widths[level - 1]), self._scaled(self.origin)

        def bound(k: exp.Expression) -> exp.Expression:
            """The double nearest to the decimal k / scale (correctly rounded division)."""
            d = as_double(k)
            return d if scale == 1 else exp.Div(this=d, expression=lit(scale), typed=False, safe=False)

        def start(index: exp.Expression) -> exp.Expression:
            return exp.Add(this=lit(o), expression=exp.Mul(this=exp.Paren(this=index),
                                                         expression=lit(w)))

        scaled_x = x.copy() if scale == 1 else exp.Mul(this=x.copy(), expression=lit(scale))
        guess = exp.cast(exp.Floor(this=exp.Div(
            this=exp.Paren(this=exp.Sub(this=scaled_x, expression=lit(o))), expression=lit(w),
            typed=False, safe=False)), data_type("bigint"), copy=False)
        # the double division may land one interval off next to a bound: compare with the bounds
        fix = (exp.Case()
               .when(exp.LT(this=x.copy(), expression=bound(start(guess.copy()))), lit(-1), copy=False)
               .when(exp.GTE(this=x.copy(), expression=bound(start(exp.Add(
                   this=guess.copy(), expression=lit(1))))), lit(1), copy=False)
               .else_(lit(0), copy=False))
        return exp.Add(this=guess, expression=fix), start, w

    def expression(self, column: exp.Expression, level: int) -> exp.Expression:
        check_level(self, level)
        if level == 0:
            return column
        if level == self.height:
            return lit(TOP)
        x = as_double(column)
        index, start, w = self._index(x, level)
        lo = start(index)
        hi = exp.Add(this=start(index.copy()), expression=lit(w))
        label: exp.Expression = _concat(lit("["), self._format(lo), lit(", "), self._format(hi),
                                        lit(")"))
        case = exp.Case()
        if self.bottom is not None:
            case = case.when(exp.LT(this=x.copy(), expression=_double_literal(self.bottom)),
                             lit(f"<{self._label_number(self.bottom)}"), copy=False)
        if self.top is not None:
            case = case.when(exp.GTE(this=x.copy(), expression=_double_literal(self.top)),
                             lit(f">={self._label_number(self.top)}"), copy=False)
        value = case.else_(label, copy=False) if case.args.get("ifs") else label
        return null_safe(column, value)

    def _format(self, k: exp.Expression) -> exp.Expression:
        """The integer ``k`` (in units of 10**-decimals) as fixed-point text, with integer SQL only."""
        if self.decimals == 0:
            return as_text(k)
        scale = 10 ** self.decimals
        magnitude = exp.Abs(this=k.copy())
        whole = exp.cast(exp.Floor(this=exp.Div(this=as_double(magnitude.copy()), expression=lit(scale),
                                                typed=False, safe=False)),
                         data_type("bigint"), copy=False)
        fraction = exp.Mod(this=magnitude.copy(), expression=lit(scale))
        sign = exp.Case().when(exp.LT(this=k.copy(), expression=lit(0)), lit("-"), copy=False).else_(
            lit(""), copy=False)
        return _concat(sign, as_text(whole), lit("."),
                       exp.Pad(this=as_text(fraction), expression=lit(self.decimals),
                               fill_pattern=lit("0"), is_left=True))

    def row_wise(self, level: int) -> bool:
        return True

    def describe(self) -> str:
        codes = [f"{n} {v!r}" for n, v in (("bottom", self.bottom), ("top", self.top)) if v is not None]
        widths = ", ".join(repr(w) for w in self.widths)
        return f"intervals of widths {widths}" + (f" ({', '.join(codes)})" if codes else "") + " then *"


def _double_literal(value: float) -> exp.Expression:
    """A double literal: integers are exact anyway; decimals are cast so every dialect compares doubles."""
    if float(value).is_integer() and abs(value) < 2 ** 53:
        return lit(int(value))
    if not math.isfinite(value):
        raise HierarchyError(f"must be a finite number, got {value!r}")
    return as_double(lit(float(value)))


def _concat(*parts: exp.Expression) -> exp.Expression:
    return exp.Concat(expressions=list(parts), safe=False, coalesce=False)
