"""The text section of a local suppression's report."""

from __future__ import annotations

from typing import Any

from sqlanon.report.base import SECTIONS
from sqlanon.report.text import closing_lines, plain


@SECTIONS.register("local_suppression")
def format_text(r: dict[str, Any]) -> str:
    t = r["transformation"]
    solver = t["solver"] if t["solver"] == "exact" else f"heuristic {t['heuristic']}"
    lines = [f"transformation: local suppression by {solver}, k = {r['k']}"
             + (f", after generalization to {plain(t['levels'])}" if t.get("levels") else ""),
             f"rows: {r['rows']}   combinations: {r['combinations']}   rows touched: {r['rows_touched']}",
             f"cells suppressed: {r['cells_suppressed']} ("
             + ", ".join(f"{a} {n}" for a, n in r["cells_per_attribute"].items()) + ")"
             + (f"   weighted: {r['cost']:g}" if t.get("importance") else "")
             + ("" if "optimal" not in r else ("   optimal" if r["optimal"] else "   not proved optimal")),
             "k-anonymous (a suppressed cell matches any value): " + ("yes" if r["anonymous"] else
                                                                    f"NO (achieved k = {r['achieved_k']})")]
    lines += closing_lines(r)
    return "\n".join(lines) + "\n"
