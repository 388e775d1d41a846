"""The text section of a microaggregation's report."""

from __future__ import annotations

from typing import Any

from sqlanon.report.base import SECTIONS
from sqlanon.report.text import plain


@SECTIONS.register("microaggregation")
def format_text(r: dict[str, Any]) -> str:
    t = r["transformation"]
    lines = [f"transformation: microaggregation by {t['algorithm']}, k = {r['k']}, "
             f"{t['statistic']} of {', '.join(t['attributes'])}",
             f"rows: {r['rows']}   groups: {r['groups']}   group sizes: {r['min_group_size']}.."
             f"{r['max_group_size']}",
             "k-anonymous on the microaggregated attributes: " + ("yes" if r["anonymous"] else
                                                                   f"NO (achieved k = {r['achieved_k']})")]
    if r["metrics"]:
        lines.append("metrics:")
        width = max(len(k) for k in r["metrics"])
        lines += [f"  {name:<{width}}  {v:.10g}" for name, v in r["metrics"].items()]
    if r["outputs"]:
        lines.append("output: " + ", ".join(f"{k}={plain(v, nested=True)}" for k, v in r["outputs"].items()
                                             if k not in ("sql", "warnings")))
        if "sql" in r["outputs"]:
            lines.append(r["outputs"]["sql"].rstrip())
    for w in [*r["warnings"], *r["outputs"].get("warnings", [])]:
        lines.append(f"warning: {w}")
    return "\n".join(lines) + "\n"
