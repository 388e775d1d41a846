"""The text section of a generalization's report (``check``, ``apply``, ``anonymize``)."""

from __future__ import annotations

from typing import Any

from sqlanon.report.base import SECTIONS
from sqlanon.report.text import plain


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.10g}"
    return str(v)


@SECTIONS.register("generalization")
def format_text(r: dict[str, Any]) -> str:
    lines = []
    levels = r["transformation"]["levels"]
    lines.append("transformation: " + ", ".join(f"{a}={lv}" for a, lv in levels.items()))
    lines.append(f"rows: {r['rows']}   classes: {r['classes']}   smallest class: {r['min_class_size']}")
    lim = r["transformation"]
    lines.append(f"suppressed rows: {r['suppressed_rows']} (outliers {r['outlier_rows']}, limit "
                 f"{lim['max_suppressed_rows']} = {lim['suppression_limit']:g} of rows)")
    if unit := r.get("privacy_unit"):
        lines.append(f"privacy unit {unit['column']}: rows above count persons: {unit['persons']} persons "
                     f"in {unit['rows']} rows; suppressed {unit['suppressed_persons']} persons "
                     f"({unit['suppressed_rows']} rows)")
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
    local = r.get("local_recoding")
    if local:
        lines.extend(_local(local))
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


def _local(local: dict[str, Any]) -> list[str]:
    """The local recoding's steps and what its output releases (the lines above describe step 0)."""
    lines = [f"local recoding ({local['variant']}): {len(local['steps'])} steps, stopped: {local['stopped']}"]
    for step in local["steps"]:
        levels = ", ".join(f"{a}={lv}" for a, lv in step["levels"].items())
        gs = f", gs-factor {step['gs_factor']:g}" if "gs_factor" in step else ""
        lines.append(f"  step {step['step']}: {levels}: released {step['released_rows']} of "
                     f"{step['records']} records (limit {step['suppression_limit']:.6g}{gs})")
    out = local["output"]
    lines.append(f"  output: rows {out['rows']}, suppressed {out['suppressed_rows']}, classes "
                 f"{out['classes']}, smallest class {out['min_class_size']}; "
                 + ", ".join(f"{k} {_fmt(v)}" for k, v in out["metrics"].items()))
    return lines
