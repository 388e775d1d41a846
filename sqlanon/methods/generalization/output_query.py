"""The anonymized rows as one self-contained SELECT.

The statement recomputes the suppression decision itself: its CTEs are the checks' relations
(:mod:`sqlanon.compile.checks`: frequency table, generalized table, histograms, per-class statistics,
verdict with ``__sa_keep``) over the source, and the final SELECT joins every source row, generalized,
to its class's verdict. Each class also carries the table's rows and the rows of failing classes;
when these exceed the suppression limit the statement fails (:func:`not_anonymous_failure`).
Hierarchies that need a lookup table are inline ``VALUES`` CTEs in a portable statement (a view,
printed SQL), so it reads nothing but the source table and runs anywhere its dialect runs; a
statement run once on the engine joins the lookup tables the evaluator loaded instead.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from sqlglot import exp

from sqlanon.compile import checks
from sqlanon.compile.generalize import Generalizer, lookup_values
from sqlanon.compile.hash_text import declared_types, parse_types
from sqlanon.compile.persons import aligned_rows
from sqlanon.compile.plan import Plan, nullsafe_join
from sqlanon.compile.released import OutputQuery
from sqlanon.domain.hierarchy.base import TOP
from sqlanon.domain.hierarchy.table import TableHierarchy
from sqlanon.domain.models.base import stat_attribute
from sqlanon.errors import InfeasibleError
from sqlanon.methods.generalization.evaluator import Evaluator, NodeCheck, Problem
from sqlanon.methods.generalization.scans import ROW_KEYS
from sqlanon.spec.schema import Spec
from sqlanon.sql.dialects import DialectProfile, fail
from sqlanon.sql.nodes import alias, as_double, as_expression, as_text, col, internal, lit

ROWS = internal("r")
"""Alias of the generalized source rows in the final SELECT."""
CLASS = internal("k")
"""Alias of the per-class verdict in the final SELECT."""
LIMIT_ROWS = internal("rows")
LIMIT_OUTLIERS = internal("outlier_rows")


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
                    evaluator: Evaluator | None = None, *, portable: bool = True,
                    frequency: exp.Select | None = None) -> exp.Table:
    """Add the checks' relations (as in :meth:`Evaluator.check`) to ``plan``; returns the verdict.

    ``frequency``: a query computing the frequency table another way (its columns and rows those of
    :func:`checks.frequency_query` over the problem's source), used in its place.

    Without ``evaluator`` (compiling without a connection) a statistic that needs relations built in
    the database (a research subset) is refused. ``portable``: the statement must run outside this
    connection (a view, printed SQL), so it may read no temporary relation of the evaluator.
    """
    p = problem
    sensitive = p.check_sensitive
    counted = p.source if p.persons is None else plan.add("persons", p.persons_source())
    freq = plan.add("freq", frequency if frequency is not None else
                    checks.frequency_query(counted, p.qis, sensitive, weighted=p.weighted,
                                           extra=p.fit_columns))
    gen = plan.add("gen", checks.generalized_query(freq, generalizer, levels, sensitive,
                                                   weighted=p.weighted, where=p.fits(levels)))
    statistics = checks.statistics_of(p.models)
    attributes = sorted({a for s in statistics if (a := stat_attribute(s))})
    histograms = {a: plan.add(f"hist{i}", checks.histogram_query(gen, p.qis, a, p.value_order.get(a),
                                                                 weighted=p.weighted))
                  for i, a in enumerate(attributes)}
    ctx = checks.CheckContext(plan, list(p.qis), gen, histograms, p.value_order, p.sensitive_hierarchies,
                              levels, p.column_types, p.attribute_types,
                              evaluator.engine.dialect.sqlglot if evaluator is not None else "duckdb",
                              generalizer=generalizer, inputs=evaluator, portable=portable)
    stats = plan.add("stats", checks.stats_query(ctx, statistics))
    fits = p.fits(levels)
    if fits is not None:
        plan.add("unfit", checks.unfit_query(freq, fits))
    return plan.add("verdict", checks.verdict_query(stats, p.models, statistics))


def with_totals(plan: Plan, verdict: exp.Table, unfit: exp.Table | None = None) -> exp.Table:
    """The verdict with two more columns on every class: the table's rows and the rows of classes that
    fail. Window sums over the (small) verdict, so the verdict's CTE is read once. ``unfit``: the
    persons suppressed because they fit no class (one row, :data:`~sqlanon.compile.checks.UNFIT`),
    added to both."""
    size = col(checks.SIZE)
    outliers = exp.Case().when(exp.Not(this=col(checks.KEEP)), size.copy()).else_(lit(0))
    rows: exp.Expression = exp.Window(this=exp.Sum(this=size.copy()))
    failing: exp.Expression = exp.Window(this=exp.Sum(this=outliers))
    if unfit is not None:
        left_out = exp.Subquery(this=exp.select(col(checks.UNFIT)).from_(unfit.copy()))
        rows = exp.Add(this=rows, expression=left_out)
        failing = exp.Add(this=failing, expression=left_out.copy())
    return plan.add("totals", exp.select(exp.Star(), alias(rows, LIMIT_ROWS), alias(failing, LIMIT_OUTLIERS))
                    .from_(verdict.copy()))


def within_limit(suppression_limit: float) -> exp.Expression:
    """Outlier rows <= floor(limit · rows), in doubles as ARX (and :func:`suppression_budget`) computes."""
    budget = exp.Floor(this=exp.Mul(this=as_double(lit(float(suppression_limit))),
                                    expression=as_double(col(LIMIT_ROWS, CLASS))))
    return exp.LTE(this=col(LIMIT_OUTLIERS, CLASS), expression=budget)


def not_anonymous_failure(suppression_limit: float, target: DialectProfile) -> exp.Expression:
    """A boolean expression that stops the statement with an error naming the outlier rows."""
    message = exp.Concat(expressions=[
        lit("sqlanon: not anonymous: "), as_text(col(LIMIT_OUTLIERS, CLASS)),
        lit(f" rows are in classes that fail the privacy models, more than the suppression limit "
            f"{float(suppression_limit):g} allows of "), as_text(col(LIMIT_ROWS, CLASS)),
        lit(" rows")], safe=False, coalesce=False)
    return fail(message, target)


def kept_rows(problem: Problem, verdict: exp.Table, *, by_dropped: bool = False) -> exp.Select:
    """The source rows of the kept classes of a verdict that lists its classes' row keys
    (:attr:`Evaluator.row_keyed`): picked by key, so that only they are generalized, and no row is
    joined to its class on the generalized values.

    ``by_dropped``: the rows whose key is not among those of the classes not kept, the same rows
    (row keys are never NULL) through a set of the fewer keys when fewer rows are suppressed than
    kept (about 10 ms less per 100,000 rows kept, bench/README.md)."""
    keep = col(checks.KEEP)
    listed = exp.Not(this=exp.Is(this=keep, expression=exp.true())) if by_dropped else keep
    keys = exp.select(exp.Unnest(expressions=[col(ROW_KEYS)])).from_(verdict.copy(), copy=False).where(
        listed, copy=False)
    picked: exp.Expression = exp.In(this=problem.engine.row_key(), query=keys.subquery(copy=False))
    return exp.select(exp.Star()).from_(problem.source.copy(), copy=False).where(
        exp.Not(this=picked) if by_dropped else picked, copy=False)


def output_query(spec: Spec, columns: Sequence[str], problem: Problem, levels: Mapping[str, int],
                 suppression_limit: float, target: DialectProfile,
                 evaluator: Evaluator | None = None, enforce_limit: bool = True,
                 portable: bool = True, verdict: exp.Table | None = None,
                 kept: int | None = None, dropped: int | None = None) -> OutputQuery:
    """The anonymized rows of the spec's source at ``levels``, for ``target``.

    The statement decides everything itself: each class's verdict against every privacy model, and,
    with ``enforce_limit``, the suppression limit (when the rows of failing classes exceed it, the
    statement fails with an error starting ``sqlanon: not anonymous``, so that no row is written).
    So it gives the right rows, or none, on data it was not checked against. A view is built
    without ``enforce_limit``: it keeps suppressing per query as the table changes (docs/outputs.md).

    Args:
        spec: gives identifier actions and salts, and ``transformation.suppressed``.
        columns: the released columns of the source, in order.
        problem: the source, QIs, hierarchies and models.
        levels: the generalization level of each QI.
        suppression_limit: the share of rows that may be suppressed.
        target: the dialect the statement is for (hash functions differ).
        evaluator: the problem checked on an engine; None when compiling without a connection.
        enforce_limit: make the statement fail when the failing rows exceed the suppression limit.
        portable: the statement outlives this connection (a view, printed or compiled SQL); False
            when it runs once here (a table written now, in place).
        verdict: the per-class verdict the evaluator materialized for these levels (with
            ``portable`` False): the statement joins it instead of deciding the classes again, and
            the suppression limit, already checked on it, is not enforced a second time.
        kept: the rows of the verdict's kept classes; the statement that picks them by key returns
            as many (:attr:`OutputQuery.rows`).
        dropped: the rows of the verdict's classes not kept: fewer than ``kept``, the statement
            picks the rows whose keys are not theirs.

    Raises:
        SpecError: an identifier's action needs a salt that is missing.
    """
    p = problem
    levels = {a: int(levels.get(a, 0)) for a in p.qis}
    plan = Plan(prefix=internal(""))
    lookups: dict[str, exp.Expression] = {}
    here = evaluator if not portable else None  # the statement runs here, on checked values
    fixed = here.single_labels(levels) if here is not None else {}
    for i, a in enumerate(p.qis):
        h = p.hierarchies[a]
        if levels[a] and isinstance(h, TableHierarchy) and h.needs_lookup() and a not in fixed:
            if here is not None:  # join the lookup table the evaluator loads once
                lookups[a] = here.hierarchies.lookup(a)
                continue
            rows = exp.select(exp.Star()).from_(lookup_values(h, internal("v"), target))
            lookups[a] = plan.add(f"lookup{i}", rows)
    generalizer = Generalizer(p.qis, p.hierarchies, lookups, fixed)
    mask = spec.transformation.suppressed == "mask"
    picked: exp.Select | None = None
    if verdict is None or portable:
        verdict = check_relations(plan, p, generalizer, levels, evaluator, portable=portable)
    else:
        enforce_limit = False
        if evaluator is not None and evaluator.row_keyed and not mask and p.persons is None:
            picked = kept_rows(p, verdict, by_dropped=kept is not None and dropped is not None
                               and dropped < kept)

    others = [c for c in columns if c not in p.qis]
    # with a privacy unit every row carries its person's QI values: one class, one verdict a person
    rows = generalizer.select(picked if picked is not None else p.source if p.persons is None else
                              aligned_rows(p.source, columns, p.qis, p.persons), levels,
                              keep=[*others, *p.fit_columns])
    keep = col(checks.KEEP, CLASS)
    types = {**declared_types(p.attribute_types),
             **parse_types(p.column_types.items(),
                           (p.engine.dialect if p.engine is not None else target).sqlglot)}
    out = OutputQuery(exp.select(), types=types)
    projections: list[exp.Expression] = []
    for c in columns:
        if c in p.qis:
            value: exp.Expression = col(c, ROWS)
            if mask:
                value = exp.Case().when(keep.copy(), as_text(col(c, ROWS))).else_(lit(TOP))
            projections.append(alias(value, c))
        elif (released := out.released(spec, c, col(c, ROWS), target)) is not None:
            projections.append(released)
    query = exp.select(*projections).from_(
        exp.alias_(exp.Subquery(this=rows), ROWS, quoted=True, copy=False), copy=False)
    if picked is not None:  # the rows of kept classes, generalized after they were picked
        out.query = plan.as_query(query, copy=False)
        out.rows = kept
        return out
    unfit = plan.ref("unfit") if plan.has("unfit") else None
    classes = with_totals(plan, verdict, unfit) if enforce_limit else verdict
    query = query.join(exp.alias_(classes.copy(), CLASS, table=True, quoted=True, copy=False),
                       on=nullsafe_join(ROWS, CLASS, p.qis), join_type="inner", copy=False)
    allowed: exp.Expression | None = None if mask else keep
    fits = p.persons.fits(levels, ROWS) if p.persons is not None else None
    if fits is not None:  # a person whose rows fall in several classes is suppressed
        allowed = as_expression(exp.and_(fits, allowed)) if allowed is not None else fits
    if enforce_limit:
        allowed = exp.Case().when(within_limit(suppression_limit), allowed or exp.true()).else_(
            not_anonymous_failure(suppression_limit, target))
    out.query = plan.as_query(query.where(allowed, copy=False) if allowed is not None else query)
    return out
