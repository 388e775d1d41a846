"""The result of a microaggregation: what was done, the groups, information loss and risk (its text
section: :mod:`sqlanon.report.microaggregation`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sqlanon.methods.notebook import NotebookReport


@dataclass
class MicroaggregationReport(NotebookReport):
    """The report of ``method: microaggregation`` (a :class:`~sqlanon.report.base.Report`)."""

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
    privacy_unit: dict[str, Any] | None = None
    """With a privacy unit: the column, and the persons (what ``rows`` and the groups count) and rows."""

    @property
    def anonymous(self) -> bool:
        """Every group holds at least k rows (the achieved k is ``min_group_size``)."""
        return self.min_group_size >= self.k

    def as_dict(self) -> dict[str, Any]:
        return {"rows": self.rows, "anonymous": self.anonymous, "transformation": self.transformation,
                "k": self.k, "achieved_k": self.min_group_size, "groups": self.groups,
                "min_group_size": self.min_group_size, "max_group_size": self.max_group_size,
                "metrics": self.metrics, "outputs": self.outputs, "warnings": self.warnings,
                **({"privacy_unit": self.privacy_unit} if self.privacy_unit is not None else {})}
