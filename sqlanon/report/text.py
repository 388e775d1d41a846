"""A human-readable report: values as a person reads them, and the report's text by method."""

from __future__ import annotations

from typing import Any


def plain(value: Any, *, nested: bool = False) -> str:
    """A value of a report as a person reads it, never as a Python repr.

    Lists as ``a, b`` (inside another value as ``[a, b]``), mappings as ``key=value`` (a node:
    ``age=2, zip=1``), a list of mappings separated by ``;``, numbers without trailing noise.

    >>> plain({"age": (0.0, 120.0)}), plain(["a", "b"])
    ('age=[0, 120]', 'a, b')
    """
    if isinstance(value, bool) or value is None:
        return str(value).lower() if value is not None else "none"
    if isinstance(value, float):
        return f"{value:.10g}"
    if isinstance(value, dict):
        text = ", ".join(f"{k}={plain(v, nested=True)}" for k, v in value.items())
        return f"{{{text}}}" if nested else text
    if isinstance(value, (list, tuple, set, frozenset)):
        items = list(value)
        separator = "; " if any(isinstance(v, dict) for v in items) else ", "
        text = separator.join(plain(v, nested=True) if not isinstance(v, dict) else plain(v)
                              for v in items)
        return f"[{text}]" if nested else text
    return str(value)


def metric_lines(metrics: dict[str, Any]) -> list[str]:
    """``metrics:`` and one aligned line per metric (none without metrics); figures per attribute
    as ``name=value`` pairs."""
    if not metrics:
        return []
    width = max(len(k) for k in metrics)
    return ["metrics:", *(f"  {name:<{width}}  {plain(v) if isinstance(v, dict) else format(v, '.10g')}"
                          for name, v in metrics.items())]


def output_lines(label: str, output: dict[str, Any]) -> list[str]:
    """``<label>: key=value, ...`` of what was written, then its SQL text when it was printed."""
    if not output:
        return []
    lines = [f"{label}: " + ", ".join(f"{k}={plain(v, nested=True)}" for k, v in output.items()
                                      if k not in ("sql", "warnings"))]
    if "sql" in output:
        lines.append(output["sql"].rstrip())
    return lines


def closing_lines(r: dict[str, Any], output: dict[str, Any] | None = None) -> list[str]:
    """The output (``r["outputs"]``, or ``output``) and every warning of the report and of the output."""
    output = r["outputs"] if output is None else output
    return [*output_lines("output", output),
            *(f"warning: {w}" for w in [*r["warnings"], *output.get("warnings", [])])]


def format_report(r: dict[str, Any]) -> str:
    """The text report of a JSON report: its method's section (:data:`~sqlanon.report.base.SECTIONS`)."""
    from sqlanon.report.base import format_report as by_method

    return by_method(r)
