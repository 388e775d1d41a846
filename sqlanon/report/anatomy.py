"""The text section of an Anatomy report."""

from __future__ import annotations

from typing import Any

from sqlanon.report.base import SECTIONS
from sqlanon.report.text import output_lines


@SECTIONS.register("anatomy")
def format_text(r: dict[str, Any]) -> str:
    t = r["transformation"]
    lines = [f"transformation: anatomy, l = {r['l']}, sensitive attribute {t['sensitive']!r} published "
             f"apart by {t['group_column']!r}",
             f"rows: {r['rows']}   groups: {r['groups']}   group sizes: {r['min_group_size']}.."
             f"{r['max_group_size']}   sensitive values: {r['sensitive_values']}   residual rows: "
             f"{r['residual_rows']}",
             f"every group holds {r['l']} or more distinct sensitive values, each once: "
             + ("yes" if r["anonymous"] else "NO")]
    outputs = dict(r["outputs"])
    st = outputs.pop("sensitive_table", None)
    lines += output_lines("output", outputs) + output_lines("sensitive table", st or {})
    lines += [f"warning: {w}" for w in [*r["warnings"], *outputs.get("warnings", [])]]
    return "\n".join(lines) + "\n"
