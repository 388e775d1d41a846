"""What each generalization level means, in words, from the attribute's hierarchy."""

from __future__ import annotations

from typing import Any

from sqlanon.domain.hierarchy.base import Hierarchy


def _number(v: float) -> str:
    return f"{v:g}"


def meaning(h: Hierarchy, level: int) -> str:
    """``age: 20-year intervals``, ``zip: 3 characters masked``, a table's level with an example."""
    if level == 0:
        return "original values"
    if level >= h.height:
        return "fully generalized (*)"
    widths = getattr(h, "widths", None)
    if widths is not None:
        return f"intervals of width {_number(widths[level - 1])}"
    units = getattr(h, "units", None)
    if units is not None:
        return f"dates by {units[level - 1]}"
    char = getattr(h, "char", None)
    if char is not None and hasattr(h, "from_right"):
        side = "last" if h.from_right else "first"
        return f"{level} {side} character{'s' if level > 1 else ''} masked with {char}"
    table = h.table()
    if table is not None:
        example = _example(table.rows, level)
        if example is not None:
            return f"level {level} of {h.height} (e.g. {example[0]} → {example[1]})"
    return f"level {level} of {h.height}: {h.describe()}"


def _example(rows: Any, level: int) -> tuple[str, str] | None:
    """A leaf whose level ``level`` label differs from it (the first such row)."""
    for row in rows:
        if len(row) > level and row[0] is not None and row[level] != row[0]:
            return str(row[0]), str(row[level])
    return None


def meanings(hierarchies: dict[str, Hierarchy], levels: dict[str, int]) -> dict[str, str]:
    return {a: meaning(hierarchies[a], lv) for a, lv in levels.items() if a in hierarchies}
