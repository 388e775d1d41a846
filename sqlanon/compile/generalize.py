"""Generalization of quasi-identifiers: a node (levels per attribute) becomes SELECT expressions."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from sqlglot import exp

from sqlanon.domain.hierarchy.base import Hierarchy
from sqlanon.domain.hierarchy.table import TableHierarchy
from sqlanon.sql.dialects import DialectProfile
from sqlanon.sql.nodes import alias, as_expression, col, internal, lit


def lookup_name(attribute_index: int) -> str:
    return internal(f"h{attribute_index}")


def lookup_columns(h: TableHierarchy) -> list[str]:
    return [internal("leaf")] + [internal(f"l{j}") for j in range(1, h.height + 1)]


@dataclass(frozen=True)
class Generalizer:
    """Generalizes rows of one relation to given levels.

    ``lookups`` maps an attribute to the relation holding its hierarchy table (leaf, l1..lh); attributes
    without one are generalized by expression (CASE map or builder arithmetic).
    """

    qis: Sequence[str]
    hierarchies: Mapping[str, Hierarchy]
    lookups: Mapping[str, exp.Expression]
    fixed: Mapping[str, str] = field(default_factory=dict)
    """Attributes whose level has one label, written as it without a join: only where every value
    is known to be a leaf (a join would give NULL for another value)."""

    def alias_for(self, attribute: str) -> str:
        return lookup_name(list(self.qis).index(attribute))

    def expression(self, attribute: str, level: int, relation: str | None = None) -> exp.Expression:
        h = self.hierarchies[attribute]
        column = col(attribute, relation)
        if level == 0:
            return column
        if attribute in self.fixed:
            return one_label(h, column, self.fixed[attribute])
        if attribute in self.lookups:
            return col(internal(f"l{level}"), self.alias_for(attribute))
        return h.expression(column, level)

    def joins(self, levels: Mapping[str, int], relation: str) -> list[tuple[exp.Expression, exp.Expression]]:
        """(relation, ON condition) for the lookups the levels need."""
        out: list[tuple[exp.Expression, exp.Expression]] = []
        for attribute in self.qis:
            if levels.get(attribute, 0) == 0 or attribute not in self.lookups or attribute in self.fixed:
                continue
            h = self.hierarchies[attribute]
            assert isinstance(h, TableHierarchy)
            a = self.alias_for(attribute)
            rel = self.lookups[attribute].copy()
            if isinstance(rel, exp.Table):
                rel = as_expression(exp.alias_(rel, a, table=True, quoted=True, copy=False))
            on = exp.EQ(this=col(internal("leaf"), a), expression=h.key(col(attribute, relation)))
            out.append((rel, on))
        return out

    def select(self, source: exp.Expression, levels: Mapping[str, int], *, keep: Sequence[str] = (),
               extra: Sequence[exp.Expression] = (), relation: str = "__sa_src") -> exp.Select:
        """SELECT generalized QIs (named as the QIs), then ``keep`` columns unchanged, then ``extra``."""
        src = source.copy()
        if isinstance(src, exp.Table):
            src = as_expression(exp.alias_(src, relation, table=True, quoted=True, copy=False))
        elif isinstance(src, exp.Select):
            src = as_expression(exp.alias_(exp.Subquery(this=src), relation, quoted=True, copy=False))
        projections = [alias(self.expression(a, levels.get(a, 0), relation), a) for a in self.qis]
        projections += [alias(col(c, relation), c) for c in keep]
        q = exp.select(*projections, *extra).from_(src, copy=False)
        for rel, on in self.joins(levels, relation):
            q = q.join(rel, on=on, join_type="left", copy=False)
        return q


def one_label(h: Hierarchy, column: exp.Expression, label: str) -> exp.Expression:
    """What the join with a look-up table gives a leaf at a level of one label: the label, and NULL
    for NULL unless the hierarchy maps NULL to a leaf."""
    if isinstance(h, TableHierarchy) and h.null_leaf is not None:
        return lit(label)
    return exp.Case(ifs=[exp.If(this=exp.Is(this=column.copy(), expression=exp.Null()), true=exp.Null())],
                    default=lit(label))


def lookup_values(h: TableHierarchy, name: str, dialect: DialectProfile | None = None) -> exp.Expression:
    """The hierarchy table as an inline VALUES relation (for compiled, engine-independent SQL).

    For ``dialect``, a large table's rows are rendered directly (:func:`~sqlanon.sql.nodes.values_table`).
    """
    from sqlanon.sql.nodes import DIRECT_VALUES_MIN_ROWS, direct_values, values_table

    columns = lookup_columns(h)
    if dialect is not None and h.table().domain_size >= DIRECT_VALUES_MIN_ROWS:
        held = h.table().lookup_arrow(columns)
        if held is not None:  # a large file read as Arrow columns: rows assembled in Arrow
            from sqlanon.compile.values_text import arrow_rows_text

            text = arrow_rows_text(held, dialect.sqlglot)
            if text is not None:
                return direct_values(text, columns, name)
    return values_table(h.lookup_rows(), columns, name, dialect.sqlglot if dialect is not None else None)
