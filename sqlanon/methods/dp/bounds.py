"""Public domain bounds for differential privacy, and the refusal of bounds taken from the data.

Every sensitivity in the DP code is a function of a *public* interval [a_b, a_t] per numeric
attribute (Domingo-Ferrer, Sánchez, Soria-Comas, *Database Anonymization*, 2016, §9.2: "the
domain is not defined by the actual records in X but by the set of values that make sense for each
attribute"; §10.1: Δ(X^i) is the width of that domain). Bounds computed from the data (its minimum
and maximum) would make the noise scale itself a function of the records, and the guarantee void.

So sqlanon never computes bounds: every DP function takes them from the caller, with no default,
and :func:`check_not_data_range` refuses a pair equal to the column's exact minimum and maximum,
the tell-tale of bounds copied from the data, unless the caller states that they are public
(``trust_bounds=True``; a 0/1 indicator, say, has the public domain [0, 1] and may well fill it).
The check is a guard against a common mistake, not part of the guarantee: bounds that are
slightly wider than the data's range but still derived from it are just as unsafe, and only the
caller can know where the numbers came from. Values are clamped to the bounds before any statistic.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlglot import exp

from sqlanon.errors import EngineError, SpecError, did_you_mean
from sqlanon.sql.nodes import alias, as_double, col, table

if TYPE_CHECKING:
    from sqlanon.engines.base import Engine


@dataclass(frozen=True)
class Bounds:
    """A public interval [lower, upper] for one numeric attribute."""

    lower: float
    upper: float

    @property
    def width(self) -> float:
        return self.upper - self.lower

    def clamp(self, column: exp.Expression) -> exp.Expression:
        """SQL: the column as a double, clamped to the interval.

        NULL stays NULL: PostgreSQL's GREATEST and LEAST skip NULL arguments (GREATEST(NULL, 0) is
        0 there, NULL in DuckDB), hence the explicit CASE.
        """
        clamped = exp.Least(this=exp.Greatest(this=as_double(column), expressions=[
            exp.Literal.number(repr(self.lower))]), expressions=[exp.Literal.number(repr(self.upper))])
        return exp.Case(ifs=[exp.If(this=exp.Not(this=exp.Is(this=column.copy(), expression=exp.Null())),
                                    true=clamped)])


def parse_bounds(value: object, attribute: str) -> Bounds:
    """A :class:`Bounds` from a ``(lower, upper)`` pair given by the user.

    Raises:
        SpecError: missing, a string such as ``"data"`` or ``"auto"`` (sqlanon never derives bounds
            from the data), not two finite numbers, or lower >= upper. The message names the
            attribute.
    """
    path = f"bounds.{attribute}"
    missing = value is None or isinstance(value, str) or (
        isinstance(value, (tuple, list)) and any(v is None or isinstance(v, str) for v in value))
    if missing:
        raise SpecError(
            f"public bounds (lower, upper) are required for {attribute!r}, got {value!r}; "
            "sqlanon never derives them from the data (the data's minimum and maximum would make the "
            "noise depend on the records): give the range of values the attribute can take",
            path=path)
    if isinstance(value, Bounds):
        value = (value.lower, value.upper)
    given: Any = value  # of any shape: the unpacking and float() below check it
    try:
        lower, upper = given
        pair = (float(lower), float(upper))
        if isinstance(lower, bool) or isinstance(upper, bool):
            raise TypeError
    except (TypeError, ValueError):
        raise SpecError(f"bounds must be a pair of numbers (lower, upper), got {value!r}",
                        path=path) from None
    if not all(math.isfinite(v) for v in pair):
        raise SpecError(f"bounds must be finite numbers, got {value!r}", path=path)
    if pair[0] >= pair[1]:
        raise SpecError(f"the lower bound must be below the upper bound, got {value!r}", path=path)
    return Bounds(*pair)


def parse_all_bounds(bounds: Mapping[str, object] | None, attributes: list[str]) -> dict[str, Bounds]:
    """:func:`parse_bounds` for every attribute; each one must have an entry (no default exists)."""
    if bounds is None or not isinstance(bounds, Mapping):
        raise SpecError(
            f"public bounds are required for {', '.join(map(repr, attributes))} as a mapping "
            "attribute -> (lower, upper), got " + repr(bounds) + "; sqlanon never derives them from "
            "the data", path="bounds")
    unknown = sorted(set(bounds) - set(attributes))
    if unknown:
        raise SpecError(f"bounds given for {unknown}, which are not attributes being released",
                        path="bounds")
    return {a: parse_bounds(bounds.get(a), a) for a in attributes}


def check_not_data_range(engine: Engine, relation: str, bounds: Mapping[str, Bounds], *,
                         trust_bounds: bool = False, schema: str | None = None) -> None:
    """Refuse bounds equal to the columns' exact minimum and maximum (see the module docstring).

    Raises:
        SpecError: for the first attribute whose bounds are the data's range, unless
            ``trust_bounds``.
    """
    if trust_bounds or not bounds:
        return
    items = list(bounds.items())
    selects = []
    for i, (a, _) in enumerate(items):
        selects += [alias(exp.Min(this=as_double(col(a))), f"lo{i}"),
                    alias(exp.Max(this=as_double(col(a))), f"hi{i}")]
    row = engine.fetch_one(exp.select(*selects).from_(table(relation, schema)))
    for i, (a, b) in enumerate(items):
        lo, hi = row[f"lo{i}"], row[f"hi{i}"]
        if lo is not None and float(lo) == b.lower and float(hi) == b.upper:
            raise SpecError(
                f"the bounds ({b.lower:g}, {b.upper:g}) for {a!r} are exactly the data's minimum and "
                "maximum, which suggests they were taken from the data; that makes the noise depend "
                "on the records and breaks differential privacy. Give the attribute's public range "
                "(what values it can take), or pass trust_bounds=True (CLI: --trust-bounds) if these "
                "bounds are public knowledge", path=f"bounds.{a}")


def require_columns(engine: Engine, relation: str, needed: list[str] | tuple[str, ...], *,
                    relation_path: str, column_path: str, schema: str | None = None) -> None:
    """Refuse a table that does not exist or lacks a needed column (named, with a did-you-mean).

    Raises:
        SpecError: at ``relation_path`` or ``column_path``.
    """
    if not isinstance(relation, str) or not relation:
        raise SpecError(f"the table must be a non-empty name, got {relation!r}", path=relation_path)
    try:
        present = [c for c, _ in engine.columns(relation, schema)]
    except EngineError:
        raise SpecError(f"no table or view named {relation!r} in the database",
                        path=relation_path) from None
    for c in needed:
        if c not in present:
            raise SpecError(f"{c!r} is not a column of {relation!r}" + did_you_mean(c, present),
                            path=column_path)
