"""The text section of a noise transformation's report."""

from __future__ import annotations

from typing import Any

from sqlanon.report.base import SECTIONS
from sqlanon.report.text import plain


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.6g}"
    return plain(v)


@SECTIONS.register("noise")
def format_text(r: dict[str, Any]) -> str:
    t = r["transformation"]
    lines = [f"noise: {t['mechanism']} on {', '.join(t['attributes']) or 'whole rows'}",
             f"rows: {r['rows']}",
             "parameters: " + _fmt({k: v for k, v in t["parameters"].items() if k != "matrix"})]
    if t["parameters"].get("seeded"):
        lines.append("seeded: reproducible, NOT private against anyone who knows the seed")
    if r["guarantee"]:
        lines.append("guarantee: " + _fmt(r["guarantee"]))
    if r["metrics"]:
        lines.append("metrics:")
        for name, value in r["metrics"].items():
            if value == {}:  # a comparison of pairs of attributes, with one attribute
                continue
            lines.append(f"  {name}: {_fmt(value)}")
    for key, value in (r.get("outputs") or {}).items():
        lines.append(f"output {key}: {plain(value)}")
    for w in r.get("warnings") or []:
        lines.append(f"warning: {w}")
    return "\n".join(lines) + "\n"
