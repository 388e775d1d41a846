"""Sections every report has: population uniqueness (when given), the output and warnings, and the
whole text report."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlanon.report.html import charts
from sqlanon.report.html.page import chart, charts_row, esc, pairs, paragraph, section, table

PHASES = ("before", "after")


def population(data: Mapping[str, Any] | None) -> list[str]:
    """Population-uniqueness estimates, from a risk analysis's ``as_dict()``.

    The keys read (others are ignored):

    * ``model``: the population model, as names and values (``population_size``, ``sampling_fraction``);
    * ``before`` and ``after``: per estimator (``zayatz``, ``pitman``, ``snb``, ``dankar``, ...) either
      the fraction of population uniques, or a mapping with ``fraction`` and optionally ``uniques``
      (the estimated number of population uniques), ``converged`` and ``estimator`` (the one Dankar's
      rule chose); or a whole risk analysis's ``as_dict()``, whose ``population`` holds the
      estimators (and ``population``, ``sampling_fraction``, ``dankar_model``).
    """
    if not data:
        return []
    parts = []
    model = dict(data.get("model") or {})
    phases = {}
    for phase in PHASES:
        phases[phase], found = _estimates(data.get(phase))
        model = model or found
    if model:
        parts.append(pairs(model))
    rows, points = [], []
    for phase in PHASES:
        for name, value in phases[phase].items():
            entry = value if isinstance(value, Mapping) else {"fraction": value}
            fraction = entry.get("fraction")
            rows.append((phase, name, fraction, entry.get("uniques"),
                         entry.get("estimator", ""), entry.get("converged", "")))
            if isinstance(fraction, (int, float)):
                points.append({"estimator": name, "fraction": float(fraction), "phase": phase})
    parts.append(table(("", "estimator", "population uniques (fraction)", "population uniques",
                        "chosen", "converged"), rows))
    if points:
        parts.append(chart("population-uniqueness", charts.bars(
            "Estimated population uniques", points, x="estimator", y="fraction", x_title="estimator",
            y_title="fraction of records", percent=True, by_phase=True)))
    return [section("Population uniqueness", *parts, anchor="population")]


def _estimates(value: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """The estimators of one phase, and the population model a risk analysis names."""
    if not isinstance(value, Mapping):
        return {}, {}
    population = value.get("population")
    if not isinstance(population, Mapping):
        return dict(value), {}
    estimates = {name: dict(population[name]) for name in ("zayatz", "pitman", "snb", "dankar")
                 if isinstance(population.get(name), Mapping)}
    if "dankar" in estimates and population.get("dankar_model"):
        estimates["dankar"]["estimator"] = population["dankar_model"]
    model = {"population_size": population.get("population"),
             "sampling_fraction": population.get("sampling_fraction")}
    return estimates, {k: v for k, v in model.items() if v is not None}


def closing(r: Mapping[str, Any], text: str) -> list[str]:
    """What was written, the warnings, and the text report."""
    parts = []
    outputs = r.get("outputs") or {}
    if outputs:
        parts.append(pairs({k: v for k, v in outputs.items() if k != "sql"}))
    warnings = list(r.get("warnings") or []) + list(outputs.get("warnings") or [])
    if warnings:
        parts.append("<ul>" + "".join(f"<li>{esc(w)}</li>" for w in warnings) + "</ul>")
    if not parts:
        parts.append(paragraph("Nothing was written (check, dry run).", "note"))
    parts.append(f"<details><summary>The text report</summary><pre>{esc(text)}</pre></details>")
    return [section("Output", *parts, anchor="output")]


def grid(*charts_: str) -> str:
    return charts_row(*charts_)
