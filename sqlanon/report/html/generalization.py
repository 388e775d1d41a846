"""The HTML sections of a generalization's report (``check``, ``apply``, ``anonymize``)."""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from typing import Any

from sqlanon.report.html import charts, risk
from sqlanon.report.html.common import PHASES
from sqlanon.report.html.page import cards, chart, charts_row, esc, paragraph, section, table

OTHER = "other"
WHOLE_LATTICE = 2000
"""A lattice of at most this many nodes is drawn whole (the nodes the search never checked too)."""
VALUES_SHOWN = 12
"""Values of a sensitive attribute shown by name; the others are summed as ``other``."""


def sections(r: Mapping[str, Any], f: Mapping[str, Any]) -> list[str]:
    return [*_summary(r), *_transformation(r, f), *_privacy(r), *_risk(f), *_local(r), *_loss(r, f),
            *_lattice(r), *_sensitive(f)]


def _local(r: Mapping[str, Any]) -> list[str]:
    """A local recoding's steps: the figures above describe its first step's node only."""
    local = r.get("local_recoding")
    if not local:
        return []
    rows = [(s["step"], ", ".join(f"{a}={lv}" for a, lv in s["levels"].items()), s["records"],
             s["released_rows"]) for s in local["steps"]]
    out = local["output"]
    return [section("Local recoding",
                    paragraph("The released rows carry the levels of the step that released them; the "
                              "figures above describe the first step's node, the output's are below."),
                    table(("step", "levels", "records", "released"), rows),
                    table(("output", "value"), [("rows", out["rows"]), ("suppressed", out["suppressed_rows"]),
                                                ("classes", out["classes"]),
                                                ("smallest class", out["min_class_size"]),
                                                *out["metrics"].items()]),
                    anchor="local-recoding")]


def _summary(r: Mapping[str, Any]) -> list[str]:
    released = r["rows"] - r["suppressed_rows"]
    values = {"rows": r["rows"], "released rows": released, "suppressed rows": r["suppressed_rows"],
              "classes": r["classes"], "smallest class": r["min_class_size"],
              "anonymous": bool(r["anonymous"])}
    return [section("Summary", cards(values, bad=() if r["anonymous"] else ("anonymous",)), anchor="summary")]


def _transformation(r: Mapping[str, Any], f: Mapping[str, Any]) -> list[str]:
    t = r["transformation"]
    described = f.get("levels") or {}
    rows = [(a, lv, described.get(a, {}).get("height", ""), described.get(a, {}).get("meaning", ""))
            for a, lv in t["levels"].items()]
    note = (f"Suppression limit {t['suppression_limit']:g} of the rows ({t['max_suppressed_rows']:,} rows); "
            f"{r['suppressed_rows']:,} rows suppressed ({r['outlier_rows']:,} rows in classes that fail "
            "the privacy models).")
    return [section("Transformation", table(("attribute", "level", "height", "meaning"), rows),
                    paragraph(note), anchor="transformation")]


def _privacy(r: Mapping[str, Any]) -> list[str]:
    if not r["privacy"]:
        return []
    rows = [(name, "holds" if m["holds"] else "FAILS", "" if m["achieved"] is None else m["achieved"],
             m["violating_classes"], m["violating_rows"]) for name, m in r["privacy"].items()]
    return [section("Privacy models", table(
        ("model", "verdict", "achieved", "violating classes (before suppression)", "violating rows"), rows),
        anchor="privacy")]


def _risk(f: Mapping[str, Any]) -> list[str]:
    sizes = f.get("class_sizes") or {}
    if not sizes:
        return []
    points = [{**h, "phase": phase} for phase in PHASES for h in sizes.get(phase, [])]
    bins: list[dict[str, Any]] = [{"interval": label, "records": share, "phase": phase}
                                  for phase in PHASES if phase in sizes
                                  for label, share in zip(risk.LABELS, risk.distribution(sizes[phase]))]
    used = {b["interval"] for b in bins if b["records"] > 0}
    shown = [label for label in risk.LABELS if label in used] or list(risk.LABELS)
    summaries = {phase: risk.summary(sizes[phase]) for phase in PHASES if phase in sizes}
    keys = [k for k in next(iter(summaries.values()), {})]
    rows = [(k, *(summaries[p].get(k, "") for p in summaries)) for k in keys]
    return [section(
        "Re-identification risk",
        paragraph("Before: every quasi-identifier at level 0 (the source). After: the released classes "
                  "(suppressed rows excluded). A record's risk is 1 / the size of its class (the "
                  "prosecutor model)."),
        charts_row(chart("class-sizes", charts.class_sizes(points)),
                   chart("risk-distribution", charts.risk_distribution(
                       [b for b in bins if b["interval"] in used], shown))),
        table(("sample risk", *summaries), rows), anchor="risk")]


def _loss(r: Mapping[str, Any], f: Mapping[str, Any]) -> list[str]:
    parts = []
    if r.get("metrics"):
        parts.append(table(("metric", "value"), list(r["metrics"].items())))
    losses = f.get("loss_per_attribute")
    if losses:
        parts.append(chart("loss-per-attribute", charts.bars(
            "Information loss per attribute (ARX's loss)",
            [{"attribute": a, "loss": v} for a, v in losses.items()],
            x="attribute", y="loss", x_title="attribute", y_title="loss (0 = original, 1 = suppressed)",
            sort=list(losses))))
    return [section("Information loss", *parts, anchor="loss")] if parts else []


def lattice_points(search: Mapping[str, Any]) -> tuple[list[dict[str, Any]], int]:
    """The explored nodes placed by height, each height's nodes side by side."""
    explored = search.get("explored") or {}
    attributes = explored.get("attributes") or []
    best = tuple(search.get("chosen") or ())
    ties = {tuple(a[x] for x in attributes) for a in search.get("alternatives") or []}
    per_height: dict[int, int] = {}
    points = []
    for levels, anonymous, value in explored.get("nodes") or []:
        node = tuple(levels)
        height = sum(node)
        position = per_height.get(height, 0)
        per_height[height] = position + 1
        state = ("optimum" if node == best else "tie" if node in ties else
                 "anonymous" if anonymous else "not anonymous")
        points.append({"height": height, "position": position, "state": state, "value": value,
                       "node": ", ".join(f"{a}={lv}" for a, lv in zip(attributes, node))})
    if best and not any(p["state"] == "optimum" for p in points):
        height = sum(best)
        per_height[height] = per_height.get(height, 0) + 1
        points.append({"height": height, "position": per_height[height] - 1, "state": "optimum",
                       "value": search.get("value"),
                       "node": ", ".join(f"{a}={lv}" for a, lv in zip(attributes, best))})
    heights = explored.get("heights") or []
    if heights and math.prod(h + 1 for h in heights) <= WHOLE_LATTICE:
        # a small lattice is drawn whole, as ARX does: the nodes never checked (pruned or tagged) too
        drawn = {p["node"] for p in points}
        for node in itertools.product(*[range(h + 1) for h in heights]):
            name = ", ".join(f"{a}={lv}" for a, lv in zip(attributes, node))
            if name in drawn:
                continue
            height = sum(node)
            per_height[height] = per_height.get(height, 0) + 1
            points.append({"height": height, "position": per_height[height] - 1, "state": "not checked",
                           "value": None, "node": name})
    return points, sum(heights or [0])


def _lattice(r: Mapping[str, Any]) -> list[str]:
    s = r.get("search")
    if not s:
        return []
    levels = r["transformation"]["levels"]
    chosen = [levels.get(a, 0) for a in (s.get("explored") or {}).get("attributes", [])]
    s = {**s, "chosen": chosen}
    facts = {"strategy": s["strategy"], "metric": s["metric"], "value": s["value"], "seconds": s["seconds"],
             "lattice size": s["lattice_size"], "nodes checked": s["nodes_checked"],
             "nodes tagged (predicted)": s["nodes_tagged"], "nodes pruned": s["nodes_pruned"],
             "tied alternatives": len(s.get("alternatives") or []),
             "proven optimal": bool(s.get("optimal", False))}
    parts = [table(("search", "value"), list(facts.items()))]
    points, top = lattice_points(s)
    if points:
        recorded = len((s.get("explored") or {}).get("nodes") or [])
        if recorded < s["nodes_checked"]:
            parts.append(paragraph(f"The first {recorded:,} of {s['nodes_checked']:,} checked nodes "
                                   "are drawn.",
                                   "note"))
        parts.append(chart("lattice", charts.lattice(points, top)))
    if s.get("alternatives"):
        parts.append(table(("tied alternative",), [(", ".join(f"{a}={lv}" for a, lv in alt.items()),)
                                                   for alt in s["alternatives"]]))
    return [section("Search", *parts, anchor="search")]


def _top_values(counts: Sequence[Sequence[Any]]) -> list[str]:
    return [esc_value(v) for v, _ in list(counts)[:VALUES_SHOWN]]


def esc_value(v: Any) -> str:
    return "NULL" if v is None else charts.short(str(v), 30)


def _sensitive(f: Mapping[str, Any]) -> list[str]:
    out = []
    for attribute, d in (f.get("sensitive") or {}).items():
        overall = d.get("after") or d.get("before") or []
        top = _top_values(overall)
        bars = []
        for phase in PHASES:
            counts = d.get(phase) or []
            total = sum(c for _, c in counts) or 1
            shares: dict[str, float] = {}
            for v, c in counts:
                key = esc_value(v) if esc_value(v) in top else OTHER
                shares[key] = shares.get(key, 0.0) + c / total
            bars += [{"value": k, "share": s, "phase": phase} for k, s in shares.items()]
        order = [*top, OTHER]
        stacked = []
        total = sum(c for _, c in overall) or 1
        for v, c in overall:
            stacked.append({"class": "released table", "value": _bucket(v, top), "share": c / total})
        labels = ["released table"]
        for c in d.get("classes") or []:
            label = f"{charts.short(c['class'], 60)} ({c['size']})"
            labels.append(label)
            stacked += [{"class": label, "value": _bucket(v, top), "share": n / c["size"]}
                        for v, n in c["values"]]
        for point in stacked:
            point["rank"] = order.index(point["value"])
        out.append(section(
            f"Sensitive attribute {attribute}",
            paragraph("Its distribution in the source and in the released table, then within the smallest "
                      "released classes (t-closeness compares each class's distribution with the "
                      "table's)."),
            charts_row(chart(f"sensitive-{attribute}", charts.bars(
                f"{attribute}: distribution", bars, x="value", y="share", x_title=attribute,
                y_title="share of records", percent=True, by_phase=True, sort=order)),
                chart(f"sensitive-classes-{attribute}", charts.shares_by_class(
                    f"{attribute} within classes (class size in brackets)", stacked, labels, order))),
            anchor=f"sensitive-{esc(attribute)}"))
    return out


def _bucket(v: Any, top: Sequence[str]) -> str:
    return esc_value(v) if esc_value(v) in top else OTHER
