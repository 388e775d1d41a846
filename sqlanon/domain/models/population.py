"""A population table's classes at a node: its rows generalized with the table's hierarchies and
counted per generalized quasi-identifier tuple (read by k-map and the journalist risk figures)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from sqlglot import exp

from sqlanon.sql.nodes import alias, col, count_star, internal

if TYPE_CHECKING:
    from sqlanon.compile.generalize import Generalizer


def population_class_sizes(generalizer: Generalizer, relation: exp.Expression, levels: Mapping[str, int],
                           qis: Sequence[str], column: str, *, weight: str | None = None) -> exp.Select:
    """Per class of the node at ``levels``: the population's records in it, named ``column``.

    ``relation`` holds population records, or (with ``weight``) raw quasi-identifier tuples with the
    number of records each stands for in column ``weight``.
    """
    general = generalizer.select(relation, levels, keep=[weight] if weight else [], relation=internal("pop"))
    count = exp.Sum(this=col(weight)) if weight else count_star()
    return exp.select(*[col(q) for q in qis], alias(count, column)).from_(
        exp.alias_(exp.Subquery(this=general), internal("g"))).group_by(*[col(q) for q in qis])


def raw_population_counts(relation: exp.Expression, qis: Sequence[str], column: str) -> exp.Select:
    """The population's records per raw quasi-identifier tuple (generalized per node from there)."""
    return exp.select(*[col(q) for q in qis], alias(count_star(), column)).from_(relation.copy()).group_by(
        *[col(q) for q in qis])
