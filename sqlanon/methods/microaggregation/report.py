"""The report of a microaggregation: what was done, the groups, information loss and risk."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sqlanon.report.text import plain


@dataclass
class MicroaggregationReport:
    transformation: dict[str, Any]
    rows: int
    k: int
    groups: int | dict[str, int]
    """Number of groups; per attribute for algorithms that group each attribute on its own."""
    min_group_size: int
    max_group_size: int
    metrics: dict[str, float]
    outputs: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    @property
    def anonymous(self) -> bool:
        """Every group holds at least k rows (the achieved k is ``min_group_size``)."""
        return self.min_group_size >= self.k

    def as_dict(self) -> dict[str, Any]:
        return {"rows": self.rows, "anonymous": self.anonymous, "transformation": self.transformation,
                "k": self.k, "achieved_k": self.min_group_size, "groups": self.groups,
                "min_group_size": self.min_group_size, "max_group_size": self.max_group_size,
                "metrics": self.metrics, "outputs": self.outputs, "warnings": self.warnings}


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
