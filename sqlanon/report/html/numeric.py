"""The HTML sections of a perturbative release (microaggregation, noise): what was done, the
information loss per attribute, distributions and correlations before and after, and the DP
budget ledger."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlanon.report.html import charts
from sqlanon.report.html.common import PHASES
from sqlanon.report.html.page import cards, chart, charts_row, pairs, paragraph, section, table


def sections(r: Mapping[str, Any], f: Mapping[str, Any]) -> list[str]:
    return [*_summary(r), *_metrics(r), *_distributions(f), *_correlations(f), *_guarantee(r, f)]


def _summary(r: Mapping[str, Any]) -> list[str]:
    t = dict(r.get("transformation") or {})
    values: dict[str, Any] = {"rows": r.get("rows")}
    for key in ("k", "achieved_k", "groups", "min_group_size", "max_group_size"):
        if isinstance(r.get(key), (int, float)):
            values[key.replace("_", " ")] = r[key]
    if "anonymous" in r:
        values["k-anonymous"] = bool(r["anonymous"])
    details = {k: v for k, v in t.items() if k != "parameters"}
    details.update({f"parameter {k}": v for k, v in (t.get("parameters") or {}).items() if k != "matrix"})
    return [section("Summary", cards(values, bad=() if r.get("anonymous", True) else ("k-anonymous",)),
                    anchor="summary"),
            section("Transformation", pairs(details), anchor="transformation")]


def _metrics(r: Mapping[str, Any]) -> list[str]:
    metrics = r.get("metrics") or {}
    scalars = {k: v for k, v in metrics.items() if not isinstance(v, Mapping)}
    parts = [table(("metric", "value"), list(scalars.items()))] if scalars else []
    for name, value in metrics.items():
        if not isinstance(value, Mapping) or not value:
            continue
        rows = [(k, *(v.values() if isinstance(v, Mapping) else (v,))) for k, v in value.items()]
        first = next(iter(value.values()))
        header = ("", *(first.keys() if isinstance(first, Mapping) else (name,)))
        parts += [f"<h3>{name}</h3>", table(header, [(str(row[0]), *row[1:]) for row in rows])]
        if name == "per_attribute":
            points = [{"attribute": str(k), "value": float(v["il1s"])} for k, v in value.items()]
            parts.append(chart("il1s-per-attribute", charts.bars(
                "IL1s per attribute", points, x="attribute", y="value", x_title="attribute",
                y_title="IL1s (mean scaled absolute error)")))
    return [section("Information loss and risk", *parts, anchor="metrics")] if parts else []


def _distributions(f: Mapping[str, Any]) -> list[str]:
    before, after = f.get("numeric_before") or {}, f.get("numeric_after") or {}
    if not before:
        return []
    parts = []
    if not after:
        parts.append(paragraph("The release was not written here (check, dry run, printed SQL): the "
                               "distributions after it are not shown.", "note"))
    figures = []
    for a, bins in (before.get("histograms") or {}).items():
        points = [{**b, "phase": "before"} for b in bins]
        points += [{**b, "phase": "after"} for b in (after.get("histograms") or {}).get(a, [])]
        figures.append(chart(f"histogram-{a}", charts.histogram(a, points)))
    for a in before.get("categories") or {}:
        points = [{"value": str(v), "count": c, "phase": phase}
                  for phase, d in (("before", before), ("after", after))
                  for v, c in (d.get("categories") or {}).get(a, [])]
        figures.append(chart(f"categories-{a}", charts.bars(
            a, points, x="value", y="count", x_title=a, y_title="records", by_phase=True)))
    parts.append(charts_row(*figures))
    return [section("Distributions before and after", *parts, anchor="distributions")]


def _correlations(f: Mapping[str, Any]) -> list[str]:
    points = [{**c, "phase": phase} for phase in PHASES
              for c in (f.get(f"numeric_{phase}") or {}).get("correlations") or [] if c["r"] is not None]
    if not points:
        return []
    attributes = list(dict.fromkeys(p["a"] for p in points))
    return [section("Correlations before and after", chart("correlations", charts.correlations(
        "Pearson correlation", points, attributes)), anchor="correlations")]


def _guarantee(r: Mapping[str, Any], f: Mapping[str, Any]) -> list[str]:
    guarantee = {k: v for k, v in (r.get("guarantee") or {}).items() if k != "ledger"}
    ledger = f.get("ledger")
    parts = []
    if guarantee:
        parts.append(pairs(guarantee))
    if (r.get("guarantee") or {}).get("ledger"):
        parts.append(pairs({f"ledger {k}": v for k, v in r["guarantee"]["ledger"].items()}))
    if ledger and ledger.get("entries"):
        parts.append(chart("ledger", charts.ledger(ledger["entries"])))
        parts.append(table(("spend", "ε charged", "ε spent so far", "description", "at"),
                           [(e["step"], e["epsilon"], e["cumulative"], e["description"], e["spent_at"])
                            for e in ledger["entries"]]))
    return [section("Privacy guarantee", *parts, anchor="guarantee")] if parts else []
