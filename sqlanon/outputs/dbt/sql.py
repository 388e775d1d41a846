"""The SQL of a dbt model and of its privacy gates, built by the same compiler as ``sqlanon compile``
and ``sqlanon check``.

Both are rendered for one dialect with placeholder relations (:data:`RELATION`, :data:`SOURCE`) that
the dbt files replace by Jinja (``{{ ref(...) }}``, a test's ``model``): every other identifier and
literal comes from sqlglot.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import cast

from sqlglot import exp

from sqlanon.compile.checks import SIZE, N, frequency_query, ok_column
from sqlanon.compile.generalize import Generalizer
from sqlanon.compile.plan import Plan
from sqlanon.domain.hierarchy.base import TOP, Hierarchy
from sqlanon.domain.models.base import PrivacyModel, Statistic, stat_attribute
from sqlanon.methods.generalization.evaluator import Problem
from sqlanon.methods.generalization.output_query import check_relations, output_query
from sqlanon.outputs.dbt.coded import TUPLE_CODE, coded_frequency, with_values
from sqlanon.outputs.offline import offline_problem
from sqlanon.outputs.writer import select_sql
from sqlanon.spec.schema import Spec
from sqlanon.sql.dialects import DialectProfile, profile
from sqlanon.sql.nodes import alias, as_double, as_expression, as_text, col, count_star, internal, lit, table
from sqlanon.sql.render import render

RELATION = internal("dbt_relation")
"""The placeholder of the relation a statement reads (the model's input, or the tested model)."""
SOURCE = internal("dbt_source")
"""The placeholder of the source a suppression-limit gate counts the rows of."""
MESSAGE = internal("message")
"""The column of a gate's row that says what fails."""
PRIVACY = "privacy"
"""The one gate of every privacy model and the suppression limit (``--one-gate``)."""
RARE = "no_rare_values"
"""The gate that no value of a quasi-identifier, unless suppressed, is in fewer than k rows."""
RARE_DEFAULT_K = 2
"""The rare-value gate's k for a spec none of whose models has a ``k``: no value is unique."""
UNDECIDED = ("cannot check the privacy models: two different values of the model share a hash code, "
             "so its classes cannot be told apart by their codes")
"""The one gate's message when its hash codes (:mod:`.coded`) do not stand for one value each."""


def placeholder_text(name: str, dialect: str) -> str:
    """How the placeholder relation ``name`` appears in SQL rendered for ``dialect``."""
    return render(table(name), profile(dialect))


def gate_problem(spec: Spec) -> tuple[Problem, dict[str, int]]:
    """The spec's problem reading the placeholder :data:`RELATION`, and its levels."""
    problem, levels = offline_problem(spec)
    return dataclasses.replace(problem, source=table(RELATION)), levels


def model_select(spec: Spec, dialect: str, *, enforce_limit: bool) -> str:
    """The spec's released rows as one SELECT for ``dialect`` (no trailing ``;``), reading
    :data:`RELATION`; ``enforce_limit``: the statement fails when the failing rows exceed the limit."""
    target = profile(dialect)
    problem, levels = gate_problem(spec)
    oq = output_query(spec, list(spec.attributes), problem, levels, spec.transformation.suppression_limit,
                      target, enforce_limit=enforce_limit)
    return select_sql(oq, target).rstrip().rstrip(";")


@dataclass(frozen=True)
class Gate:
    """One privacy gate: a SELECT returning one row (with :data:`MESSAGE`) when the gate fails."""

    name: str
    """A short name for file and test names (``k_anonymity``, ``suppression_limit``)."""
    description: str
    sql: dict[str, str]
    """The SELECT by dialect."""
    needs_source: bool = False


def describe(model: PrivacyModel) -> str:
    """``k_anonymity (k=5)``: the model's spec key and parameters."""
    names: list[str] = [f.name for f in dataclasses.fields(model)] if dataclasses.is_dataclass(model) else []
    params = ", ".join(f"{n}={getattr(model, n)}" for n in names if getattr(model, n) is not None)
    return f"{model.name} ({params})" if params else model.name


def _label(statistic: Statistic) -> str:
    """``DistinctCount(salary-class)``: a statistic as the message shows it."""
    attribute = stat_attribute(statistic)
    return type(statistic).__name__ + (f"({attribute})" if attribute else "")


def _masked(qis: list[str]) -> exp.Expression:
    """The row was suppressed by masking: every quasi-identifier is ``*``."""
    if not qis:
        return exp.false()
    both = exp.and_(*[exp.EQ(this=as_text(col(q)), expression=lit(TOP)) for q in qis])
    return exp.Coalesce(this=exp.Paren(this=both), expressions=[exp.false()])


def _text(value: exp.Expression) -> exp.Expression:
    return exp.Coalesce(this=as_text(value), expressions=[lit("NULL")])


def _concat(*parts: exp.Expression) -> exp.Expression:
    return exp.Concat(expressions=list(parts), safe=False, coalesce=False)


def _worst_first(model: PrivacyModel, statistics: dict[Statistic, exp.Expression]) -> list[exp.Ordered]:
    """Failing classes in the order of how badly they fail: by the statistic the model's achieved
    value aggregates (smallest first for a minimum, largest first for a maximum), then by size."""
    order: list[exp.Ordered] = []
    achieved = model.achieved(statistics)
    inner = achieved
    while isinstance(inner, (exp.Exp, exp.Cast)) and inner.this is not None:
        inner = inner.this
    if isinstance(inner, (exp.Min, exp.Max)):
        order.append(exp.Ordered(this=inner.this.copy(), desc=isinstance(inner, exp.Max)))
    if not any(o.this == col(SIZE) for o in order):
        order.append(exp.Ordered(this=col(SIZE)))
    return order


def model_gate_sql(problem: Problem, model: PrivacyModel, target: DialectProfile) -> str:
    """The worst class of the tested relation that fails ``model``; rows masked by suppression
    (every quasi-identifier ``*``) are exempt, as the checks exempt suppressed classes."""
    qis = list(problem.qis)
    # only the model's own sensitive attributes: the others would only make the first GROUP BY finer
    own = model.sensitive_attributes()
    sub = dataclasses.replace(problem, models=[model], sensitive=[a for a in problem.sensitive if a in own])
    plan = Plan(prefix=internal(""))
    verdict = check_relations(plan, sub, Generalizer(qis, problem.hierarchies, {}), dict.fromkeys(qis, 0))
    return render(plan.as_query(worst_class(verdict, qis, model, 0)), target, pretty=True)


def worst_class(verdict: exp.Table, qis: list[str], model: PrivacyModel, index: int) -> exp.Select:
    """The worst class of ``verdict`` failing ``model`` (its verdict column ``ok_column(index)``),
    with :data:`MESSAGE`, the quasi-identifiers and the size; masked classes are exempt."""
    statistics: dict[Statistic, exp.Expression] = {s: col(s.column) for s in model.statistics()}
    failing = exp.and_(exp.Not(this=col(ok_column(index))), exp.Not(this=_masked(qis)))
    described: list[exp.Expression] = [lit(f"fails {describe(model)}: "), as_text(col(internal("failing"))),
                                       lit(" classes fail; the worst, (")]
    for i, q in enumerate(qis):
        described += [lit(("" if i == 0 else ", ") + f"{q}="), _text(col(q))]
    described += [lit("), has "), as_text(col(SIZE)), lit(" rows")]
    for s in model.statistics():
        if s.column != SIZE:
            described += [lit(f", {_label(s)}="), _text(col(s.column))]
    classes = exp.select(exp.Star(), alias(exp.Window(this=count_star()), internal("failing"))).from_(
        verdict.copy()).where(failing)
    ranked = exp.select(alias(_concat(*described), MESSAGE), *[col(q) for q in qis], col(SIZE)).from_(
        exp.alias_(exp.Subquery(this=classes), internal("f"), quoted=True))
    # then by the class's values, so that the same class is named on every run
    return ranked.order_by(*_worst_first(model, statistics), *[col(q) for q in qis]).limit(1)


def suppression_gate_sql(problem: Problem, limit: float, target: DialectProfile, *,
                         masks: bool = True) -> str:
    """A row when the tested relation keeps fewer rows unsuppressed than the limit allows of the
    source's: suppressed = source rows - rows not masked, at most floor(limit · source rows).

    ``masks``: a row whose every quasi-identifier is ``*`` was suppressed; False when the levels
    generalize every quasi-identifier to ``*`` (such rows are then released, not suppressed)."""
    masked = _masked(list(problem.qis)) if masks else exp.false()
    kept = exp.select(alias(exp.Sum(this=exp.Case().when(masked, lit(0)).else_(lit(1))),
                            internal("kept"))).from_(table(RELATION))
    return render(over_limit(kept, limit), target, pretty=True)


def over_limit(kept: exp.Select, limit: float) -> exp.Select:
    """A row when the source's rows minus ``kept`` (one row, its column ``kept``: the tested
    relation's unsuppressed rows) exceed floor(limit · source rows)."""
    source = exp.select(alias(count_star(), internal("rows"))).from_(table(SOURCE))
    rows, kept_rows = col(internal("rows"), "s"), exp.Coalesce(this=col(internal("kept"), "m"),
                                                               expressions=[lit(0)])
    suppressed = exp.Sub(this=rows, expression=kept_rows)
    budget = exp.Floor(this=exp.Mul(this=as_double(lit(float(limit))), expression=as_double(rows.copy())))
    message = _concat(lit("fails the suppression limit: "), as_text(suppressed.copy()), lit(" of "),
                      as_text(rows.copy()), lit(f" source rows are suppressed, more than the limit {limit:g} "
                                                "allows ("),
                      as_text(exp.Cast(this=budget.copy(), to=exp.DataType.build("bigint"))), lit(")"))
    query = exp.select(alias(message, MESSAGE), alias(suppressed.copy(), internal("suppressed")),
                       alias(rows.copy(), internal("rows"))).from_(
        exp.alias_(exp.Subquery(this=kept), "m", quoted=True)).join(
        exp.alias_(exp.Subquery(this=source), "s", quoted=True), join_type="cross").where(
        exp.GT(this=suppressed.copy(), expression=budget))
    return query


def uses_codes(problem: Problem, target: DialectProfile) -> bool:
    """Whether the one gate groups on hash codes (:mod:`.coded`): on a target with an equality hash,
    when the frequency table groups by two or more sensitive attributes besides the
    quasi-identifiers (with one, grouping by the values costs less than the codes and dictionaries)."""
    return target.equality_hash is not None and bool(problem.qis) and len(problem.check_sensitive) >= 2


def classes_by_code(problem: Problem) -> bool:
    """Whether the checks can key the classes by their tuple code (:func:`.coded.coded_frequency`,
    ``by_code``): no statistic reads the quasi-identifiers' values (a population table's classes) and
    no model's attribute is a quasi-identifier."""
    statistics = [s for m in problem.models for s in m.statistics()]
    return not any("population" in s.memory_inputs for s in statistics) and not any(
        a in problem.qis for m in problem.models for a in m.sensitive_attributes())


def privacy_gate_sql(problem: Problem, limit: float, target: DialectProfile, *, masks: bool = True,
                     coded: bool | None = None, by_code: bool | None = None, read_once: bool = True) -> str:
    """Every privacy model and the suppression limit in one statement, on one scan of the tested
    relation: a row (with the message of the model's own gate) per failing model, naming its worst
    class, and one when the suppressed rows exceed the limit. The unsuppressed rows are counted on
    the per-class verdict, not on the relation.

    ``coded``: build the frequency table on hash codes (default :func:`uses_codes`); the statement
    then also returns a row when two values share a code, rather than check merged classes. The
    checks then key the classes by their tuple code (``by_code``, default :func:`classes_by_code`), and
    the codes and dictionaries read the relation once into a CTE only when ``read_once`` (a view, see
    :func:`.coded.coded_frequency`)."""
    qis = list(problem.qis)
    # only the sensitive attributes a model reads: the others would only make the grouping finer
    read = {a for m in problem.models for a in m.sensitive_attributes()}
    problem = dataclasses.replace(problem, sensitive=[a for a in problem.sensitive if a in read])
    plan = Plan(prefix=internal(""))
    frequency, checked = None, problem
    if coded if coded is not None else uses_codes(problem, target):
        if target.equality_hash is None:
            raise ValueError(f"{target.name} has no equality hash to group on codes")
        by_code = classes_by_code(problem) if by_code is None else by_code
        frequency = coded_frequency(plan, problem.source, qis, problem.check_sensitive, target.equality_hash,
                                    by_code=by_code, read_once=read_once)
        if by_code:
            checked = dataclasses.replace(problem, qis=[TUPLE_CODE],
                                          hierarchies=cast(dict[str, Hierarchy], {TUPLE_CODE: None}))
    keys = list(checked.qis)
    generalizer = Generalizer(keys, checked.hierarchies, {})
    verdict = check_relations(plan, checked, generalizer, dict.fromkeys(keys, 0),
                              frequency=None if frequency is None else frequency.query)
    if frequency is not None and checked is not problem:
        verdict = with_values(plan, verdict, frequency, qis)
    masked = _masked(qis) if masks else exp.false()
    kept = exp.select(alias(exp.Sum(this=exp.Case().when(masked, lit(0)).else_(col(SIZE))),
                            internal("kept"))).from_(verdict.copy())
    parts = [*(worst_class(verdict, qis, m, i) for i, m in enumerate(problem.models)),
             over_limit(kept, limit)]
    if frequency is not None:
        joined = (verdict, SIZE) if checked is not problem else (plan.ref("freq"), N)
        parts.append(exp.select(alias(lit(UNDECIDED), MESSAGE)).where(frequency.unsound(*joined)))
    selects = [exp.select(col(MESSAGE)).from_(
        exp.alias_(exp.Subquery(this=part), internal(f"g{i}"), quoted=True)) for i, part in enumerate(parts)]
    union: exp.Query = selects[0]
    for part in selects[1:]:
        union = exp.union(union, part, distinct=False)
    final = exp.select(col(MESSAGE)).from_(exp.alias_(exp.Subquery(this=union), internal("g"), quoted=True))
    return render(plan.as_query(final), target, pretty=True)


def _suppressed(value: exp.Expression) -> exp.Expression:
    """A cell is suppressed when it holds the suppression symbol ``*`` or is NULL (blanked)."""
    return as_expression(exp.or_(exp.Is(this=value.copy(), expression=exp.Null()),
                                 exp.EQ(this=as_text(value.copy()), expression=lit(TOP))))


def rare_values_gate_sql(problem: Problem, k: int, target: DialectProfile) -> str:
    """The rarest value of any quasi-identifier that is in fewer than ``k`` rows of the tested
    relation, counting each quasi-identifier on its own; suppressed cells (``*`` or NULL) are exempt.

    One scan of the relation (the checks' frequency table of the quasi-identifiers), then one
    small ``GROUP BY`` per quasi-identifier over that table."""
    qis = list(problem.qis)
    plan = Plan(prefix=internal(""))
    freq = plan.add("freq", frequency_query(problem.source, qis, []))
    position, attribute, value, rows = (internal(n) for n in ("position", "attribute", "value", "rows"))
    per_attribute = [
        exp.select(alias(lit(i), position), alias(lit(q), attribute), alias(as_text(col(q)), value),
                   alias(exp.Sum(this=col(N)), rows)).from_(freq.copy()).where(
            exp.Not(this=exp.Paren(this=_suppressed(col(q))))).group_by(col(q))
        for i, q in enumerate(qis)]
    union: exp.Query = per_attribute[0]
    for part in per_attribute[1:]:
        union = exp.union(union, part, distinct=False)
    values = plan.add("values", exp.select(exp.Star()).from_(
        exp.alias_(exp.Subquery(this=union), internal("u"), quoted=True)))
    rare = exp.select(exp.Star(), alias(exp.Window(this=count_star()), internal("failing"))).from_(
        values).where(exp.LT(this=col(rows), expression=lit(int(k))))
    message = _concat(lit(f"fails {RARE} (k={k}): "), as_text(col(internal("failing"))),
                      lit(f" values of the quasi-identifiers are in fewer than {k} rows; the worst, "),
                      col(attribute), lit("="), col(value), lit(", is in "), as_text(col(rows)),
                      lit(" rows"))
    worst = exp.select(alias(message, MESSAGE), col(attribute), col(value), col(rows)).from_(
        exp.alias_(exp.Subquery(this=rare), internal("f"), quoted=True)).order_by(
        col(rows), col(position), col(value)).limit(1)
    return render(plan.as_query(worst), target, pretty=True)


def rare_values_k(models: list[PrivacyModel]) -> int:
    """The k of the rare-value gate: the largest ``k`` of the models, else :data:`RARE_DEFAULT_K`."""
    ks = [v for m in models if isinstance(v := getattr(m, "k", None), int) and not isinstance(v, bool)]
    return max(ks, default=RARE_DEFAULT_K)


def gates(spec: Spec, dialects: list[str], *, view: bool = False, one: bool = False) -> list[Gate]:
    """A gate for each privacy model of the spec and one for its suppression limit, per dialect
    (``one``: a single gate for all of them, :func:`privacy_gate_sql`); ``view``: and the
    rare-value gate, for a model that re-reads its live source on every query."""
    if spec.privacy_unit is not None:
        from sqlanon.errors import UnsupportedError

        raise UnsupportedError("the dbt privacy gates count the released model's rows, and with a privacy "
                               "unit a person has many: write the output with `sqlanon apply` (modes table, "
                               "view, in_place or sql) instead")
    problem, levels = gate_problem(spec)
    out: list[Gate] = []
    limit = spec.transformation.suppression_limit
    masks = not all((h := problem.hierarchies.get(a)) is not None and levels.get(a, 0) >= h.height
                    for a in problem.qis)
    if one:
        described = ", ".join([*(describe(m) for m in problem.models), f"suppression limit {limit:g}"])
        # a table is read by each of the coded gate's GROUP BYs; a view, computed once into a CTE
        out.append(Gate(PRIVACY, described, {d: privacy_gate_sql(problem, limit, profile(d), masks=masks,
                                                                 read_once=view)
                                             for d in dialects}, needs_source=True))
    for i, model in enumerate([] if one else problem.models):
        name = model.name if [m.name for m in problem.models].count(model.name) == 1 else f"{model.name}_{i}"
        out.append(Gate(name, describe(model),
                        {d: model_gate_sql(problem, model, profile(d)) for d in dialects}))
    if not one:
        out.append(Gate("suppression_limit", f"suppression limit {limit:g}",
                        {d: suppression_gate_sql(problem, limit, profile(d), masks=masks) for d in dialects},
                        needs_source=True))
    if view:
        k = rare_values_k(problem.models)
        out.append(Gate(RARE, f"no unsuppressed rare value (k={k})",
                        {d: rare_values_gate_sql(problem, k, profile(d)) for d in dialects}))
    return out
