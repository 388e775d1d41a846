"""The result of a Mondrian partitioning (its text section: :mod:`sqlanon.report.mondrian`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sqlanon.methods.notebook import NotebookReport


@dataclass
class MondrianReport(NotebookReport):
    """The report of ``method: mondrian`` (a :class:`~sqlanon.report.base.Report`)."""

    transformation: dict[str, Any]
    rows: int
    k: int
    partitions: int
    classes: int
    """Distinct published boxes (relaxed partitions can share one)."""
    smallest: int
    rounds: int
    queries: int
    metrics: dict[str, float]
    outputs: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    @property
    def anonymous(self) -> bool:
        return self.smallest >= self.k

    def as_dict(self) -> dict[str, Any]:
        return {"rows": self.rows, "anonymous": self.anonymous, "transformation": self.transformation,
                "k": self.k, "partitions": self.partitions, "classes": self.classes,
                "smallest_partition": self.smallest, "rounds": self.rounds, "queries": self.queries,
                "metrics": self.metrics, "outputs": self.outputs, "warnings": self.warnings}
