"""A table with many rows per person, seen one person at a time (``privacy_unit``).

Two relations over the source:

* :func:`aligned_rows`: every source row, its quasi-identifiers replaced by its person's value (the
  rule's window aggregate over the person's rows): what the output generalizes, so that all of a
  person's rows fall in one class and share its verdict;
* :func:`persons_query`: the person-level records the checks count. Without sensitive attributes
  one row per person (one ``GROUP BY`` of the person column). With them, one row per person and
  distinct combination of sensitive values, and a weight :data:`WEIGHT` that is 1 on exactly one of
  a person's rows: class sizes sum the weight (persons), histograms count the rows (each value a
  person has, once).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from sqlglot import exp

from sqlanon.compile.checks import PAIRS, WEIGHT
from sqlanon.domain.hierarchy.base import Hierarchy
from sqlanon.sql.nodes import alias, as_expression, col, count_star, internal, lit

__all__ = ["PAIRS", "ROWS_OF", "WEIGHT", "Persons", "aligned_rows", "flag", "grouped", "persons_query",
           "unsettled_query", "unsettled_records"]


@dataclass(frozen=True)
class Persons:
    """The person column, each quasi-identifier's rule, and the order ``first`` reads."""

    column: str
    rules: Mapping[str, str] = field(default_factory=dict)
    order_by: str | None = None
    hierarchies: Mapping[str, Hierarchy] = field(default_factory=dict)
    """The hierarchies of the ``one_class`` attributes (:meth:`fit_level` generalizes with them)."""

    @property
    def one_class(self) -> list[str]:
        """The attributes whose rows must generalize to one value for the person to be released (those
        given a hierarchy; without one, as in a risk analysis of the original, the person's smallest
        value stands for them)."""
        return [a for a, r in self.rules.items() if r == "one_class" and a in self.hierarchies]

    def fit_column(self, attribute: str) -> str:
        """The record's column holding :meth:`fit_level` of a ``one_class`` attribute."""
        return internal(f"fit{self.one_class.index(attribute)}")

    def fit_level(self, attribute: str, *, window: bool) -> exp.Expression:
        """The lowest level from which every higher level generalizes all of the person's values of
        ``attribute`` to one value (height + 1: none does): an aggregate of the person's rows, or with
        ``window`` a window over them. A person fits a node when the node's level is at least this,
        so the persons who fit a node fit every node above it. NULLs take the person's value."""
        h = self.hierarchies[attribute]
        v = col(attribute)

        def same(level: int) -> exp.Expression:
            g = v.copy() if level == 0 else h.expression(v.copy(), level)
            low: exp.Expression = exp.Min(this=g.copy())
            high: exp.Expression = exp.Max(this=g)
            if window:
                low = exp.Window(this=low, partition_by=[col(self.column)])
                high = exp.Window(this=high, partition_by=[col(self.column)])
            return exp.Coalesce(this=exp.EQ(this=low, expression=high), expressions=[exp.true()])

        case = exp.Case()
        for level in range(h.height, -1, -1):
            case = case.when(exp.Not(this=exp.Paren(this=same(level))), lit(level + 1))
        return case.else_(lit(0))

    def fits(self, levels: Mapping[str, int], relation: str | None = None) -> exp.Expression | None:
        """Whether a record's person fits the node ``levels`` (None: no ``one_class`` attribute)."""
        conditions = [exp.LTE(this=col(self.fit_column(a), relation), expression=lit(int(levels.get(a, 0))))
                      for a in self.one_class]
        return as_expression(exp.and_(*conditions)) if conditions else None

    def person_value(self, attribute: str, value: exp.Expression | None = None) -> exp.Expression:
        """The person's value of ``attribute`` on each of its rows (a window over the person)."""
        v = value if value is not None else col(attribute)
        rule = self.rules.get(attribute, "constant")
        person = [col(self.column)]
        if rule == "first":
            assert self.order_by is not None
            order = exp.Order(expressions=[exp.Ordered(this=col(self.order_by), nulls_first=False),
                                           exp.Ordered(this=v.copy(), nulls_first=False)])
            return exp.Window(this=exp.FirstValue(this=v), partition_by=person, order=order)
        agg = exp.Max(this=v) if rule == "max" else exp.Min(this=v)  # constant: all equal (checked)
        return exp.Window(this=agg, partition_by=person)

    def person_aggregate(self, attribute: str) -> exp.Expression:
        """The person's value as a ``GROUP BY person`` aggregate (every rule but ``first``)."""
        return exp.Max(this=col(attribute)) if self.rules.get(attribute) == "max" else \
            exp.Min(this=col(attribute))

    @property
    def needs_window(self) -> bool:
        return "first" in self.rules.values()


def _from(source: exp.Expression, name: str) -> exp.Expression:
    if isinstance(source, exp.Select):
        return as_expression(exp.alias_(exp.Subquery(this=source.copy()), name, quoted=True))
    return as_expression(exp.alias_(source.copy(), name, table=True, quoted=True))


def aligned_rows(source: exp.Expression, columns: Sequence[str], qis: Sequence[str],
                 persons: Persons) -> exp.Select:
    """Every row of ``source`` with ``columns`` in order, each QI its person's value, then each
    ``one_class`` attribute's fit level (:meth:`Persons.fit_level`)."""
    projections = [alias(persons.person_value(c), c) if c in qis else col(c) for c in columns]
    projections += [alias(persons.fit_level(a, window=True), persons.fit_column(a))
                    for a in persons.one_class]
    return exp.select(*projections).from_(_from(source, internal("rows")))


ROWS_OF = internal("rows_of")
"""A person-level record's number of source rows (on one record of each person)."""


def flag(index: int) -> str:
    """The column saying that ``constant`` attribute number ``index`` differs between a person's rows."""
    return internal(f"differs{index}")


def grouped(sensitive: Sequence[str], persons: Persons) -> bool:
    """Whether :func:`persons_query` is one ``GROUP BY`` of the person (one record a person, with the
    row count and the ``constant`` attributes' flags)."""
    return not sensitive and not persons.needs_window


def _differs(attribute: str) -> exp.Expression:
    """A person's rows hold two values (NULLs aside: a NULL row takes the person's value, as the
    released rows do): an aggregate condition. MIN and MAX, not COUNT(DISTINCT), which costs a hash
    set per person and attribute."""
    v = col(attribute)
    return exp.NEQ(this=exp.Min(this=v.copy()), expression=exp.Max(this=v.copy()))


def persons_query(source: exp.Expression, qis: Sequence[str], sensitive: Sequence[str],
                  persons: Persons) -> exp.Select:
    """The person-level records of ``source`` (module docstring), with :data:`ROWS_OF`; when
    :func:`grouped`, also each ``constant`` QI's :func:`flag`."""
    p = persons.column
    if grouped(sensitive, persons):
        constant = [q for q in qis if persons.rules.get(q, "constant") == "constant"]
        flags = [alias(exp.Case().when(_differs(q), lit(1)).else_(lit(0)), flag(i))
                 for i, q in enumerate(constant)]
        fits = [alias(persons.fit_level(a, window=False), persons.fit_column(a)) for a in persons.one_class]
        return exp.select(col(p), *[alias(persons.person_aggregate(q), q) for q in qis], *fits,
                          alias(count_star(), ROWS_OF), *flags).from_(
            _from(source, internal("rows"))).group_by(col(p))
    aligned = aligned_rows(source, [p, *qis, *sensitive], qis, persons).select(
        alias(exp.Window(this=count_star(), partition_by=[col(p)]), ROWS_OF), copy=False)
    kept = (p, *qis, *sensitive, *[persons.fit_column(a) for a in persons.one_class], ROWS_OF)
    distinct = exp.select(*[col(c) for c in kept]).distinct().from_(_from(aligned, internal("aligned")))
    if not sensitive:
        return distinct
    first = exp.Window(this=exp.RowNumber(), partition_by=[col(p)],
                       order=exp.Order(expressions=[exp.Ordered(this=col(s), nulls_first=False)
                                                    for s in sensitive]))
    weight = exp.Case().when(exp.EQ(this=first, expression=lit(1)), lit(1)).else_(lit(0))
    return exp.select(*[col(c) for c in kept], alias(weight, WEIGHT)).from_(
        _from(distinct, internal("distinct")))


def unsettled_query(source: exp.Expression, column: str, constant: Sequence[str], limit: int = 5
                    ) -> exp.Select:
    """One scan of the rows for what makes persons unusable: the persons (the NULL person first)
    with their row count and, per ``constant`` attribute, whether it differs between their rows
    (NULLs aside); at most ``limit`` persons."""
    flags = [(alias(exp.Case().when(_differs(a), lit(1)).else_(lit(0)), f"d{i}"), _differs(a))
             for i, a in enumerate(constant)]
    person = col(column)
    bad = exp.or_(exp.Is(this=person.copy(), expression=exp.Null()), *[d for _, d in flags])
    return exp.select(alias(exp.cast(person.copy(), exp.DataType.build("text")), "p"),
                      alias(count_star(), "n"), *[f for f, _ in flags]).from_(source.copy()).group_by(
        person.copy()).having(bad).order_by(exp.Ordered(this=col("p"), nulls_first=True)).limit(limit)


def unsettled_records(persons: exp.Expression, column: str, constant: int, limit: int = 5) -> exp.Select:
    """:func:`unsettled_query`'s answer read from :func:`grouped` person-level records."""
    person = col(column)
    bad = exp.or_(exp.Is(this=person.copy(), expression=exp.Null()),
                  *[exp.EQ(this=col(flag(i)), expression=lit(1)) for i in range(constant)])
    return exp.select(alias(exp.cast(person.copy(), exp.DataType.build("text")), "p"),
                      alias(col(ROWS_OF), "n"), *[alias(col(flag(i)), f"d{i}") for i in range(constant)]
                      ).from_(persons.copy()).where(bad).order_by(
        exp.Ordered(this=col("p"), nulls_first=True)).limit(limit)
