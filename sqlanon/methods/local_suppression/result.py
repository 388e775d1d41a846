"""The report of a local suppression (its text section: :mod:`sqlanon.report.local_suppression`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sqlanon.methods.notebook import NotebookReport


@dataclass
class LocalSuppressionReport(NotebookReport):
    transformation: dict[str, Any]
    rows: int
    k: int
    combinations: int
    """Distinct combinations of the (generalized) quasi-identifiers before suppression."""
    cells: dict[str, int]
    """Cells suppressed per quasi-identifier (NULLs of the source not counted)."""
    rows_touched: int
    achieved_k: float
    """The smallest frequency of a released row under the wildcard semantics."""
    cost: float
    """Suppressed cells weighted by importance (the solvers' objective)."""
    optimal: bool | None = None
    """For solver exact: whether HiGHS proved the optimum (else the time limit stopped it)."""
    outputs: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    @property
    def anonymous(self) -> bool:
        return self.achieved_k >= self.k - 1e-9

    def as_dict(self) -> dict[str, Any]:
        return {"rows": self.rows, "anonymous": self.anonymous, "transformation": self.transformation,
                "k": self.k, "achieved_k": self.achieved_k, "combinations": self.combinations,
                "cells_suppressed": sum(self.cells.values()), "cells_per_attribute": self.cells,
                "rows_touched": self.rows_touched, "cost": self.cost,
                **({"optimal": self.optimal} if self.optimal is not None else {}),
                "outputs": self.outputs, "warnings": self.warnings}
