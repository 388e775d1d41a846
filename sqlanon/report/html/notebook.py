"""The HTML report as a notebook cell shows a report object
(:class:`~sqlanon.methods.notebook.NotebookReport`)."""

from __future__ import annotations

from sqlanon.methods.notebook import RENDERERS
from sqlanon.report.html import fragment_of

RENDERERS.add("html", fragment_of)
