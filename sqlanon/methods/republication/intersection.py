"""What intersecting two releases of one table reveals, computed in SQL on the engine.

An adversary who knows that a person is in both releases, and the person's quasi-identifiers,
finds the person's class in each release. The persons of one class who are also in the other class
are the class's *intersection*; the sensitive values the person can have are those both classes
publish (Xiao and Tao's intersection, or critical absence, reasoning: a value missing from either
class cannot be the person's). For every pair of classes (one per release) holding persons present
in both, the query gives how many persons the pair holds and the fewest candidate values any of
them keeps; the check flags pairs below ``k`` persons (when the spec asks for k-anonymity) and
pairs whose persons keep fewer than ``l`` candidate values (``l`` from the spec: 2, a value pinned
down, when nothing asks for more).

A release is any relation holding the person key, the class columns (the released
quasi-identifiers, or a group column) and the sensitive attribute; rows whose key is NULL
(counterfeits) count for the class's values but are nobody.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp

from sqlanon.sql.nodes import alias, as_expression, as_text, col, count_star, internal, lit

KEY, CLASS, VALUE = internal("key"), internal("class"), internal("value")
PREVIOUS, CURRENT = internal("p"), internal("q")
PERSONS, FEWEST, PINNED = internal("persons"), internal("fewest"), internal("pinned")
PREVIOUS_CLASS, CURRENT_CLASS = internal("pc"), internal("qc")
_CANDIDATES = internal("n")


@dataclass(frozen=True)
class LinkedRelease:
    """One release as the check reads it."""

    relation: exp.Expression
    """A table or a subquery (aliased)."""
    key: str
    classes: tuple[str, ...]
    sensitive: str


def class_label(columns: tuple[str, ...], table: str | None = None) -> exp.Expression:
    """The class as text, ``age=30-39, sex=Male``: what the release shows of it, no person's value."""
    parts: list[exp.Expression] = []
    for i, c in enumerate(columns):
        parts += [lit(("" if i == 0 else ", ") + f"{c}="),
                  exp.Coalesce(this=as_text(col(c, table)), expressions=[lit("NULL")])]
    return exp.Concat(expressions=parts or [lit("all")], safe=False, coalesce=False)


def _value(sensitive: str) -> exp.Expression:
    """A sensitive value as text, NULL a value of its own."""
    return exp.Case().when(exp.Is(this=col(sensitive), expression=exp.Null()), lit("n")) \
        .else_(exp.Concat(expressions=[lit("v"), as_text(col(sensitive))], safe=False, coalesce=False))


def _rows(release: LinkedRelease) -> exp.Select:
    return exp.select(alias(as_text(col(release.key)), KEY), alias(class_label(release.classes), CLASS),
                      alias(_value(release.sensitive), VALUE)).from_(release.relation.copy())


def _sub(query: exp.Select, name: str) -> exp.Expression:
    return as_expression(exp.alias_(exp.Subquery(this=query), name, quoted=True))


def pairs_query(previous: LinkedRelease, current: LinkedRelease) -> exp.Select:
    """Per pair of classes holding persons of both releases: the persons, the fewest candidate values
    any of them keeps, and how many keep one value or none."""
    p, q = _rows(previous), _rows(current)
    both = exp.select(col(KEY, "a"), alias(col(CLASS, "a"), PREVIOUS_CLASS),
                      alias(col(CLASS, "b"), CURRENT_CLASS)).distinct() \
        .from_(_sub(p.copy(), "a")).join(_sub(q.copy(), "b"), on=exp.EQ(this=col(KEY, "a"),
                                                                      expression=col(KEY, "b")))
    pv = exp.select(col(CLASS), col(VALUE)).distinct().from_(_sub(p, "pr"))
    qv = exp.select(col(CLASS), col(VALUE)).distinct().from_(_sub(q, "cr"))
    on_previous = exp.EQ(this=col(CLASS, "pv"), expression=col(PREVIOUS_CLASS, "b"))
    on_current = exp.and_(exp.EQ(this=col(CLASS, "qv"), expression=col(CURRENT_CLASS, "b")),
                          exp.EQ(this=col(VALUE, "qv"), expression=col(VALUE, "pv")))
    candidates = exp.select(col(KEY, "b"), col(PREVIOUS_CLASS, "b"), col(CURRENT_CLASS, "b"),
                            alias(exp.Count(this=exp.Distinct(expressions=[col(VALUE, "qv")])),
                                  _CANDIDATES)) \
        .from_(_sub(both, "b")).join(_sub(pv, "pv"), on=on_previous, join_type="inner") \
        .join(_sub(qv, "qv"), on=on_current, join_type="left") \
        .group_by(col(KEY, "b"), col(PREVIOUS_CLASS, "b"), col(CURRENT_CLASS, "b"))
    pinned = exp.Sum(this=exp.Case().when(exp.LTE(this=col(_CANDIDATES), expression=lit(1)), lit(1))
                     .else_(lit(0)))
    return exp.select(col(PREVIOUS_CLASS), col(CURRENT_CLASS), alias(count_star(), PERSONS),
                      alias(exp.Min(this=col(_CANDIDATES)), FEWEST), alias(pinned, PINNED)) \
        .from_(_sub(candidates, "c")).group_by(col(PREVIOUS_CLASS), col(CURRENT_CLASS))


def flagged_query(pairs: exp.Select, k: int | None, l: int) -> exp.Select:  # noqa: E741 -- the paper's l
    """The pairs below ``k`` persons or ``l`` candidate values, largest breaches first."""
    below: exp.Expression = exp.LT(this=col(FEWEST), expression=lit(l))
    if k is not None:
        below = as_expression(exp.or_(below, exp.LT(this=col(PERSONS), expression=lit(k))))
    return exp.select(exp.Star()).from_(_sub(pairs, "f")).where(below) \
        .order_by(exp.Ordered(this=col(FEWEST)), exp.Ordered(this=col(PERSONS)),
                  exp.Ordered(this=col(PREVIOUS_CLASS)), exp.Ordered(this=col(CURRENT_CLASS)))


def summary_query(pairs: exp.Select, k: int | None, l: int) -> exp.Select:  # noqa: E741 -- the paper's l
    """Over all pairs: pairs, persons in both, pairs below k, pairs below l, persons pinned down."""
    def count_if(condition: exp.Expression) -> exp.Expression:
        return exp.Sum(this=exp.Case().when(condition, lit(1)).else_(lit(0)))

    shrunk = count_if(exp.LT(this=col(PERSONS), expression=lit(k))) if k is not None else lit(0)
    return exp.select(alias(count_star(), "pairs"), alias(exp.Sum(this=col(PERSONS)), "persons"),
                      alias(shrunk, "shrunk"),
                      alias(count_if(exp.LT(this=col(FEWEST), expression=lit(l))), "reduced"),
                      alias(exp.Sum(this=col(PINNED)), "pinned")).from_(_sub(pairs, "s"))
