"""The text section of a Mondrian report."""

from __future__ import annotations

from typing import Any

from sqlanon.report.base import SECTIONS
from sqlanon.report.text import closing_lines, metric_lines


@SECTIONS.register("mondrian")
def format_text(r: dict[str, Any]) -> str:
    t = r["transformation"]
    lines = [f"transformation: mondrian ({t['mode']}, width {t['width']}), k = {r['k']}, "
             f"attributes {', '.join(t['attributes'])}",
             f"rows: {r['rows']}   partitions: {r['partitions']}   published classes: {r['classes']}   "
             f"smallest partition: {r['smallest_partition']}",
             f"rounds: {r['rounds']}   queries: {r['queries']}",
             "k-anonymous: " + ("yes" if r["anonymous"] else "NO")]
    lines += metric_lines(r["metrics"])
    lines += closing_lines(r)
    return "\n".join(lines) + "\n"
