"""Plain-Python generalizations, written from the builders' documented rules (not from their SQL).

Each function maps one value to its label at one level; ``None`` is SQL NULL.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from fractions import Fraction
from typing import Any


def _frac(v: float | int) -> Fraction:
    return Fraction(Decimal(repr(v))) if isinstance(v, float) else Fraction(v)


def _fixed(v: Fraction, decimals: int) -> str:
    """Fixed-point text of an exact value with ``decimals`` places (v has at most that many)."""
    scaled = v * 10 ** decimals
    assert scaled.denominator == 1
    n = scaled.numerator
    sign = "-" if n < 0 else ""
    n = abs(n)
    if decimals == 0:
        return f"{sign}{n}"
    return f"{sign}{n // 10 ** decimals}.{n % 10 ** decimals:0{decimals}d}"


def decimals_of(*params: float | int | None) -> int:
    out = 0
    for p in params:
        if p is None:
            continue
        exponent = Decimal(repr(p) if isinstance(p, float) else p).normalize().as_tuple().exponent
        out = max(out, -exponent)
    return out


def interval(x: float | None, level: int, widths: list[float], origin: float = 0,
             bottom: float | None = None, top: float | None = None) -> str | None:
    """``[lo, hi)`` with lo = origin + i*w such that float(lo) <= x < float(hi) (bounds as doubles)."""
    height = len(widths) + 1
    if level == height:
        return "*"
    if x is None:
        return None
    d = decimals_of(*widths, origin, bottom, top)
    if bottom is not None and x < float(_frac(bottom)):
        return "<" + _fixed(_frac(bottom), d)
    if top is not None and x >= float(_frac(top)):
        return ">=" + _fixed(_frac(top), d)
    w, o = _frac(widths[level - 1]), _frac(origin)
    i = (Fraction(x) - o) // w  # exact, then move to the interval whose double bounds hold x
    while x < float(o + i * w):
        i -= 1
    while x >= float(o + (i + 1) * w):
        i += 1
    lo = o + i * w
    return f"[{_fixed(lo, d)}, {_fixed(lo + w, d)})"


def as_date(v: Any) -> dt.date:
    if isinstance(v, dt.datetime):
        return v.date()
    if isinstance(v, dt.date):
        return v
    return dt.date.fromisoformat(str(v)[:10])


def date(v: Any, level: int, units: list[str]) -> str | None:
    if level == len(units) + 1:
        return "*"
    if v is None:
        return None
    d = as_date(v)
    y, m = d.year, d.month
    return {
        "month": f"{y:04d}-{m:02d}",
        "quarter": f"{y:04d}-Q{(m - 1) // 3 + 1}",
        "year": f"{y:04d}",
        "decade": f"{y - y % 10:04d}s",
        "century": f"{y - y % 100:04d}-{y - y % 100 + 99:04d}",
    }[units[level - 1]]


def mask(v: Any, level: int, levels: int, from_right: bool = True, char: str = "*") -> str | None:
    if v is None:
        return char * levels if level == levels else None
    s = str(v)
    if len(s) <= level:
        return char * len(s)
    return s[: len(s) - level] + char * level if from_right else char * level + s[level:]


def ordered(v: Any, level: int, values: list[str], sizes: list[int]) -> str | None:
    if level == len(sizes) + 1:
        return "*"
    if v is None:
        return None
    i = values.index(v)
    size = sizes[level - 1]
    run = values[i - i % size: i - i % size + size]
    return run[0] if len(run) == 1 else f"{run[0]}-{run[-1]}"


def nests(rows: list[tuple[Any, ...]]) -> list[str]:
    """Violations of "each label at level j has exactly one parent at level j+1" (empty = proper)."""
    problems = []
    for j in range(1, len(rows[0]) - 1):
        parent: dict[Any, Any] = {}
        for r in rows:
            if parent.setdefault(r[j], r[j + 1]) != r[j + 1]:
                problems.append(f"level {j}: {r[j]!r} -> {parent[r[j]]!r} and {r[j + 1]!r}")
    return problems
