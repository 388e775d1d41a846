"""Counting metrics: suppressed cells and the classification metric (per-record penalties)."""

from __future__ import annotations

from typing import ClassVar

from sqlglot import exp

from sqlanon.domain.metrics.base import Metric, MetricContext, register
from sqlanon.domain.models.base import KEEP, N
from sqlanon.errors import SpecError, did_you_mean
from sqlanon.sql.nodes import alias, col, internal, lit, nullsafe_join

_LABEL = internal("label")
_C = internal("c")
_TOP = internal("top")
_TOTAL = internal("total")


@register
class SuppressedCells(Metric):
    """QI cells suppressed: S × d (every QI cell of a suppressed record), S counted as ARX's models
    count it (in the research subset, with δ-presence).

    Meyerson & Williams, On the complexity of optimal k-anonymity, PODS 2004 (the cell count objective).
    """

    name: ClassVar[str] = "suppressed_cells"
    counts_population: ClassVar[bool] = True

    def compute(self, ctx: MetricContext) -> float:
        return float(ctx.population.suppressed * len(ctx.qis))


def classification_target(ctx: MetricContext) -> str:
    """The ``target`` option, else the first sensitive attribute; it must be a column the check reads."""
    p = ctx.evaluator.p
    target = ctx.options.get("target")
    if target is None:
        if not p.sensitive:
            raise SpecError("the classification metric needs a class label: declare a sensitive attribute "
                            "or set the metric option 'target'", path="metrics.options.target")
        return p.sensitive[0]
    known = [*p.qis, *p.sensitive, *[a for m in p.models for a in m.sensitive_attributes()]]
    if target not in known:
        raise SpecError(f"classification target {target!r} is not a quasi-identifier or sensitive "
                        f"attribute; known: {', '.join(dict.fromkeys(known))}." + did_you_mean(target, known),
                        path="metrics.options.target")
    return target


def classification_penalties(ctx: MetricContext, target: str) -> tuple[int, int]:
    """(records of kept classes not carrying their class's majority label, suppressed records).

    A kept class whose most frequent label is tied has no majority: all its records count (ARX).
    """
    ev, qis = ctx.evaluator, ctx.qis
    rel = internal("src")
    labelled = ev.generalizer.select(ev.freq, ctx.node.levels, keep=[N], relation=rel,
                                     extra=[alias(col(target, rel), _LABEL)])
    part = [col(q) for q in qis]
    per_label = exp.select(*[col(q) for q in qis], alias(exp.Sum(this=col(N)), _C)) \
        .from_(exp.alias_(exp.Subquery(this=labelled), internal("l"))).group_by(*part, col(_LABEL))
    ranked = exp.select(
        exp.Star(),
        alias(exp.Window(this=exp.Max(this=col(_C)), partition_by=[p.copy() for p in part] or None), _TOP),
        alias(exp.Window(this=exp.Sum(this=col(_C)), partition_by=[p.copy() for p in part] or None), _TOTAL),
    ).from_(exp.alias_(exp.Subquery(this=per_label), internal("p")))
    at_top = exp.Case().when(exp.EQ(this=col(_C), expression=col(_TOP)), lit(1)).else_(lit(0))
    per_class = exp.select(*[col(q) for q in qis], alias(exp.Max(this=col(_TOP)), _TOP),
                           alias(exp.Max(this=col(_TOTAL)), _TOTAL), alias(exp.Sum(this=at_top), "ties")) \
        .from_(exp.alias_(exp.Subquery(this=ranked), internal("r"))).group_by(*[p.copy() for p in part])
    classes = exp.select(col(_TOP, "c"), col(_TOTAL, "c"), col("ties", "c"), alias(col(KEEP, "v"), KEEP)) \
        .from_(exp.alias_(exp.Subquery(this=per_class), "c", quoted=True)) \
        .join(exp.alias_(ctx.node.verdict.copy(), "v", table=True, quoted=True),
              on=nullsafe_join("c", "v", qis))
    kept = ctx.kept()
    wrong = exp.Case().when(exp.EQ(this=col("ties"), expression=lit(1)),
                            exp.Sub(this=col(_TOTAL), expression=col(_TOP))).else_(col(_TOTAL))

    def total_if(cond: exp.Expression, value: exp.Expression) -> exp.Expression:
        return exp.Coalesce(this=exp.Sum(this=exp.Case().when(cond, value).else_(lit(0))),
                            expressions=[lit(0)])

    row = ctx.engine.fetch(exp.select(total_if(kept.copy(), wrong),
                                      total_if(exp.Not(this=kept.copy()), col(_TOTAL)))
                           .from_(exp.alias_(exp.Subquery(this=classes), internal("k"))))[1][0]
    return int(row[0]), int(row[1])


@register
class Classification(Metric):
    """Iyengar's classification metric: mean penalty per record.

    A record costs 1 when its class label (option ``target``, default the first sensitive attribute)
    differs from the majority label of its equivalence class, and ``suppressed_penalty`` (default 1)
    when it is suppressed; the sum is divided by n. Ties for the majority penalize every record of the
    class, as ARX's MetricSDClassification does; ARX charges its gs-factor (0.5 by default) per
    suppressed record, which ``suppressed_penalty: 0.5`` reproduces.
    Iyengar, Transforming data to satisfy privacy constraints, KDD 2002.
    """

    name: ClassVar[str] = "classification"
    options: ClassVar[tuple[str, ...]] = ("target", "suppressed_penalty")
    monotonic_with_generalization: ClassVar[bool] = False

    def compute(self, ctx: MetricContext) -> float:
        penalty = ctx.options.get("suppressed_penalty", 1.0)
        if isinstance(penalty, bool) or not isinstance(penalty, (int, float)) or not 0 <= penalty <= 1:
            raise SpecError(f"suppressed_penalty must be a number in [0, 1], got {penalty!r}",
                            path="metrics.options.suppressed_penalty")
        wrong, suppressed = classification_penalties(ctx, classification_target(ctx))
        return (wrong + penalty * suppressed) / ctx.n
