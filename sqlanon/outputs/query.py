"""The anonymized rows as one self-contained SELECT.

The statement recomputes the suppression decision itself: its CTEs are the checks' relations
(:mod:`sqlanon.compile.checks`: frequency table, generalized table, histograms, per-class statistics,
verdict with ``__sa_keep``) over the source, and the final SELECT joins every source row, generalized,
to its class's verdict. Hierarchies that need a lookup table are inline ``VALUES`` CTEs, so the
statement reads nothing but the source table and runs anywhere its dialect runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from sqlglot import exp

from sqlanon.compile import checks
from sqlanon.compile.dialects import DialectProfile
from sqlanon.compile.generalize import Generalizer, lookup_values
from sqlanon.compile.plan import Plan, nullsafe_join
from sqlanon.compile.sql import alias, as_text, col, internal, lit
from sqlanon.errors import InfeasibleError
from sqlanon.evaluate import Evaluator, NodeCheck, Problem
from sqlanon.hierarchy.base import TOP
from sqlanon.hierarchy.table import TableHierarchy
from sqlanon.models.base import stat_attribute
from sqlanon.outputs.identifiers import identifier_expression
from sqlanon.spec.schema import Spec

ROWS = internal("r")
"""Alias of the generalized source rows in the final SELECT."""
CLASS = internal("k")
"""Alias of the per-class verdict in the final SELECT."""


@dataclass
class OutputQuery:
    """The output statement and what it does to each column."""

    query: exp.Select
    dropped: list[str] = field(default_factory=list)
    """Identifier columns left out."""
    undeclared: list[str] = field(default_factory=list)
    """Source columns the spec does not mention, copied unchanged."""

    def released(self, spec: Spec, name: str, value: exp.Expression,
                 target: DialectProfile) -> exp.Expression | None:
        """Column ``name`` (read as ``value``) as released when no transformation rewrites it:
        identifiers by their action (None, and noted, when dropped), undeclared columns copied and
        noted."""
        attribute = spec.attributes.get(name)
        if attribute is not None and attribute.role == "identifier":
            value = identifier_expression(attribute, value, target, spec.path)
        elif attribute is None:
            self.undeclared.append(name)
        if value is None:
            self.dropped.append(name)
            return None
        return alias(value, name)

    @property
    def warnings(self) -> list[str]:
        if not self.undeclared:
            return []
        names = ", ".join(self.undeclared)
        return [(f"columns not declared in the spec were copied unchanged: {names} (declare them, "
                 "e.g. as identifier to drop them, or as insensitive)")]


def require_anonymous(node: NodeCheck) -> None:
    """Refuse to write rows of a transformation whose outliers exceed the suppression limit."""
    if node.anonymous:
        return
    raise InfeasibleError(
        f"the transformation is not anonymous: {node.outlier_rows} rows are in classes that fail the "
        f"privacy models, but the suppression limit {node.suppression_limit:g} allows at most "
        f"{node.max_suppressed} of {node.rows} rows to be suppressed. Nothing was written; generalize "
        "further (transformation.levels) or raise transformation.suppression_limit.")


def check_relations(plan: Plan, problem: Problem, generalizer: Generalizer, levels: dict[str, int],
                    evaluator: Evaluator, *, portable: bool = True) -> exp.Table:
    """Add the checks' relations (as in :meth:`Evaluator.check`) to ``plan``; returns the verdict.

    ``portable``: the statement must run outside this connection (a view, printed SQL), so it may
    read no temporary relation of the evaluator.
    """
    p = problem
    sensitive = list(p.sensitive)
    for m in p.models:
        sensitive += [a for a in m.sensitive_attributes() if a not in sensitive and a not in p.qis]
    freq = plan.add("freq", checks.frequency_query(p.source, p.qis, sensitive))
    gen = plan.add("gen", checks.generalized_query(freq, generalizer, levels, sensitive))
    statistics = checks.statistics_of(p.models)
    attributes = sorted({a for s in statistics if (a := stat_attribute(s))})
    histograms = {a: plan.add(f"hist{i}", checks.histogram_query(gen, p.qis, a, p.value_order.get(a)))
                  for i, a in enumerate(attributes)}
    ctx = checks.CheckContext(plan, list(p.qis), gen, histograms, p.value_order, p.sensitive_hierarchies,
                              dict(p.extra, evaluator=evaluator, levels=levels, portable=portable),
                              generalizer=generalizer)
    stats = plan.add("stats", checks.stats_query(ctx, statistics))
    return plan.add("verdict", checks.verdict_query(stats, p.models, statistics))


def output_query(spec: Spec, columns: Sequence[str], evaluator: Evaluator, node: NodeCheck,
                 target: DialectProfile, *, portable: bool = True) -> OutputQuery:
    """The anonymized rows of the spec's source under ``node``, for ``target``.

    Args:
        spec: gives identifier actions and salts, and ``transformation.suppressed``.
        columns: the source's columns in order.
        evaluator: the checked problem (source, QIs, hierarchies, models).
        node: the checked node; must be anonymous.
        target: the dialect the statement is for (hash functions differ).
        portable: the statement outlives this connection (a view, printed or compiled SQL); False
            when it runs once here (a table written now, in place).

    Raises:
        InfeasibleError: the node's outliers exceed the suppression limit.
        SpecError: an identifier's action needs a salt that is missing.
    """
    require_anonymous(node)
    p = evaluator.p
    levels = {a: node.levels.get(a, 0) for a in p.qis}
    plan = Plan(prefix=internal(""))
    lookups: dict[str, exp.Expression] = {}
    for i, a in enumerate(p.qis):
        h = p.hierarchies[a]
        if levels[a] and isinstance(h, TableHierarchy) and h.needs_lookup():
            rows = exp.select(exp.Star()).from_(lookup_values(h, internal("v")))
            lookups[a] = plan.add(f"lookup{i}", rows)
    generalizer = Generalizer(p.qis, p.hierarchies, lookups)
    verdict = check_relations(plan, p, generalizer, levels, evaluator, portable=portable)

    others = [c for c in columns if c not in p.qis]
    rows = generalizer.select(p.source, levels, keep=others)
    keep = col(checks.KEEP, CLASS)
    mask = spec.transformation.suppressed == "mask"
    out = OutputQuery(exp.select())
    projections: list[exp.Expression] = []
    for c in columns:
        if c in p.qis:
            value: exp.Expression = col(c, ROWS)
            if mask:
                value = exp.Case().when(keep.copy(), as_text(col(c, ROWS))).else_(lit(TOP))
            projections.append(alias(value, c))
        elif (released := out.released(spec, c, col(c, ROWS), target)) is not None:
            projections.append(released)
    query = exp.select(*projections).from_(exp.alias_(exp.Subquery(this=rows), ROWS, quoted=True)).join(
        exp.alias_(verdict, CLASS, table=True, quoted=True), on=nullsafe_join(ROWS, CLASS, p.qis),
        join_type="inner")
    if not mask:
        query = query.where(keep)
    out.query = plan.as_query(query)
    return out
