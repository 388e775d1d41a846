"""Hierarchies that read a column as numbers or dates, checked against the column before any scan.

An ``intervals`` hierarchy casts its column to a number and a ``date`` hierarchy reads its first ten
characters as a date. On a column of another type (text, above all) the cast fails in the middle of
the first scan, with an engine message that names neither the attribute nor the hierarchy. A column
whose type already fits is not read; any other is tried once with the hierarchy's first level, and a
value that does not convert is an error naming the attribute's hierarchy.
"""

from __future__ import annotations

from collections.abc import Mapping

from sqlglot import exp

from sqlanon.domain.hierarchy.base import Hierarchy
from sqlanon.domain.hierarchy.dates import DateHierarchy
from sqlanon.domain.hierarchy.intervals import IntervalHierarchy
from sqlanon.engines.base import Engine
from sqlanon.errors import EngineError, SpecError
from sqlanon.sql.nodes import col

_NUMBER_TYPES = ("int", "decimal", "numeric", "double", "float", "real")
_DATE_TYPES = ("date", "timestamp")


def _needs(h: Hierarchy | None) -> tuple[str, str, tuple[str, ...]] | None:
    """(hierarchy kind, what it reads, the SQL type names that fit) for a casting hierarchy."""
    if isinstance(h, IntervalHierarchy):
        return "intervals", "numbers", _NUMBER_TYPES
    if isinstance(h, DateHierarchy):
        return "date", "dates", _DATE_TYPES
    return None


def check_value_types(engine: Engine, relation: exp.Table, columns: Mapping[str, str],
                      hierarchies: Mapping[str, Hierarchy | None], source: str | None) -> None:
    """Raise a :class:`SpecError` naming ``attributes.<a>.hierarchy`` when a value of column ``a``
    does not convert to what its hierarchy reads.

    Args:
        columns: every column's SQL type, as the engine reports it.
        hierarchies: the hierarchy of each attribute to check.
        source: the spec file, for the message.
    """
    for attribute, h in hierarchies.items():
        need = _needs(h)
        if need is None or h is None or h.height < 1:
            continue
        kind, reads, fitting = need
        sql_type = columns.get(attribute, "")
        lowered = sql_type.lower().replace("interval", "")  # a time span, not an integer
        if any(t in lowered for t in fitting):
            continue
        first_level = h.expression(col(attribute), 1)
        probe = exp.select(exp.Count(this=exp.Distinct(expressions=[first_level]))).from_(relation.copy())
        try:
            engine.fetch(probe, purpose=f"read {attribute!r} as {reads}")
        except EngineError:
            raise SpecError(f"the {kind} hierarchy reads {reads}, but column {attribute!r} is "
                            f"{sql_type or 'of another type'} and holds values that are not {reads}: "
                            f"store the column as {reads}, or use a mask or map hierarchy",
                            path=f"attributes.{attribute}.hierarchy", source=source) from None
