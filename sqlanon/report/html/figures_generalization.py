"""The generalization report's figures, computed on the engine: class sizes before (every
quasi-identifier at level 0) and after (the released classes), the levels' meanings, the loss per
attribute, and each sensitive attribute's distribution overall and in single classes."""

from __future__ import annotations

from typing import Any

from sqlglot import exp

from sqlanon.compile import checks
from sqlanon.domain.metrics import MetricContext
from sqlanon.domain.metrics.arx import per_attribute_loss
from sqlanon.domain.models.base import KEEP, SIZE, N
from sqlanon.methods.dataset import Dataset
from sqlanon.methods.generalization.evaluator import Evaluator, NodeCheck
from sqlanon.report.html import figures_numeric, sql
from sqlanon.report.html.levels import meaning
from sqlanon.spec.schema import Spec
from sqlanon.sql.nodes import alias, col, nullsafe_join

CLASSES_SHOWN = 16
"""Classes whose sensitive values the report shows one by one (the smallest released ones)."""
SENSITIVE_BINS = 10
"""Bins of a numeric sensitive attribute's distribution."""


def before(spec: Spec, ds: Dataset) -> dict[str, Any]:
    """Class sizes and sensitive distributions of the source, every quasi-identifier at level 0."""
    qis = sorted(spec.quasi_identifiers, key=ds.column_names.index)
    with ds.engine.purpose("report figures"):
        figures: dict[str, Any] = {"class_sizes": {"before": sql.class_sizes(ds.engine, ds.relation, qis)}}
        numeric = figures_numeric.numeric_attributes(ds, list(spec.sensitive))
        bounds = sql.ranges(ds.engine, ds.relation, numeric)
        figures["sensitive_ranges"] = bounds
        figures["sensitive_before"] = {
            a: _labelled(sql.histogram(ds.engine, ds.relation, a, *bounds[a], bins=SENSITIVE_BINS))
            if a in bounds else sql.value_counts(ds.engine, ds.relation, a) for a in spec.sensitive}
    return figures


def _labelled(bins: list[dict[str, float]]) -> list[tuple[str, int]]:
    return [(f"[{b['lo']:.6g}, {b['hi']:.6g})", int(b["count"])) for b in bins]


def after(spec: Spec, ev: Evaluator, node: NodeCheck, bounds: dict[str, tuple[float, float]]
          ) -> dict[str, Any]:
    """The released node's figures, read from the run's own evaluator while it is open (``node``: the
    node it checked last, whose verdict is still there; no second scan); numeric sensitive
    attributes in bins over ``bounds`` (their ranges in the source)."""
    levels = dict(node.levels)
    hierarchies = ev.p.hierarchies
    figures: dict[str, Any] = {"levels": {
        a: {"level": lv, "height": hierarchies[a].height,
            "meaning": meaning(hierarchies[a], lv)} for a, lv in levels.items()}}
    with ev.engine.purpose("report figures"):
        kept = _kept_classes(node)
        figures["class_sizes"] = {"after": [
            {"size": int(r["size"]), "classes": int(r["classes"])} for r in ev.engine.fetch_dicts(
                exp.select(alias(col(SIZE), "size"), alias(exp.Count(this=exp.Star()), "classes"))
                .from_(sql.sub(kept, "k")).group_by(col(SIZE)).order_by(col(SIZE)))]}
        weights = {a: spec.attributes[a].weight for a in ev.p.qis}
        losses = per_attribute_loss(MetricContext(ev, node, weights, spec.metric_options))
        figures["loss_per_attribute"] = dict(zip(ev.p.qis, losses))
        figures["sensitive"] = {a: _sensitive(ev, node, levels, a, bounds.get(a)) for a in ev.p.sensitive}
    return figures


def _generalized(ev: Evaluator, levels: dict[str, int], attribute: str) -> exp.Select:
    """The counted rows at the node's levels with ``attribute`` raw: the evaluator's scan at these
    levels when it made one that kept the attribute, else its frequency table generalized."""
    scan = ev.scans.node_scan
    if scan is not None and ev.scan_levels == levels and attribute in ev.scans.sensitive:
        return exp.select(*[col(q) for q in ev.p.qis], col(attribute), col(N)).from_(scan.copy())
    return checks.generalized_query(ev.freq, ev.generalizer, levels, [attribute])


def _kept_classes(node: NodeCheck) -> exp.Select:
    """The released classes of the verdict (all of them when the node is not anonymous: nothing is
    suppressed then)."""
    q = exp.select(exp.Star()).from_(node.verdict.copy())
    return q.where(col(KEEP)) if node.anonymous else q


def _label(qis: list[str], row: dict[str, Any]) -> str:
    return ", ".join(f"{q}={'NULL' if row[q] is None else row[q]}" for q in qis)


def _sensitive(ev: Evaluator, node: NodeCheck, levels: dict[str, int], attribute: str,
               bounds: tuple[float, float] | None) -> dict[str, Any]:
    """The attribute's released distribution and its distribution in the smallest released classes
    (a numeric attribute's in bins over ``bounds``)."""
    qis = list(ev.p.qis)
    gen = _generalized(ev, levels, attribute)
    released = (exp.select(*[col(q, "g") for q in qis], col(attribute, "g"), col(N, "g"))
                .from_(sql.sub(gen, "g")).join(sql.sub(_kept_classes(node), "v"),
                                               on=nullsafe_join("g", "v", qis)))
    if bounds is not None:
        overall = _labelled(sql.histogram(ev.engine, sql.sub(released, "r"), attribute, *bounds,
                                          bins=SENSITIVE_BINS, weight=N))
        labels = [label for label, _ in overall]
        value = sql.bin_of(col(attribute, "g"), *bounds, SENSITIVE_BINS)
    else:
        overall = sql.value_counts(ev.engine, sql.sub(released, "r"), attribute, weight=N)
        value = col(attribute, "g")
    chosen = (exp.select(*[col(q) for q in qis], col(SIZE)).from_(sql.sub(_kept_classes(node), "k"))
              .order_by(col(SIZE), *[exp.Ordered(this=col(q), nulls_first=True) for q in qis])
              .limit(CLASSES_SHOWN))
    rows = ev.engine.fetch_dicts(
        exp.select(*[col(q, "g") for q in qis], alias(value, "value"),
                   alias(exp.Sum(this=col(N, "g")), "count"), alias(exp.Max(this=col(SIZE, "c")), "size"))
        .from_(sql.sub(gen, "g")).join(sql.sub(chosen, "c"), on=nullsafe_join("g", "c", qis))
        .group_by(*[col(q, "g") for q in qis], value.copy()))
    classes: dict[str, dict[str, Any]] = {}
    for r in rows:
        c = classes.setdefault(_label(qis, r), {"size": int(r["size"]), "values": []})
        v = labels[int(r["value"])] if bounds is not None and r["value"] is not None else r["value"]
        c["values"].append((v, int(r["count"])))
    for c in classes.values():
        c["values"].sort(key=lambda vc: ("" if vc[0] is None else str(vc[0])))
    ordered = sorted(classes.items(), key=lambda kv: (kv[1]["size"], kv[0]))
    return {"after": overall, "classes": [{"class": k, **v} for k, v in ordered]}
