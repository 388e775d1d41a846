"""The one report type every verb returns, and its text form made of per-method sections.

Every method's result is a :class:`Report`: what was written (``outputs``), warnings, and its JSON
form (:meth:`Report.as_dict`), whose
``transformation`` section names the method (generalization's, the default, names its levels
instead). The text report of a JSON report is its method's section (:data:`SECTIONS`): one module
per method in :mod:`sqlanon.report`, registered under the method's name.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

from sqlanon.registry import Registry

DEFAULT_METHOD = "generalization"
"""The method of a report whose ``transformation`` section names none (generalization's)."""

SECTIONS: Registry[Callable[[dict[str, Any]], str]] = Registry("report section", modules=(
    "sqlanon.report.generalization",
    "sqlanon.report.microaggregation",
    "sqlanon.report.local_suppression",
    "sqlanon.report.mondrian",
    "sqlanon.report.noise",
    "sqlanon.report.anatomy",
    "sqlanon.report.republication",
))
"""Per method: the text of its report's section, from the JSON report."""


@runtime_checkable
class Report(Protocol):
    """What a verb returns, whatever the method."""

    outputs: dict[str, Any]
    warnings: list[str]

    def as_dict(self) -> dict[str, Any]: ...


def method_of(report: dict[str, Any]) -> str:
    """The method whose section renders a JSON report."""
    return str((report.get("transformation") or {}).get("method", DEFAULT_METHOD))


def format_report(report: dict[str, Any]) -> str:
    """The text report of a JSON report (:meth:`Report.as_dict`)."""
    return SECTIONS.get(method_of(report))(report)


def text(report: Report) -> str:
    """The text report of a report."""
    return format_report(report.as_dict())
