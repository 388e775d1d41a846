"""A release of the frequency table as a temporary table of *units* on the engine, and the set-based
statements the ``batch_cover`` heuristic (:mod:`.batch_cover`) is made of.

A unit is rows of one combination released alike: its combination ``id``, the combination's values
``o0..`` and integer codes ``g0..`` (NULL where missing), its current codes ``c0..`` (NULL where
missing or suppressed), its rows ``n`` and a number ``u`` unique in the table. A combination's rows
can be split between units (a single row moved to a pattern of suppressed cells).

Every frequency is one equi-join (:func:`matched`): a target t and a unit b match when they agree
outside the union of their NULL cells, so for every pattern X of the targets' NULL cells each unit
is keyed by its codes with the cells of X and of its own pattern set to 0 (codes start at 1) and
summed by (X, its pattern, key); each target looks the key of its codes up for every pattern of the
units. The join has (units × target patterns) rows on one side and (targets × unit patterns) on the
other, instead of targets × units pairs.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from sqlglot import exp

from sqlanon.engines.base import Engine, internal_name
from sqlanon.sql.nodes import (
    alias,
    as_double,
    as_expression,
    as_text,
    col,
    count_star,
    internal,
    lit,
    table,
)

UNIT = internal("u")
ID = internal("id")
COUNT = internal("n")
PATTERN = internal("pid")
COST = internal("cost")
TOLERANCE = 1e-9
"""A frequency counts as below k when it is below k - TOLERANCE (sums of ``alpha`` in any order)."""


def original(i: int) -> str:
    return internal(f"o{i}")


def code(i: int) -> str:
    return internal(f"g{i}")


def current(i: int) -> str:
    return internal(f"c{i}")


def target(i: int) -> str:
    return internal(f"t{i}")


def bit(i: int) -> str:
    return internal(f"p{i}")


def sub(query: exp.Query, name: str) -> exp.Subquery:
    return exp.Subquery(this=query, alias=exp.TableAlias(this=exp.to_identifier(name, quoted=True)))


def is_null(e: exp.Expression) -> exp.Expression:
    return exp.Is(this=e, expression=exp.Null())


def flag(e: exp.Expression) -> exp.Expression:
    """1 where ``e`` is NULL, else 0."""
    return exp.Case().when(is_null(e), lit(1)).else_(lit(0))


def wild(d: int, side: str | None = None) -> exp.Expression:
    """The unit has a NULL cell."""
    return as_expression(exp.or_(*[is_null(col(current(i), side)) for i in range(d)]))


def below(e: exp.Expression, k: int) -> exp.Expression:
    return exp.LT(this=e, expression=lit(k - TOLERANCE))


def patterns(weights: Sequence[float]) -> exp.Values:
    """Every pattern of cells: its number (bit i for attribute i), flags and cost (the importance of its
    cells), as inline VALUES (written once to a table, :meth:`Units.with_patterns`)."""
    d = len(weights)
    rows = []
    for p in range(1 << d):
        bits = [(p >> i) & 1 for i in range(d)]
        rows.append((lit(p), *[lit(b) for b in bits],
                     as_double(lit(float(sum(w * b for w, b in zip(weights, bits)))))))
    return exp.values(rows, alias="pv", columns=[PATTERN, *[bit(i) for i in range(d)], COST])


def supersets(base: exp.Select, keys: Sequence[str], pv: exp.Expression, d: int, *, own: bool
              ) -> exp.Select:
    """Every unit of ``base`` (columns ``keys`` and ``current(i)``) under every pattern that contains its
    NULL cells (``own``: its own pattern too), as targets: ``keys``, the pattern's number and cost, and
    ``target(i)``, the codes with the pattern's cells NULL. ``pv``: the patterns' relation, aliased
    ``pv``."""
    contains = [exp.not_(exp.and_(is_null(col(current(i), "s")),
                                  exp.EQ(this=col(bit(i), "pv"), expression=lit(0)))) for i in range(d)]
    adds = exp.or_(*[exp.and_(exp.not_(is_null(col(current(i), "s"))),
                              exp.EQ(this=col(bit(i), "pv"), expression=lit(1))) for i in range(d)])
    cells = [alias(exp.Case().when(exp.EQ(this=col(bit(i), "pv"), expression=lit(1)), exp.Null())
                   .else_(col(current(i), "s")), target(i)) for i in range(d)]
    q = (exp.select(*[col(k, "s") for k in keys], col(PATTERN, "pv"), col(COST, "pv"), *cells)
         .from_(sub(base, "s"), copy=False).join(pv, join_type="cross", copy=False))
    return q.where(exp.and_(*contains) if own else exp.and_(*contains, adds), copy=False)


KEY_LIMIT = 1 << 62
"""A join key is one integer while every key fits below this, else text."""


def _joined(parts: Sequence[exp.Expression], radix: Sequence[int]) -> exp.Expression:
    """One join column of the non-negative integer ``parts``, each below its ``radix``: their mixed-radix
    number, or the text ``p0|p1|...`` when that could exceed :data:`KEY_LIMIT` (one column: a
    planner estimates one equality far better than a dozen, whose selectivities it multiplies into a
    nested loop)."""
    if math.prod(radix) < KEY_LIMIT:
        number: exp.Expression = exp.cast(parts[0], "bigint")
        for part, base in zip(parts[1:], radix[1:]):
            number = exp.Add(this=exp.Mul(this=exp.Paren(this=number), expression=lit(base)), expression=part)
        return number
    out: list[exp.Expression] = []
    for i, part in enumerate(parts):
        out += [lit("|")] if i else []
        out.append(as_text(part))
    return exp.Concat(expressions=out, safe=True)


def _number(flags: Sequence[exp.Expression]) -> exp.Expression:
    """The pattern number of 0/1 ``flags``."""
    out: exp.Expression = lit(0)
    for i, f in enumerate(flags):
        out = exp.Add(this=out, expression=exp.Mul(this=f, expression=lit(1 << i)))
    return out


def matched(targets: exp.Select, keys: Sequence[str], units: exp.Select, weights: Sequence[str],
            sizes: Sequence[int]) -> exp.Select:
    """Per target of ``targets`` (columns ``keys`` and ``target(i)``): for each column of ``weights``,
    the sum of that column over the units of ``units`` (columns ``current(i)`` and ``weights``) that
    match the target. Targets matching no unit are left out. ``sizes``: the largest code of each
    attribute."""
    d = len(sizes)
    radix = [1 << d, 1 << d, *[n + 1 for n in sizes]]
    a = [internal(f"ma{i}") for i in range(d)]
    b = [internal(f"mb{i}") for i in range(d)]
    key = internal("mk")
    t = exp.select(*[col(k) for k in keys], *[col(target(i)) for i in range(d)],
                   *[alias(flag(col(target(i))), a[i]) for i in range(d)]
                   ).from_(sub(targets, "t0"), copy=False)
    u = exp.select(*[col(current(i)) for i in range(d)], *[col(w) for w in weights],
                   *[alias(flag(col(current(i))), b[i]) for i in range(d)]
                   ).from_(sub(units, "u0"), copy=False)
    xs = exp.select(*[col(x) for x in a]).distinct(copy=False).from_(sub(t.copy(), "t1"), copy=False)
    ys = exp.select(*[col(y) for y in b]).distinct(copy=False).from_(sub(u.copy(), "u1"), copy=False)

    def hidden(value: exp.Expression, one: exp.Expression, other: exp.Expression) -> exp.Expression:
        either = exp.or_(exp.EQ(this=one, expression=lit(1)), exp.EQ(this=other, expression=lit(1)))
        return exp.Case().when(either, lit(0)).else_(value)

    def joined(side: str, other: str, codes: Sequence[exp.Expression], mine: list[str], theirs: list[str]
               ) -> exp.Expression:
        a_flags = [col(x, side if mine is a else other) for x in a]
        b_flags = [col(y, side if mine is b else other) for y in b]
        cells = [hidden(c, col(mine[i], side), col(theirs[i], other)) for i, c in enumerate(codes)]
        return _joined([_number(a_flags), _number(b_flags), *cells], radix)

    right_key = joined("u", "x", [col(current(i), "u") for i in range(d)], b, a)
    right = (exp.select(alias(right_key.copy(), key), *[alias(exp.Sum(this=col(w, "u")), w) for w in weights])
             .from_(sub(u, "u"), copy=False).join(sub(xs, "x"), join_type="cross", copy=False)
             .group_by(right_key, copy=False))
    left_key = joined("t", "y", [col(target(i), "t") for i in range(d)], a, b)
    left = (exp.select(*[col(k, "t") for k in keys], alias(left_key, key))
            .from_(sub(t, "t"), copy=False).join(sub(ys, "y"), join_type="cross", copy=False))
    on = exp.EQ(this=col(key, "l"), expression=col(key, "r"))
    return (exp.select(*[col(k, "l") for k in keys], *[alias(exp.Sum(this=col(w, "r")), w) for w in weights])
            .from_(sub(left, "l"), copy=False).join(sub(right, "r"), on=on, copy=False)
            .group_by(*[col(k, "l") for k in keys], copy=False))


@dataclass
class Units:
    """The units table of a run and its shape."""

    engine: Engine
    name: str
    width: int
    sizes: list[int]
    """The largest code of each attribute."""
    scratch: list[str] = field(default_factory=list)
    patterns: str | None = None
    """The table of :func:`patterns`, while a run needs it."""

    def pattern_relation(self) -> exp.Expression:
        """The patterns' table aliased ``pv``."""
        assert self.patterns is not None
        return as_expression(exp.alias_(table(self.patterns), "pv", quoted=True))

    def with_patterns(self, weights: Sequence[float]) -> None:
        self.patterns = internal_name("cells_patterns")
        every = exp.select(exp.Star()).from_(patterns(weights), copy=False)
        self.engine.create_table_as(self.patterns, every, temporary=True)

    def drop_patterns(self) -> None:
        if self.patterns is not None:
            self.engine.drop(self.patterns)
            self.patterns = None

    def columns(self, side: str | None = None) -> list[exp.Expression]:
        d = self.width
        return [col(ID, side), *[col(original(i), side) for i in range(d)],
                *[col(code(i), side) for i in range(d)]]

    def read(self, *extra: exp.Expression) -> exp.Select:
        """The table's units (every column, and ``extra``)."""
        return exp.select(col(UNIT), *self.columns(), *[col(current(i)) for i in range(self.width)],
                          col(COUNT), *extra).from_(table(self.name), copy=False)

    def frequencies(self, alpha: float, source: exp.Select | None = None) -> exp.Select:
        """``UNIT`` and ``fk``: every unit's wildcard frequency (its rows count ``alpha`` each in every
        unit's frequency, its own included, when it has a NULL cell)."""
        d = self.width
        base = source if source is not None else self.read()
        weight = exp.Case().when(wild(d), lit(float(alpha))).else_(lit(1.0))
        units = exp.select(*[col(current(i)) for i in range(d)],
                           alias(exp.Mul(this=as_double(col(COUNT)), expression=weight), FK)
                           ).from_(sub(base.copy(), "w"), copy=False)
        targets = exp.select(col(UNIT), *[alias(col(current(i)), target(i)) for i in range(d)]
                             ).from_(sub(base, "v"), copy=False)
        return matched(targets, [UNIT], units, [FK], self.sizes)

    def replace(self, query: exp.Query) -> None:
        """Make the units of ``query`` (columns ``ID``, originals, codes, current codes, ``COUNT``) the
        table's, rows of one combination with the same current codes merged into one unit."""
        d = self.width
        group = [*self.columns(), *[col(current(i)) for i in range(d)]]
        merged = (exp.select(*[c.copy() for c in group], alias(exp.Sum(this=col(COUNT)), COUNT))
                  .from_(sub(query, "q"), copy=False).group_by(*[c.copy() for c in group], copy=False))
        order = [exp.Ordered(this=col(ID)), *[exp.Ordered(this=col(current(i)), nulls_first=True)
                                              for i in range(d)]]
        number = exp.Window(this=exp.RowNumber(), order=exp.Order(expressions=order))
        name = internal_name("cells_units")
        numbered = (exp.select(alias(number, UNIT), *[c.copy() for c in group], col(COUNT))
                    .from_(sub(merged, "m"), copy=False)
                    .where(exp.GT(this=col(COUNT), expression=lit(0)), copy=False))
        self.engine.create_table_as(name, numbered, temporary=True)
        self.engine.drop(self.name)
        self.name = name

    def kept(self, query: exp.Query) -> exp.Select:
        """``query`` written to a temporary table (dropped by :meth:`drop_kept`), as a SELECT of it: a
        relation read more than once by a statement is computed once."""
        name = internal_name("cells_step")
        self.engine.create_table_as(name, as_expression(query), temporary=True)
        self.scratch.append(name)
        return exp.select(exp.Star()).from_(table(name), copy=False)

    def drop_kept(self) -> None:
        while self.scratch:
            self.engine.drop(self.scratch.pop())

    def count(self, where: exp.Expression) -> int:
        counted = exp.select(count_star()).from_(table(self.name), copy=False).where(where, copy=False)
        _, rows = self.engine.fetch(counted)
        return int(rows[0][0])


FK = internal("fk")


def start(engine: Engine, frequency: exp.Select, values: Sequence[str], count: str) -> Units:
    """The units table of the frequency query's combinations (columns ``values`` and ``count``): one unit
    per combination."""
    d = len(values)
    codes = [exp.Case().when(is_null(col(v)), exp.Null()).else_(
        exp.Window(this=exp.DenseRank(), order=exp.Order(expressions=[exp.Ordered(this=col(v))])))
        for v in values]
    coded = exp.select(*[alias(col(v), original(i)) for i, v in enumerate(values)],
                       *[alias(c, code(i)) for i, c in enumerate(codes)],
                       alias(exp.cast(col(count), "bigint"), COUNT)).from_(sub(frequency, "q"), copy=False)
    number = exp.Window(this=exp.RowNumber(), order=exp.Order(expressions=[
        exp.Ordered(this=col(code(i)), nulls_first=True) for i in range(d)]))
    q = exp.select(alias(number.copy(), UNIT), alias(number, ID), *[col(original(i)) for i in range(d)],
                   *[col(code(i)) for i in range(d)], *[alias(col(code(i)), current(i)) for i in range(d)],
                   col(COUNT)).from_(sub(coded, "k"), copy=False)
    name = internal_name("cells_units")
    engine.create_table_as(name, q, temporary=True)
    largest = exp.select(*[exp.Max(this=col(code(i))) for i in range(d)]).from_(table(name), copy=False)
    return Units(engine, name, d, [int(x or 0) for x in engine.fetch(largest)[1][0]])
