"""The ``rounds`` heuristic's run: the frequency table as a temporary table on the engine, solved in
memory when it is small (:data:`IN_MEMORY_MAX`) and by SQL rounds otherwise; the measures of the
result and the decisions as a temporary table (written now) or as rows (a view or printed SQL)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlglot import exp

from sqlanon.methods.local_suppression import rounds_sql
from sqlanon.methods.local_suppression.queries import COUNT, Decision, Rows, flag, frequency_query, value
from sqlanon.methods.local_suppression.rounds import bound
from sqlanon.methods.local_suppression.rounds_sql import FK, Mapping, current, original
from sqlanon.methods.local_suppression.sdcmicro import importance_order
from sqlanon.methods.local_suppression.settings import LocalSuppressionSettings
from sqlanon.sql.nodes import alias, as_expression, col, count_star, lit, table

IN_MEMORY_MAX = 8_000
"""Up to this many combinations the frequency table is fetched and the rounds run in numpy (faster
there: a round is a few vectorized passes instead of statements, but they compare every unsafe
combination with every combination); above, they run as SQL. Measured crossing (bench/
cell_suppression.py, DuckDB, 2 shared cores): numpy 3.0 s and SQL 4.7 s at 6,072 combinations,
27 s and 5.7 s at 26,857."""


@dataclass
class Measures:
    rows: int
    combinations: int
    cells: list[int]
    rows_touched: int
    achieved_k: float


def frequency_table(engine: rounds_sql.Engine, rows: Rows) -> tuple[Mapping, int]:
    """The mapping table of the combinations and how many there are."""
    d = len(rows.qis)
    mapping = rounds_sql.start(engine, frequency_query(rows), [value(i) for i in range(d)], COUNT)
    _, got = engine.fetch(exp.select(count_star()).from_(table(mapping.name)))
    return mapping, int(got[0][0])


def fetch_frequencies(mapping: Mapping) -> list[tuple[object, ...]]:
    """The combinations' values and rows (the frequency query's rows)."""
    d = mapping.width
    return [tuple(r) for r in mapping.engine.fetch(exp.select(
        *[col(original(i)) for i in range(d)], col(rounds_sql.COUNT)).from_(table(mapping.name)))[1]]


def solve(mapping: Mapping, s: LocalSuppressionSettings, weights: Sequence[float], combinations: int) -> int:
    """Run the rounds on the engine (the importance order from the distinct values); the rounds run."""
    d = mapping.width
    _, got = mapping.engine.fetch(exp.select(*[exp.Count(this=exp.Distinct(expressions=[col(original(i))]))
                                               for i in range(d)]).from_(table(mapping.name)))
    order = importance_order([int(x) for x in got[0]], list(weights))
    return rounds_sql.run_rounds(mapping, s.k, s.alpha, order, bound(d, combinations))


def _lost(i: int) -> exp.Expression:
    return as_expression(exp.and_(exp.not_(exp.Is(this=col(original(i)), expression=exp.Null())),
                                  exp.Is(this=col(current(i)), expression=exp.Null())))


def _any_lost(d: int) -> exp.Expression:
    return as_expression(exp.or_(*[_lost(i) for i in range(d)]))


def measures(mapping: Mapping, alpha: float) -> Measures:
    d = mapping.width
    n = col(rounds_sql.COUNT)
    zero = lit(0)
    q = exp.select(exp.Sum(this=n.copy()), count_star(),
                   *[exp.Sum(this=exp.Case().when(_lost(i), n.copy()).else_(zero.copy())) for i in range(d)],
                   exp.Sum(this=exp.Case().when(_any_lost(d), n.copy()).else_(zero.copy()))
                   ).from_(table(mapping.name))
    row = mapping.engine.fetch(q)[1][0]
    low = mapping.engine.fetch(exp.select(exp.Min(this=col(FK))).from_(
        rounds_sql.sub(mapping.frequencies(alpha), "f")))[1][0][0]
    return Measures(int(row[0] or 0), int(row[1]), [int(x or 0) for x in row[2:2 + d]], int(row[2 + d] or 0),
                    float(low or 0.0))


def _decided(d: int) -> exp.Select:
    return exp.select(*[alias(col(original(i)), value(i)) for i in range(d)],
                      *[alias(exp.Case().when(_lost(i), lit("1")).else_(lit("0")), flag(i))
                        for i in range(d)])


def decision_table(mapping: Mapping) -> str:
    """A temporary table of the combinations that lose a cell: their values and flags."""
    name = rounds_sql.internal_name("cells_decided")
    mapping.engine.create_table_as(name, _decided(mapping.width).from_(table(mapping.name))
                                   .where(_any_lost(mapping.width)), temporary=True)
    return name


def decisions(mapping: Mapping) -> list[Decision]:
    """The combinations that lose a cell, as rows (for a view or printed SQL)."""
    d = mapping.width
    q = exp.select(*[col(original(i)) for i in range(d)],
                   *[exp.Case().when(_lost(i), lit(1)).else_(lit(0)) for i in range(d)],
                   col(rounds_sql.COUNT)).from_(table(mapping.name)).where(_any_lost(d))
    out = []
    for r in mapping.engine.fetch(q)[1]:
        out.append(Decision(tuple(None if v is None else str(v) for v in r[:d]),
                            tuple(bool(int(x)) for x in r[d:2 * d]), 1, int(r[-1])))
    out.sort(key=lambda x: tuple((v is None, str(v)) for v in x.values))
    return out
