"""The HTML report: one self-contained page per run (inline CSS and SVG charts drawn by Vega-Lite
through ``vl-convert-python``; no script, nothing loaded from anywhere), and the same content inline
in a notebook (every report object's ``_repr_html_``).

The charts read ``report.figures``: small aggregates computed on the engine during the run when an
HTML report is asked for (:class:`~sqlanon.report.html.collect.Figures`; ``html=`` on
``sqlanon.check``, ``apply`` and ``anonymize``, ``--html`` on the command line). Without them the
report shows what the JSON report holds (levels, privacy models, metrics, the search's lattice).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from sqlanon.report.base import Report, format_report, method_of
from sqlanon.report.html import common, generalization, numeric
from sqlanon.report.html.page import cards, document, fragment, pairs, section

__all__ = ["document_of", "fragment_of", "write"]


def _figures(report: Report, population: Mapping[str, Any] | None) -> dict[str, Any]:
    figures = dict(getattr(report, "figures", None) or {})
    if population is not None:
        figures["population"] = dict(population)
    return figures


def _parts(report: Report, population: Mapping[str, Any] | None) -> tuple[str, str, list[str]]:
    r = report.as_dict()
    f = _figures(report, population)
    # a report of a verb names its method; others (a DP microdata release) are shown as they are
    method = method_of(r) if "transformation" in r else str(r.get("method", ""))
    if method == "generalization":
        body = generalization.sections(r, f)
    elif method in ("microaggregation", "noise"):
        body = numeric.sections(r, f)
    else:
        scalars = {k: v for k, v in r.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}
        body = [section("Summary", cards(scalars), anchor="summary")]
        if isinstance(r.get("transformation"), Mapping):
            body.append(section("Transformation", pairs(r["transformation"]), anchor="transformation"))
        metrics = {k: v for k, v in (r.get("metrics") or {}).items() if not isinstance(v, Mapping)}
        if metrics:
            body.append(section("Metrics", pairs(metrics), anchor="metrics"))
    body += common.population(f.get("population"))
    text = format_report(r) if "transformation" in r else json.dumps(r, indent=2, default=str)
    body += common.closing(r, text)
    subtitle = f"method {method}, {r.get('rows', 0):,} rows"
    return "sqlanon report", subtitle, body


def fragment_of(report: Report, *, population: Mapping[str, Any] | None = None) -> str:
    """The report as an HTML ``<div>`` (a notebook's ``_repr_html_``)."""
    return fragment(*_parts(report, population))


def document_of(report: Report, *, population: Mapping[str, Any] | None = None) -> str:
    """The report as one self-contained HTML document."""
    return document(*_parts(report, population))


def write(report: Report, path: str | os.PathLike[str], *,
          population: Mapping[str, Any] | None = None) -> Path:
    """Write the report's HTML page to ``path``; ``population``: a risk analysis's ``as_dict()`` with
    population-uniqueness estimates (:func:`sqlanon.report.html.common.population` lists its keys)."""
    target = Path(path)
    text = document_of(report, population=population)
    target.write_text(text, encoding="utf-8")
    return target
