"""Reports shown inline in a notebook: every report object's ``_repr_html_`` is the HTML report's
content (its charts when the run computed their figures), drawn by the report layer, which this
layer reaches by name through :data:`RENDERERS`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlanon.registry import Registry

RENDERERS: Registry[Callable[[Any], str]] = Registry("notebook renderer", modules=(
    "sqlanon.report.html.notebook",
))
"""``html``: a report object to an HTML fragment."""


class NotebookReport:
    """Mixed into every report class: Jupyter shows ``_repr_html_`` in place of the repr."""

    def _repr_html_(self) -> str:
        return RENDERERS.get("html")(self)
