"""The result of a noise transformation."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sqlanon.methods.notebook import NotebookReport


@dataclass
class NoiseReport(NotebookReport):
    """What a noise transformation did: parameters, guarantee, utility and risk, the output (a
    :class:`~sqlanon.report.base.Report`; its text section: :mod:`sqlanon.report.noise`)."""

    mechanism: str
    attributes: tuple[str, ...]
    rows: int
    parameters: dict[str, Any]
    guarantee: dict[str, Any] = field(default_factory=dict)
    metrics: dict[str, Any] = field(default_factory=dict)
    outputs: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {"transformation": {"method": "noise", "mechanism": self.mechanism,
                                   "attributes": list(self.attributes), "parameters": self.parameters},
                "rows": self.rows, "guarantee": self.guarantee, "metrics": self.metrics,
                "outputs": self.outputs, "warnings": self.warnings}
