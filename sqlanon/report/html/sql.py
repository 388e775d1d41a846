"""Small aggregate queries the report's figures read (sqlglot trees; every name quoted)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlglot import exp

from sqlanon.engines.base import Engine
from sqlanon.sql.nodes import alias, col, count_star, lit

BINS = 24
"""Bins of a numeric attribute's histogram."""


def sub(query: exp.Expression, name: str) -> exp.Expression:
    return alias(exp.Subquery(this=query), name)


def class_sizes(engine: Engine, relation: exp.Expression, qis: Sequence[str]) -> list[dict[str, int]]:
    """How many classes (rows grouped by ``qis``) have each size: ``[{size, classes}]``."""
    inner = exp.select(alias(count_star(), "size")).from_(relation.copy()).group_by(*[col(q) for q in qis])
    if not qis:
        inner = exp.select(alias(count_star(), "size")).from_(relation.copy())
    query = (exp.select(col("size"), alias(count_star(), "classes")).from_(sub(inner, "c"))
             .group_by(col("size")).order_by(col("size")))
    return [{"size": int(r["size"]), "classes": int(r["classes"])} for r in engine.fetch_dicts(query)
            if r["size"]]


def value_counts(engine: Engine, relation: exp.Expression, attribute: str, *,
                 weight: str | None = None, limit: int = 200) -> list[tuple[Any, int]]:
    """The most frequent values of ``attribute`` with their row counts, most frequent first."""
    amount = exp.Sum(this=col(weight)) if weight else count_star()
    query = (exp.select(alias(col(attribute), "value"), alias(amount, "count")).from_(relation.copy())
             .group_by(col(attribute))
             .order_by(exp.Ordered(this=col("count"), desc=True), exp.Ordered(this=col("value")))
             .limit(limit))
    return [(r["value"], int(r["count"])) for r in engine.fetch_dicts(query)]


def ranges(engine: Engine, relation: exp.Expression, attributes: Sequence[str]
           ) -> dict[str, tuple[float, float]]:
    """Each numeric attribute's minimum and maximum (attributes without values are left out)."""
    if not attributes:
        return {}
    projections = []
    for i, a in enumerate(attributes):
        value = exp.cast(col(a), exp.DataType.build("double"))
        projections += [alias(exp.Min(this=value), f"lo{i}"), alias(exp.Max(this=value.copy()), f"hi{i}")]
    row = engine.fetch_one(exp.select(*projections).from_(relation.copy()))
    return {a: (float(row[f"lo{i}"]), float(row[f"hi{i}"])) for i, a in enumerate(attributes)
            if row[f"lo{i}"] is not None}


def bin_of(column: exp.Expression, lo: float, hi: float, bins: int = BINS) -> exp.Expression:
    """The bin (0 .. bins-1) of a value among ``bins`` equal bins over ``[lo, hi]``; values outside
    fall in the first or last bin (noise may leave the source's range)."""
    width = (hi - lo) / bins if hi > lo else 1.0
    value = exp.cast(column, exp.DataType.build("double"))
    raw = exp.Floor(this=exp.Div(this=exp.Paren(this=exp.Sub(this=value, expression=lit(lo))),
                                 expression=lit(width)))
    return (exp.Case().when(exp.LT(this=raw, expression=lit(0)), lit(0))
            .when(exp.GTE(this=raw.copy(), expression=lit(bins - 1)), lit(bins - 1)).else_(raw.copy()))


def bin_bounds(lo: float, hi: float, bins: int = BINS) -> list[tuple[float, float]]:
    width = (hi - lo) / bins if hi > lo else 1.0
    return [(lo + b * width, lo + (b + 1) * width) for b in range(bins)]


def histogram(engine: Engine, relation: exp.Expression, attribute: str, lo: float, hi: float, *,
              bins: int = BINS, weight: str | None = None) -> list[dict[str, float]]:
    """Counts (rows, or the sum of ``weight``) of ``attribute`` in ``bins`` equal bins (:func:`bin_of`)."""
    amount = exp.Sum(this=col(weight)) if weight else count_star()
    query = (exp.select(alias(bin_of(col(attribute), lo, hi, bins), "bin"), alias(amount, "count"))
             .from_(relation.copy())
             .where(exp.Not(this=exp.Is(this=col(attribute), expression=exp.Null())))
             .group_by(exp.Literal.number(1)))
    counts = {int(r["bin"]): int(r["count"]) for r in engine.fetch_dicts(query)}
    return [{"lo": a, "hi": b, "count": counts.get(i, 0)}
            for i, (a, b) in enumerate(bin_bounds(lo, hi, bins))]


def correlations(engine: Engine, relation: exp.Expression, attributes: Sequence[str]) -> list[dict[str, Any]]:
    """Pearson's r of every pair of ``attributes`` (the matrix, both triangles and the diagonal)."""
    pairs = [(a, b) for i, a in enumerate(attributes) for b in attributes[i + 1:]]
    if not pairs:
        return []
    double = exp.DataType.build("double")
    row = engine.fetch_one(exp.select(*[
        alias(exp.Corr(this=exp.cast(col(a), double), expression=exp.cast(col(b), double.copy())), f"r{i}")
        for i, (a, b) in enumerate(pairs)]).from_(relation.copy()))
    out = [{"a": a, "b": a, "r": 1.0} for a in attributes]
    for i, (a, b) in enumerate(pairs):
        r = row[f"r{i}"]
        r = None if r is None else round(float(r), 6)
        out += [{"a": a, "b": b, "r": r}, {"a": b, "b": a, "r": r}]
    return out
