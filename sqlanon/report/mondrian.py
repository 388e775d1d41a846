"""The text section of a Mondrian report."""

from __future__ import annotations

from typing import Any

from sqlanon.report.base import SECTIONS
from sqlanon.report.text import plain


@SECTIONS.register("mondrian")
def format_text(r: dict[str, Any]) -> str:
    t = r["transformation"]
    lines = [f"transformation: mondrian ({t['mode']}, width {t['width']}), k = {r['k']}, "
             f"attributes {', '.join(t['attributes'])}",
             f"rows: {r['rows']}   partitions: {r['partitions']}   published classes: {r['classes']}   "
             f"smallest partition: {r['smallest_partition']}",
             f"rounds: {r['rounds']}   queries: {r['queries']}",
             "k-anonymous: " + ("yes" if r["anonymous"] else "NO")]
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
