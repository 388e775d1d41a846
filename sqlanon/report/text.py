"""A human-readable report."""

from __future__ import annotations

from typing import Any


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.10g}"
    return str(v)


def plain(value: Any, *, nested: bool = False) -> str:
    """A value of a report as a person reads it, never as a Python repr.

    Lists as ``a, b`` (inside another value as ``[a, b]``), mappings as ``key=value`` (a node:
    ``age=2, zip=1``), a list of mappings separated by ``;``, numbers without trailing noise.

    >>> plain({"age": (0.0, 120.0)}), plain(["a", "b"])
    ('age=[0, 120]', 'a, b')
    """
    if isinstance(value, bool) or value is None:
        return str(value).lower() if value is not None else "none"
    if isinstance(value, float):
        return f"{value:.10g}"
    if isinstance(value, dict):
        text = ", ".join(f"{k}={plain(v, nested=True)}" for k, v in value.items())
        return f"{{{text}}}" if nested else text
    if isinstance(value, (list, tuple, set, frozenset)):
        items = list(value)
        separator = "; " if any(isinstance(v, dict) for v in items) else ", "
        text = separator.join(plain(v, nested=True) if not isinstance(v, dict) else plain(v)
                              for v in items)
        return f"[{text}]" if nested else text
    return str(value)


def format_report(r: dict[str, Any]) -> str:
    if r.get("transformation", {}).get("method") == "noise":
        from sqlanon.methods.perturbation.report import format_text as noise_text

        return noise_text(r)
    if r.get("transformation", {}).get("method") == "microaggregation":
        from sqlanon.methods.microaggregation.report import format_text

        return format_text(r)
    lines = []
    levels = r["transformation"]["levels"]
    lines.append("transformation: " + ", ".join(f"{a}={lv}" for a, lv in levels.items()))
    lines.append(f"rows: {r['rows']}   classes: {r['classes']}   smallest class: {r['min_class_size']}")
    lim = r["transformation"]
    lines.append(f"suppressed rows: {r['suppressed_rows']} (outliers {r['outlier_rows']}, limit "
                 f"{lim['max_suppressed_rows']} = {lim['suppression_limit']:g} of rows)")
    lines.append("anonymous: " + ("yes" if r["anonymous"] else
                                  "NO: more rows would need suppression than the limit allows"))
    if r["privacy"]:
        lines.append("privacy:")
        width = max(len(k) for k in r["privacy"])
        for name, m in r["privacy"].items():
            status = "holds" if m["holds"] else "FAILS"
            ach = "" if m["achieved"] is None else f"  achieved {_fmt(m['achieved'])}"
            lines.append(f"  {name:<{width}}  {status}{ach}  ({m['violating_classes']} classes / "
                         f"{m['violating_rows']} rows violate before suppression)")
    if r["metrics"]:
        lines.append("metrics:")
        width = max(len(k) for k in r["metrics"])
        details = r.get("metric_details") or {}
        for name, v in r["metrics"].items():
            lines.append(f"  {name:<{width}}  {_fmt(v)}{_counted(details.get(name))}")
    found = r.get("search")
    if found:
        lines.append(f"search: {found['strategy']} by {found['metric']} = {_fmt(found['value'])} in "
                     f"{found['seconds']:.3f} s; nodes checked {found['nodes_checked']}, tagged "
                     f"{found['nodes_tagged']}, pruned {found['nodes_pruned']} of {found['lattice_size']}"
                     + (f"; {len(found['alternatives'])} tied alternatives" if found["alternatives"] else "")
                     + ("" if found.get("complete", True) else
                        "; STOPPED by the time limit: the best node found so far, not proven optimal"))
    if r.get("written_spec"):
        lines.append(f"chosen spec written to {r['written_spec']}")
    for key, value in (r.get("outputs") or {}).items():
        lines.append(f"output {key}: {plain(value)}")
    for w in r.get("warnings") or []:
        lines.append(f"warning: {w}")
    return "\n".join(lines) + "\n"


def _counted(detail: dict | None) -> str:
    """What a metric counts, when it is not the default: the research subset, a monotonic variant."""
    if not detail:
        return ""
    notes = []
    if detail.get("population") == "research subset":
        notes.append(f"over the research subset's {detail['rows']} rows")
    if str(detail.get("variant", "")).startswith("monotonic") or detail.get("variant") == "DM*":
        notes.append(str(detail["variant"]))
    return f"  ({'; '.join(notes)})" if notes else ""
