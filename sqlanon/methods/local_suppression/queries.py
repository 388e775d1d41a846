"""The SQL of a local suppression: the frequency table (one GROUP BY) and the released rows, which
join every row to its combination's decision, an inline ``VALUES`` relation of the combinations
that lose a cell (so a view or printed SQL reads nothing but the source).

Generalization levels are applied first with the generalization method's expressions
(:class:`~sqlanon.compile.generalize.Generalizer`); combinations are compared as text (the engine's
own rendering, read back from the frequency table), NULL matching NULL.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from sqlglot import exp

from sqlanon.compile.generalize import Generalizer, lookup_values
from sqlanon.compile.plan import Plan
from sqlanon.compile.released import OutputQuery
from sqlanon.domain.hierarchy.base import Hierarchy
from sqlanon.domain.hierarchy.table import TableHierarchy
from sqlanon.spec.schema import Spec
from sqlanon.sql.dialects import DialectProfile
from sqlanon.sql.nodes import alias, as_text, col, count_star, internal, lit, table, values_table

ROWS = internal("r")
DECISION = internal("d")
RANK = internal("rank")
FIRST = internal("first")
LAST = internal("last")
COUNT = internal("n")


def value(i: int) -> str:
    return internal(f"v{i}")


def flag(i: int) -> str:
    return internal(f"s{i}")


@dataclass
class Rows:
    """The source with its quasi-identifiers generalized to ``levels`` (as the generalization's
    output writes them)."""

    source: exp.Expression
    columns: list[str]
    qis: list[str]
    hierarchies: Mapping[str, Hierarchy]
    levels: Mapping[str, int]

    def select(self, plan: Plan, target: DialectProfile | None) -> exp.Select:
        lookups: dict[str, exp.Expression] = {}
        for i, a in enumerate(self.qis):
            h = self.hierarchies.get(a)
            if self.levels.get(a, 0) and isinstance(h, TableHierarchy) and h.needs_lookup():
                lookups[a] = plan.add(f"lookup{i}", exp.select(exp.Star()).from_(
                    lookup_values(h, internal("v"), target)))
        levelled = [a for a in self.qis if self.levels.get(a, 0)]
        generalizer = Generalizer(levelled, {a: self.hierarchies[a] for a in levelled}, lookups)
        others = [c for c in self.columns if c not in levelled]
        return generalizer.select(self.source, self.levels, keep=others)


def frequency_query(rows: Rows) -> exp.Select:
    """One GROUP BY: every combination of the quasi-identifiers (as text) and its rows."""
    plan = Plan(prefix=internal(""))
    inner = exp.Subquery(this=rows.select(plan, None),
                         alias=exp.TableAlias(this=exp.to_identifier(ROWS, quoted=True)))
    keys = [as_text(col(a, ROWS)) for a in rows.qis]
    q = exp.select(*[alias(k, value(i)) for i, k in enumerate(keys)], alias(count_star(), COUNT))
    q = q.from_(inner)
    q = q.group_by(*[k.copy() for k in keys])
    return plan.as_query(q)


def _same(attribute: str, i: int, rows: Rows, types: Mapping[str, exp.DataType]) -> exp.Expression:
    """A row's value of ``attribute`` is the decision's: an attribute kept as it is compares in its
    own type (the decision's text cast back, so a statement printed for another dialect, which
    writes numbers and dates as text its own way, still matches); a generalized one as text."""
    decided = col(value(i), DECISION)
    kind = types.get(attribute)
    if rows.levels.get(attribute, 0) or kind is None or kind.is_type(*exp.DataType.TEXT_TYPES):
        return exp.NullSafeEQ(this=as_text(col(attribute, ROWS)), expression=decided)
    return exp.NullSafeEQ(this=col(attribute, ROWS), expression=exp.cast(decided, kind.copy()))


@dataclass
class Decision:
    """Rows ``first``..``last`` (1-based, in the combination's row order) of the combination ``values``
    lose the cells ``flags``."""

    values: tuple[str | None, ...]
    flags: tuple[bool, ...]
    first: int
    last: int


def output_query(spec: Spec, rows: Rows, decisions: Sequence[Decision], split: bool,
                 target: DialectProfile, types: Mapping[str, exp.DataType], marker: str | None,
                 kept: str | None = None) -> OutputQuery:
    """The released rows: each quasi-identifier NULL (or ``marker``) where its row's decision says so.

    ``split``: some combination's rows take different decisions; the rows are then numbered within
    their combination (ordered by every column) and a decision holds a range of these numbers.
    ``kept``: a temporary table of the decisions (values and flags, no ranges) read instead of an
    inline relation of ``decisions`` (for outputs written now).
    """
    plan = Plan(prefix=internal(""))
    base: exp.Select = rows.select(plan, target)
    keys = [as_text(col(a, ROWS)) for a in rows.qis]
    if split:
        number = exp.Window(this=exp.RowNumber(), partition_by=[k.copy() for k in keys],
                            order=exp.Order(expressions=[exp.Ordered(this=col(c, ROWS), nulls_first=True)
                                                         for c in rows.columns]))
        base = exp.select(exp.Star(), alias(number, RANK)).from_(exp.Subquery(
            this=base, alias=exp.TableAlias(this=exp.to_identifier(ROWS, quoted=True))))
    source = exp.Subquery(this=base, alias=exp.TableAlias(this=exp.to_identifier(ROWS, quoted=True)))
    out = OutputQuery(exp.select(), types=dict(types))
    projections: list[exp.Expression] = []
    for c in rows.columns:
        if c in rows.qis:
            i = rows.qis.index(c)
            cell: exp.Expression = col(c, ROWS)
            if marker is not None:
                cell = as_text(cell)
            if decisions or kept:
                hit = exp.EQ(this=col(flag(i), DECISION), expression=lit("1"))
                cell = exp.Case().when(hit, lit(marker) if marker is not None else exp.Null()).else_(cell)
            projections.append(alias(cell, c))
        elif (released := out.released(spec, c, col(c, ROWS), target)) is not None:
            projections.append(released)
    query = exp.select(*projections).from_(source)
    if decisions or kept:
        names = [value(i) for i in range(len(keys))] + [flag(i) for i in range(len(keys))] + [FIRST, LAST]
        table_rows = [(*d.values, *("1" if f else "0" for f in d.flags), str(d.first), str(d.last))
                      for d in decisions]
        decided = (exp.alias_(table(kept), DECISION, quoted=True) if kept is not None
                   else values_table(table_rows, names, DECISION, target.sqlglot))
        on: list[exp.Expression] = [_same(a, i, rows, types) for i, a in enumerate(rows.qis)]
        if split:
            rank = col(RANK, ROWS)
            on += [exp.GTE(this=rank.copy(), expression=exp.cast(col(FIRST, DECISION), "bigint")),
                   exp.LTE(this=rank, expression=exp.cast(col(LAST, DECISION), "bigint"))]
        query = query.join(decided, on=exp.and_(*on), join_type="left")
    out.query = plan.as_query(query)
    return out
