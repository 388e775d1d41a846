"""The ``batch_cover`` heuristic: set-based rounds over the frequency table on the engine.

1. **Moves** (``alpha = 1``): up to :data:`MOVES_PER_K` · k rounds each move *one* row of a unit to a
   pattern of suppressed cells, the move of largest deficit reduction per cost over every unit and
   every pattern at once (the ``cover`` heuristic's step: a row made a partial wildcard matches every
   row that agrees with it outside the pattern, so each unsafe row it newly matches lacks one match
   less). These find the few rows that rescue many unsafe ones at once.
2. **Fix**: every unit still unsafe takes, all in one statement, the cheapest pattern of its cells
   (then the one matching most rows, then the lowest pattern number) that makes it safe, counted
   *pessimistically*: a row of an unsafe or wildcard unit counts ``alpha`` (it will be, or is,
   suppressed), and a unit whose pessimistic frequency is below k is fixed too. Matching only grows
   with suppression and a pessimistic weight never exceeds the final one, so every unit fixed, and
   every unit not touched, is safe in the result whatever the others chose. With ``alpha = 1`` one
   round fixes every unit; with ``alpha < 1`` rounds repeat while one fixes something. With
   ``alpha = 0`` this is the optimum per combination: suppressed rows count for no one, so the
   rows that keep every cell are the same whatever is chosen, and each unsafe combination's cheapest
   pattern against them is independent of the others'.
3. **Give back** (``alpha = 1``): for each attribute, most important first, every unit's suppressed
   cell of it is restored at once; the units unsafe after that, and every unit that matched one of
   them before, keep their cell. Suppressing never lowers a frequency when ``alpha = 1``, so the
   units that kept the cell are safe again and the others stay safe.

Each round is one or two statements over the units table (:mod:`.units_sql`); no unit leaves the
engine (a move's unit number and pattern are read to write it).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import TypeVar

from sqlglot import exp

from sqlanon.methods.local_suppression.units_sql import (
    COST,
    COUNT,
    FK,
    PATTERN,
    UNIT,
    Units,
    below,
    bit,
    code,
    current,
    is_null,
    matched,
    sub,
    supersets,
    target,
    wild,
)
from sqlanon.sql.nodes import alias, as_double, as_expression, col, count_star, internal, lit, table

MOVES_PER_K = 2
"""Moves tried per unit of k: k - 1 rows without values already make a table k-anonymous when
``alpha = 1``, so a cover longer than a few times k adds little (on 40 random tables of up to 200
rows, k - 1 moves gave 1.059 of the optimum on average, k moves 1.010, 2k moves 1.005)."""
MAX_WIDTH = 10
"""Every pattern of cells is a row of the statements (2^d per unit), so the attributes are limited."""

HELPED = internal("h")
DEFICIT = internal("def")
OWN = internal("own")
OWN_COST = internal("owncost")
SCORE = internal("score")
REVERT = internal("rev")
_T = TypeVar("_T")


def run(units: Units, k: int, alpha: float, weights: Sequence[float]) -> int:
    """Run the heuristic on ``units``; the number of statements that changed the table."""
    units.with_patterns(weights)
    try:
        moved = _moves(units, k, alpha, weights)
        return moved + _fixes(units, k, alpha, weights) + _give_backs(units, k, alpha, weights)
    finally:
        units.drop_kept()
        units.drop_patterns()


def _step(units: Units, what: Callable[[], _T]) -> _T:
    """One step, its scratch tables dropped after it."""
    try:
        return what()
    finally:
        units.drop_kept()


def _moves(units: Units, k: int, alpha: float, weights: Sequence[float]) -> int:
    done = 0
    while alpha == 1 and done < MOVES_PER_K * k and _unsafe(units, k):
        move = _step(units, lambda: units.engine.fetch(_best_move(units, k, weights))[1])
        if not move:
            break
        _apply_move(units, int(move[0][0]), int(move[0][1]))
        done += 1
    return done


def _unsafe(units: Units, k: int) -> bool:
    """Whether a unit is below k (``alpha = 1``)."""
    low = exp.select(exp.Min(this=col(FK))).from_(sub(units.frequencies(1.0), "f"), copy=False)
    return float(units.engine.fetch(low)[1][0][0] or 0) < k - 1e-9


def _fixes(units: Units, k: int, alpha: float, weights: Sequence[float]) -> int:
    """Fix rounds: one with ``alpha = 1``; else while one fixes a unit (each suppresses a cell)."""
    done = 0
    for _ in range(units.width * units.count(exp.true()) + 1):
        if not _step(units, lambda: _fix(units, k, alpha, weights)):
            break
        done += 1
        if alpha == 1:
            break
    return done


def _give_backs(units: Units, k: int, alpha: float, weights: Sequence[float]) -> int:
    done = 0
    for j in sorted(range(units.width), key=lambda i: -weights[i]) if alpha == 1 else []:
        if units.count(_lost(j)):
            _step(units, partial(_give_back, units, j, k))
            done += 1
    return done


def _lost(j: int) -> exp.Expression:
    return as_expression(exp.and_(is_null(col(current(j))), exp.not_(is_null(col(code(j))))))


def _own(d: int, weights: Sequence[float]) -> tuple[exp.Expression, exp.Expression]:
    """A unit's pattern number and its cost."""
    number: exp.Expression = lit(0)
    cost: exp.Expression = lit(0.0)
    for i in range(d):
        number = exp.Add(this=number, expression=exp.Case().when(is_null(col(current(i))), lit(1 << i))
                         .else_(lit(0)))
        cost = exp.Add(this=cost, expression=exp.Case().when(is_null(col(current(i))), lit(float(weights[i])))
                       .else_(lit(0.0)))
    return number, cost


def _by_unit(left: exp.Select, right: exp.Select, key: str, *, outer: bool = False) -> exp.Select:
    """``SELECT * FROM left AS a JOIN right AS b ON a.UNIT = b.key`` (a LEFT JOIN with ``outer``)."""
    on = exp.EQ(this=col(UNIT, "a"), expression=col(key, "b"))
    return (exp.select(exp.Star()).from_(sub(left, "a"), copy=False)
            .join(sub(right, "b"), on=on, join_type="left" if outer else None, copy=False))


def _with_frequencies(units: Units, alpha: float) -> exp.Select:
    """The units with their frequency ``FK``."""
    fu = internal("fu")
    f = exp.select(alias(col(UNIT), fu), col(FK)).from_(sub(units.kept(units.frequencies(alpha)), "f"),
                                                        copy=False)
    return _by_unit(units.read(), f, fu)


def _best_move(units: Units, k: int, weights: Sequence[float]) -> exp.Select:
    """The unit and pattern of the best single-row move (no row when none lowers the deficit)."""
    d = units.width
    number, own_cost = _own(d, weights)
    deficit = exp.Greatest(this=lit(0.0), expressions=[exp.Sub(this=lit(float(k)), expression=col(FK))])
    helped = exp.Mul(this=as_double(col(COUNT)),
                     expression=exp.Least(this=lit(1.0), expressions=[deficit.copy()]))
    base = units.kept(exp.select(col(UNIT), *[col(current(i)) for i in range(d)],
                                 alias(as_double(col(COUNT)), COUNT), alias(deficit, DEFICIT),
                                 alias(number, OWN),
                                 alias(own_cost, OWN_COST), alias(helped, HELPED)
                                 ).from_(sub(_with_frequencies(units, 1.0), "b"), copy=False))
    keys = [UNIT, PATTERN, COST, OWN, OWN_COST, DEFICIT]
    targets = supersets(base.copy(), [UNIT, OWN, OWN_COST, DEFICIT], units.pattern_relation(), d, own=True)
    sums = units.kept(matched(targets, keys, base, [COUNT, HELPED], units.sizes))
    s, o = "s", "o"
    gain = exp.Sub(this=exp.Add(this=exp.Sub(this=col(HELPED, s), expression=col(HELPED, o)),
                                expression=col(DEFICIT, s)),
                   expression=exp.Greatest(this=lit(0.0), expressions=[
                       exp.Sub(this=lit(float(k)), expression=col(COUNT, s))]))
    score = exp.Div(this=exp.Paren(this=gain.copy()),
                    expression=exp.Paren(this=exp.Sub(this=col(COST, s), expression=col(OWN_COST, s))),
                    typed=False, safe=False)
    on = exp.and_(exp.EQ(this=col(UNIT, s), expression=col(UNIT, o)),
                  exp.EQ(this=col(PATTERN, o), expression=col(OWN, o)),
                  exp.NEQ(this=col(PATTERN, s), expression=col(OWN, s)))
    order = [exp.Ordered(this=score, desc=True), exp.Ordered(this=col(DEFICIT, s), desc=True),
             col(UNIT, s), col(PATTERN, s)]
    return (exp.select(col(UNIT, s), col(PATTERN, s)).from_(sub(sums.copy(), s), copy=False)
            .join(sub(sums, o), on=on, copy=False).where(exp.GT(this=gain, expression=lit(1e-9)), copy=False)
            .order_by(*order, copy=False).limit(1, copy=False))


def _cells(d: int, pattern: int) -> list[exp.Expression]:
    """The current codes with the cells of ``pattern`` NULL."""
    return [alias(exp.Case().when(exp.true() if (pattern >> i) & 1 else exp.false(), exp.Null())
                  .else_(col(current(i))), current(i)) for i in range(d)]


def _apply_move(units: Units, unit: int, pattern: int) -> None:
    """One row of ``unit`` moved to ``pattern``."""
    d = units.width
    is_it = exp.EQ(this=col(UNIT), expression=lit(unit))
    left = exp.Sub(this=col(COUNT), expression=exp.Case().when(is_it, lit(1)).else_(lit(0)))
    stay = exp.select(*units.columns(), *[col(current(i)) for i in range(d)], alias(left, COUNT)
                      ).from_(table(units.name), copy=False)
    moved = exp.select(*units.columns(), *_cells(d, pattern), alias(lit(1), COUNT)).from_(
        table(units.name), copy=False).where(is_it.copy(), copy=False)
    units.replace(exp.union(stay, moved, distinct=False))


def _fix(units: Units, k: int, alpha: float, weights: Sequence[float]) -> int:
    """One fix round; how many units it suppressed cells of."""
    d = units.width
    pessimistic = exp.Case().when(exp.or_(wild(d), below(col(FK), k)), lit(float(alpha))).else_(lit(1.0))
    base = units.kept(exp.select(col(UNIT), *[col(current(i)) for i in range(d)],
                                 alias(exp.Mul(this=as_double(col(COUNT)), expression=pessimistic), FK)
                                 ).from_(sub(_with_frequencies(units, alpha), "b"), copy=False))
    targets = exp.select(col(UNIT), *[alias(col(current(i)), target(i)) for i in range(d)]
                         ).from_(sub(base.copy(), "t"), copy=False)
    fu = internal("fu")
    own = exp.select(alias(col(UNIT), fu), alias(col(FK), internal("fkp"))).from_(
        sub(matched(targets, [UNIT], base.copy(), [FK], units.sizes), "f"), copy=False)
    unsafe = _by_unit(base.copy(), own, fu).where(below(col(internal("fkp")), k), copy=False)
    candidates = supersets(unsafe, [UNIT], units.pattern_relation(), d, own=False)
    found = matched(candidates, [UNIT, PATTERN, COST], base, [FK], units.sizes)
    rank = exp.Window(this=exp.RowNumber(), partition_by=[col(UNIT)], order=exp.Order(expressions=[
        exp.Ordered(this=col(COST)), exp.Ordered(this=col(FK), desc=True), exp.Ordered(this=col(PATTERN))]))
    ranked = (exp.select(col(UNIT), col(PATTERN), alias(rank, internal("rank")))
              .from_(sub(found, "c"), copy=False)
              .where(exp.not_(below(col(FK), k)), copy=False))
    first = exp.EQ(this=col(internal("rank")), expression=lit(1))
    choice = exp.select(col(UNIT), col(PATTERN)).from_(sub(ranked, "r"), copy=False).where(first, copy=False)
    with_bits = (exp.select(col(UNIT, "c"), *[col(bit(i), "pv") for i in range(d)])
                 .from_(sub(choice, "c"), copy=False)
                 .join(units.pattern_relation(), copy=False,
                       on=exp.EQ(this=col(PATTERN, "c"), expression=col(PATTERN, "pv"))))
    chosen = units.kept(with_bits)
    counted = exp.select(count_star()).from_(sub(chosen.copy(), "c"), copy=False)
    count = int(units.engine.fetch(counted)[1][0][0])
    if count:
        cells = [alias(exp.Case().when(exp.EQ(this=col(bit(i)), expression=lit(1)), exp.Null())
                       .else_(col(current(i))), current(i)) for i in range(d)]
        fixed = exp.select(alias(col(UNIT), fu), *[col(bit(i)) for i in range(d)]).from_(sub(chosen, "x"),
                                                                                          copy=False)
        units.replace(exp.select(*units.columns(), *cells, col(COUNT)).from_(
            sub(_by_unit(units.read(), fixed, fu, outer=True), "m"), copy=False))
    return count


def _give_back(units: Units, j: int, k: int) -> None:
    """Restore attribute ``j``'s suppressed cells where no unit falls below k (see the module)."""
    d = units.width
    restore = exp.Case().when(_lost(j), col(code(j))).else_(col(current(j)))
    cells = [alias(restore.copy(), current(i)) if i == j else col(current(i)) for i in range(d)]
    after = units.kept(exp.select(col(UNIT), *cells, col(COUNT)).from_(table(units.name), copy=False))
    falls = units.frequencies(1.0, after)
    fu = internal("fu")
    unsafe = (exp.select(alias(col(UNIT), fu)).from_(sub(falls, "f"), copy=False)
              .where(below(col(FK), k), copy=False))
    zs = exp.select(*[col(current(i)) for i in range(d)], alias(lit(1), REVERT)).from_(
        sub(_by_unit(units.read(), unsafe, fu), "z"), copy=False)
    targets = exp.select(col(UNIT), *[alias(col(current(i)), target(i)) for i in range(d)]).from_(
        table(units.name), copy=False)
    near = matched(targets, [UNIT], zs, [REVERT], units.sizes)
    keep = exp.select(alias(col(UNIT), fu), col(REVERT)).from_(sub(near, "h"), copy=False)
    back = exp.and_(_lost(j), is_null(col(REVERT)))
    cells = [alias(exp.Case().when(back, col(code(j))).else_(col(current(j))), current(i)) if i == j
             else col(current(i)) for i in range(d)]
    units.replace(exp.select(*units.columns(), *cells, col(COUNT)).from_(
        sub(_by_unit(units.read(), keep, fu, outer=True), "b"), copy=False))
