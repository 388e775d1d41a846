"""Reports: the one :class:`~sqlanon.report.base.Report` type every verb returns, and its text form,
one section per transformation method."""

from __future__ import annotations

from sqlanon.report.base import SECTIONS, Report, format_report, text

__all__ = ["SECTIONS", "Report", "format_report", "text"]
