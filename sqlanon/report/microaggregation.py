"""The text section of a microaggregation's report."""

from __future__ import annotations

from typing import Any

from sqlanon.report.base import SECTIONS
from sqlanon.report.text import closing_lines, metric_lines


@SECTIONS.register("microaggregation")
def format_text(r: dict[str, Any]) -> str:
    t = r["transformation"]
    lines = [f"transformation: microaggregation by {t['algorithm']}, k = {r['k']}, "
             f"{t['statistic']} of {', '.join(t['attributes'])}",
             f"rows: {r['rows']}   groups: {r['groups']}   group sizes: {r['min_group_size']}.."
             f"{r['max_group_size']}",
             "k-anonymous on the microaggregated attributes: " + ("yes" if r["anonymous"] else
                                                                   f"NO (achieved k = {r['achieved_k']})")]
    if unit := r.get("privacy_unit"):
        lines.append(f"privacy unit {unit['column']}: rows and groups above count persons: "
                     f"{unit['persons']} persons in {unit['rows']} rows")
    lines += metric_lines(r["metrics"])
    lines += closing_lines(r)
    return "\n".join(lines) + "\n"
