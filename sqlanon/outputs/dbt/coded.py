"""The checks' frequency table of the tested relation, grouped on hash codes of the values.

The frequency table groups the rows by the quasi-identifiers and the sensitive attributes together.
With two or more sensitive attributes it has many times more groups than there are classes, and a
hash table keyed by all those values costs several times a ``GROUP BY`` of the quasi-identifiers. On
a target with an equality hash (:attr:`DialectProfile.equality_hash`) the scan instead groups by
three kinds of integer codes: the hash of the quasi-identifier tuple and the hash of each sensitive
value. Dictionaries map the codes back to the values: the distinct quasi-identifier tuples (a
``GROUP BY`` of the quasi-identifiers) and the distinct values of each sensitive attribute, each
with its hash. Joining the codes to the dictionaries gives exactly the frequency table, unless two
different tuples or values share a code; :func:`CodedFrequency.unsound` then holds, and the gate
fails instead of checking merged classes. (Exact ways to tell a code's tuples apart without the
dictionary, such as ``min`` and ``max`` of each quasi-identifier per code, cost DuckDB several times
its ``GROUP BY``: ``bench/dbt_tuple_check.py``.)

The classes can also stay keyed by their tuple code (``by_code``): the checks then partition,
group and join on one integer column instead of every quasi-identifier, and only the classes (one
row each) are joined to the tuple dictionary for their values.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlglot import exp

from sqlanon.compile.checks import N
from sqlanon.compile.plan import Plan
from sqlanon.sql.nodes import alias, as_expression, col, count_star, internal

TUPLE_CODE = internal("tuple_code")
"""The hash of a row's quasi-identifier tuple."""


def value_code(index: int) -> str:
    """The column holding the hash of the ``index``-th sensitive attribute's value."""
    return internal(f"value_code{index}")


@dataclass(frozen=True)
class CodedFrequency:
    query: exp.Select
    """The frequency table: the quasi-identifiers (or :data:`TUPLE_CODE`), the sensitive attributes
    and :data:`N`."""
    codes: exp.Table
    tuples: exp.Table
    """The tuple dictionary: the distinct quasi-identifier tuples with their :data:`TUPLE_CODE`."""
    dictionaries: list[tuple[exp.Table, str]]
    """Each dictionary with its code column."""

    def unsound(self, joined: exp.Table, rows: str = N) -> exp.Expression:
        """True when the codes do not stand for exactly one tuple or value each: a code appears twice
        in a dictionary, or ``joined`` (a table decoded through the dictionaries, its column ``rows``
        counting rows) does not have the relation's rows."""
        doubled: list[exp.Expression] = [
            exp.Exists(this=exp.select(col(code)).from_(dictionary.copy()).group_by(col(code)).having(
                exp.GT(this=count_star(), expression=exp.Literal.number(1))))
            for dictionary, code in self.dictionaries]
        counted = [exp.Subquery(this=exp.select(exp.Sum(this=col(c))).from_(t.copy()))
                   for t, c in ((joined, rows), (self.codes, N))]
        return as_expression(exp.or_(*doubled, exp.NullSafeNEQ(this=counted[0], expression=counted[1])))


def coded_frequency(plan: Plan, source: exp.Expression, qis: Sequence[str], sensitive: Sequence[str],
                    hash_function: str, *, by_code: bool = False, read_once: bool = True) -> CodedFrequency:
    """Add the codes and the dictionaries to ``plan``; returns the query joining them into the
    frequency table of ``source`` by ``qis`` and ``sensitive`` (``by_code``: by :data:`TUPLE_CODE`
    and ``sensitive``, the tuple dictionary left to join to the classes).

    ``read_once``: the codes and the dictionaries read one CTE of ``source``'s columns, so that a view
    (a model that anonymizes on each read) is computed once; otherwise each reads ``source`` itself,
    which on a table costs less than copying its rows into the CTE."""
    def code(*columns: str) -> exp.Expression:
        return exp.Anonymous(this=hash_function, expressions=[col(c) for c in columns])

    rows = (plan.add("rows", exp.select(*[col(c) for c in [*qis, *sensitive]]).from_(source.copy()))
            if read_once else source)
    keys = [code(*qis), *(code(s) for s in sensitive)]
    names = [TUPLE_CODE, *(value_code(i) for i in range(len(sensitive)))]
    codes = plan.add("codes", exp.select(*[alias(k, n) for k, n in zip(keys, names, strict=True)],
                                         alias(count_star(), N)).from_(rows.copy()).group_by(
        *[k.copy() for k in keys]))

    def dictionary(name: str, columns: Sequence[str], code_name: str) -> exp.Table:
        distinct = exp.select(*[col(c) for c in columns]).from_(rows.copy()).group_by(
            *[col(c) for c in columns])
        return plan.add(name, exp.select(exp.Star(), alias(code(*columns), code_name)).from_(
            exp.alias_(exp.Subquery(this=distinct), internal("d"), quoted=True)))

    tuples = dictionary("tuples", qis, TUPLE_CODE)
    values = [dictionary(f"values{i}", [s], value_code(i)) for i, s in enumerate(sensitive)]
    keyed = [col(TUPLE_CODE, "c")] if by_code else [col(q, "t") for q in qis]
    query = exp.select(*keyed, *[col(s, f"v{i}") for i, s in enumerate(sensitive)], col(N, "c")).from_(
        exp.alias_(codes.copy(), "c", table=True, quoted=True))
    if not by_code:
        query = query.join(exp.alias_(tuples.copy(), "t", table=True, quoted=True),
                           on=exp.EQ(this=col(TUPLE_CODE, "c"), expression=col(TUPLE_CODE, "t")))
    for i, v in enumerate(values):
        query = query.join(exp.alias_(v.copy(), f"v{i}", table=True, quoted=True),
                           on=exp.EQ(this=col(value_code(i), "c"), expression=col(value_code(i), f"v{i}")))
    return CodedFrequency(query, codes, tuples,
                          [(tuples, TUPLE_CODE), *((v, value_code(i)) for i, v in enumerate(values))])


def with_values(plan: Plan, classes: exp.Table, coded: CodedFrequency, qis: Sequence[str]) -> exp.Table:
    """``classes`` (one row per :data:`TUPLE_CODE`) with their quasi-identifiers' values, from the
    tuple dictionary."""
    star = exp.Column(this=exp.Star(), table=exp.to_identifier("v", quoted=True))
    return plan.add("decoded", exp.select(*[col(q, "t") for q in qis], star).from_(
        exp.alias_(classes.copy(), "v", table=True, quoted=True)).join(
        exp.alias_(coded.tuples.copy(), "t", table=True, quoted=True),
        on=exp.EQ(this=col(TUPLE_CODE, "v"), expression=col(TUPLE_CODE, "t"))))
