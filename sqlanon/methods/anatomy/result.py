"""The result of an Anatomy run (its text section: :mod:`sqlanon.report.anatomy`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sqlanon.methods.notebook import NotebookReport


@dataclass
class AnatomyReport(NotebookReport):
    """The report of ``method: anatomy`` (a :class:`~sqlanon.report.base.Report`)."""

    transformation: dict[str, Any]
    rows: int
    l: int  # noqa: E741 -- the paper's l
    groups: int
    min_group_size: int
    max_group_size: int
    sensitive_values: int
    residual_rows: int
    """Rows added to a group after the l-row groups were formed (each to a group without its value)."""
    outputs: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    @property
    def anonymous(self) -> bool:
        """Every group holds at least l rows, each with a value no other row of the group has."""
        return self.min_group_size >= self.l

    def as_dict(self) -> dict[str, Any]:
        return {"rows": self.rows, "anonymous": self.anonymous, "transformation": self.transformation,
                "l": self.l, "groups": self.groups, "min_group_size": self.min_group_size,
                "max_group_size": self.max_group_size, "sensitive_values": self.sensitive_values,
                "residual_rows": self.residual_rows, "outputs": self.outputs, "warnings": self.warnings}
