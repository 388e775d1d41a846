"""The ``rounds`` heuristic (:mod:`.rounds`) as SQL on the engine, over the frequency table.

A temporary *mapping* table holds one row per combination of the source: its values ``o0..``, its
current values ``c0..`` (NULL where suppressed or missing) and its rows ``n``. A round is two
statements and a count: the first creates the round's choices (the current combinations, aggregated
from the mapping, their wildcard frequencies, the unsafe ones, and for each the attribute its
nearest combinations make it lose), the second rewrites the mapping with those cells set to NULL.
The number of statements grows with the rounds (at most d + 1 with ``alpha = 1``), not with the
combinations, and no combination leaves the engine.

Wildcard frequencies are an equi-join over the patterns of NULL cells (:meth:`Mapping.frequencies`);
the same join counts, per attribute j, the combinations that match with j hidden, which says
whether a combination at distance 1 differs at j. Only an unsafe combination with none at distance
1 is compared with every combination: one GROUP BY over its pairs gives the smallest positive
distance and, per attribute, the smallest distance of a pair that differs there (the attribute is a
candidate's when the two are equal).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlglot import exp

from sqlanon.engines.base import Engine, internal_name
from sqlanon.methods.local_suppression.rounds import TOLERANCE
from sqlanon.sql.nodes import alias, as_double, as_expression, col, count_star, internal, lit, table

COUNT = internal("n")
CHOICE = internal("j")
FK = internal("fk")
DIST = internal("dist")
MATCHED = internal("m")


def original(i: int) -> str:
    return internal(f"o{i}")


def current(i: int) -> str:
    return internal(f"c{i}")


def _differ(i: int, a: str, b: str) -> exp.Expression:
    return as_expression(exp.and_(exp.not_(exp.Is(this=col(current(i), a), expression=exp.Null())),
                                  exp.not_(exp.Is(this=col(current(i), b), expression=exp.Null())),
                                  exp.NEQ(this=col(current(i), a), expression=col(current(i), b))))


def _match(i: int, a: str, b: str) -> exp.Expression:
    return as_expression(exp.or_(exp.Is(this=col(current(i), a), expression=exp.Null()),
                                 exp.Is(this=col(current(i), b), expression=exp.Null()),
                                 exp.EQ(this=col(current(i), a), expression=col(current(i), b))))


def sub(query: exp.Select, name: str) -> exp.Subquery:
    return exp.Subquery(this=query, alias=exp.TableAlias(this=exp.to_identifier(name, quoted=True)))


@dataclass
class Mapping:
    """The mapping table of a run and its shape."""

    engine: Engine
    name: str
    width: int

    def combinations(self) -> exp.Select:
        """The current combinations and their rows."""
        cs = [col(current(i)) for i in range(self.width)]
        return (exp.select(*cs, alias(exp.Sum(this=col(COUNT)), COUNT)).from_(table(self.name))
                .group_by(*[c.copy() for c in cs]))

    def frequencies(self, alpha: float) -> exp.Select:
        """Every current combination with its wildcard frequency.

        a and b match when they agree outside A ∪ B, their sets of NULL cells. For every set X of
        NULL cells that occurs, each b is keyed by its codes with the cells of B ∪ X set to 0 (codes
        start at 1), summed by (X, B, key); each a looks up, for every X, the key of its codes with
        A ∪ X set to 0 under (A, X). So the join is on equality, with combinations × patterns rows
        on each side, instead of every pair of combinations.

        Also, unweighted, the number of combinations a matches (``MATCHED``) and, for every attribute
        j, that number with j hidden too (``h<j>``): a combination at distance exactly 1 that differs
        at j exists when the second is larger.
        """
        d = self.width
        null = [exp.Is(this=col(current(i)), expression=exp.Null()) for i in range(d)]
        wild = exp.or_(*[n.copy() for n in null])
        weight = exp.Case().when(wild, lit(float(alpha))).else_(lit(1.0))
        flags = [alias(exp.Case().when(null[i].copy(), lit(1)).else_(lit(0)), f"p{i}") for i in range(d)]
        cur = exp.select(*[col(current(i)) for i in range(d)], *flags,
                         alias(exp.Mul(this=as_double(col(COUNT)), expression=weight), "w")
                         ).from_(sub(self.combinations(), "c"))
        patterns = exp.select(*[col(f"p{i}") for i in range(d)]).distinct().from_(sub(cur.copy(), "z"))

        patterns = (exp.select(exp.Star()).from_(sub(patterns, "x0"))
                    .join(exp.values([(lit(e),) for e in range(-1, d)], alias="e", columns=["e"]),
                          join_type="cross"))

        def key(i: int, side: str) -> exp.Expression:
            hidden = exp.or_(exp.Is(this=col(current(i), side), expression=exp.Null()),
                             exp.EQ(this=col(f"p{i}", "x"), expression=lit(1)),
                             exp.EQ(this=col("e", "x"), expression=lit(i)))
            return exp.Case().when(hidden, lit(0)).else_(col(current(i), side))

        right = (exp.select(*[alias(col(f"p{i}", "x"), f"a{i}") for i in range(d)],
                            *[alias(col(f"p{i}", "b"), f"b{i}") for i in range(d)],
                            *[alias(key(i, "b"), f"k{i}") for i in range(d)], col("e", "x"),
                            alias(exp.Sum(this=col("w", "b")), "w"), alias(count_star(), "cnt"))
                 .from_(sub(cur.copy(), "b")).join(sub(patterns.copy(), "x"), join_type="cross")
                 .group_by(*[col(f"p{i}", "x") for i in range(d)], *[col(f"p{i}", "b") for i in range(d)],
                           *[key(i, "b") for i in range(d)], col("e", "x")))
        left = (exp.select(*[col(current(i), "a") for i in range(d)],
                           *[alias(col(f"p{i}", "a"), f"a{i}") for i in range(d)],
                           *[alias(col(f"p{i}", "x"), f"b{i}") for i in range(d)],
                           *[alias(key(i, "a"), f"k{i}") for i in range(d)], col("e", "x"))
                .from_(sub(cur, "a")).join(sub(patterns, "x"), join_type="cross"))
        on = exp.and_(*[exp.EQ(this=col(name, "l"), expression=col(name, "r"))
                        for name in [f"{c}{i}" for c in "abk" for i in range(d)] + ["e"]])

        def where(e: int, what: str) -> exp.Expression:
            chosen = exp.EQ(this=col("e", "l"), expression=lit(e))
            return exp.Sum(this=exp.Case().when(chosen, col(what, "r")).else_(lit(0)))

        return (exp.select(*[col(current(i), "l") for i in range(d)], alias(where(-1, "w"), FK),
                           alias(where(-1, "cnt"), MATCHED),
                           *[alias(where(j, "cnt"), f"h{j}") for j in range(d)])
                .from_(sub(left, "l")).join(sub(right, "r"), on=on)
                .group_by(*[col(current(i), "l") for i in range(d)]))

    def choices(self, k: int, alpha: float, order: Sequence[int]) -> exp.Expression:
        """Each unsafe combination with a nearest one: the attribute it loses (``CHOICE``)."""
        d = self.width
        beside = [exp.GT(this=col(f"h{j}"), expression=col(MATCHED)) for j in range(d)]
        low = exp.LT(this=col(FK), expression=lit(k - TOLERANCE))
        pick = exp.Case()
        for j in order:
            pick = pick.when(beside[j].copy(), lit(j))
        adjacent = (exp.select(*[col(current(i)) for i in range(d)], alias(pick, CHOICE))
                    .from_(sub(self.frequencies(alpha), "f"))
                    .where(exp.and_(low.copy(), exp.or_(*[b.copy() for b in beside]))))
        unsafe = (exp.select(*[col(current(i)) for i in range(d)]).from_(sub(self.frequencies(alpha), "f"))
                  .where(exp.and_(low, exp.not_(exp.or_(*beside)))))
        flags = (exp.select(*[col(current(i), "u") for i in range(d)],
                            *[alias(exp.Case().when(_differ(i, "u", "b"), lit(1)).else_(lit(0)), f"x{i}")
                              for i in range(d)])
                 .from_(sub(unsafe, "u")).join(sub(self.combinations(), "b"), join_type="cross"))
        distance: exp.Expression = col("x0")
        for i in range(1, d):
            distance = exp.Add(this=distance, expression=col(f"x{i}"))
        pairs = exp.select(exp.Star(), alias(distance, DIST)).from_(sub(flags, "p0"))
        nearest = (exp.select(*[col(current(i)) for i in range(d)], alias(exp.Min(this=col(DIST)), DIST),
                              *[alias(exp.Min(this=exp.Case().when(
                                  exp.EQ(this=col(f"x{i}"), expression=lit(1)), col(DIST)).else_(exp.Null())),
                                  f"m{i}") for i in range(d)])
                   .from_(sub(pairs, "p")).where(exp.GT(this=col(DIST), expression=lit(0)))
                   .group_by(*[col(current(i)) for i in range(d)]))
        choice = exp.Case()
        for j in order:
            choice = choice.when(exp.EQ(this=col(f"m{j}"), expression=col(DIST)), lit(j))
        farther = (exp.select(*[col(current(i)) for i in range(d)], alias(choice, CHOICE))
                   .from_(sub(nearest, "q")))
        return as_expression(exp.union(adjacent, farther, distinct=False))

    def apply(self, choices: str) -> str:
        """A new mapping table with the chosen cells suppressed (this one dropped)."""
        d = self.width
        on = exp.and_(*[exp.NullSafeEQ(this=col(current(i), "m"), expression=col(current(i), "x"))
                        for i in range(d)])
        cells = [alias(exp.Case().when(exp.EQ(this=col(CHOICE, "x"), expression=lit(i)), exp.Null())
                       .else_(col(current(i), "m")), current(i)) for i in range(d)]
        query = (exp.select(*[col(original(i), "m") for i in range(d)], *cells, col(COUNT, "m"))
                 .from_(exp.alias_(table(self.name), "m", quoted=True))
                 .join(exp.alias_(table(choices), "x", quoted=True), on=on, join_type="left"))
        name = internal_name("cells_map")
        self.engine.create_table_as(name, query, temporary=True)
        self.engine.drop(self.name)
        self.name = name
        return name


def start(engine: Engine, frequency: exp.Select, values: Sequence[str], count: str) -> Mapping:
    """The mapping table of the frequency query's combinations (columns ``values`` and ``count``)."""
    d = len(values)
    codes = [exp.Case().when(exp.Is(this=col(v), expression=exp.Null()), exp.Null()).else_(
        exp.Window(this=exp.DenseRank(), order=exp.Order(expressions=[exp.Ordered(this=col(v))])))
        for v in values]
    q = exp.select(*[alias(col(v), original(i)) for i, v in enumerate(values)],
                   *[alias(c, current(i)) for i, c in enumerate(codes)],
                   alias(exp.cast(col(count), "bigint"), COUNT)).from_(sub(frequency, "q"))
    name = internal_name("cells_map")
    engine.create_table_as(name, q, temporary=True)
    return Mapping(engine, name, d)


def run_rounds(mapping: Mapping, k: int, alpha: float, order: Sequence[int], max_rounds: int) -> int:
    """Run the rounds; how many suppressed something."""
    engine = mapping.engine
    done = 0
    for _ in range(max_rounds):
        chosen = internal_name("cells_choice")
        engine.create_table_as(chosen, mapping.choices(k, alpha, order), temporary=True)
        try:
            _, rows = engine.fetch(exp.select(count_star()).from_(table(chosen)))
            if not int(rows[0][0]):
                break
            mapping.apply(chosen)
            done += 1
        finally:
            engine.drop(chosen)
    return done
