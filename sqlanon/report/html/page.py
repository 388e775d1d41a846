"""The page around the sections: one self-contained HTML document (inline CSS, inline SVG charts, no
script, no external reference), or a fragment of it for a notebook cell."""

from __future__ import annotations

import html
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from sqlanon.report.html import charts

CSS = """
.sqlanon-report{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;color:#1d2733;max-width:1100px;
 margin:0 auto;line-height:1.4;font-size:14px}
.sqlanon-report h1{font-size:22px;margin:12px 0 4px}
.sqlanon-report h2{font-size:17px;margin:22px 0 8px;border-bottom:1px solid #d8dee4;padding-bottom:4px}
.sqlanon-report h3{font-size:14px;margin:14px 0 6px}
.sqlanon-report .sub{color:#57606a;margin:0 0 10px}
.sqlanon-report .cards{display:flex;flex-wrap:wrap;gap:10px}
.sqlanon-report .card{border:1px solid #d8dee4;border-radius:6px;padding:8px 12px;min-width:110px}
.sqlanon-report .card b{display:block;font-size:18px}
.sqlanon-report .card span{color:#57606a;font-size:12px}
.sqlanon-report .ok{color:#1a7f37}.sqlanon-report .bad{color:#cf222e}
.sqlanon-report table{border-collapse:collapse;margin:6px 0 10px}
.sqlanon-report th,.sqlanon-report td{border:1px solid #d8dee4;padding:3px 8px;text-align:left;
 vertical-align:top}
.sqlanon-report th{background:#f6f8fa}
.sqlanon-report td.num{text-align:right;font-variant-numeric:tabular-nums}
.sqlanon-report .charts{display:flex;flex-wrap:wrap;gap:18px;align-items:flex-start}
.sqlanon-report figure.chart{margin:4px 0}
.sqlanon-report figure.chart svg{max-width:100%;height:auto}
.sqlanon-report pre{background:#f6f8fa;padding:8px;overflow-x:auto;font-size:12px}
.sqlanon-report .note{color:#57606a;font-size:12px}
"""


def esc(value: Any) -> str:
    return html.escape("NULL" if value is None else str(value))


def number(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:.6g}"
    return esc(value)


def section(title: str, *parts: str, anchor: str = "") -> str:
    ident = f' id="{esc(anchor)}"' if anchor else ""
    return f"<section{ident}><h2>{esc(title)}</h2>{''.join(parts)}</section>"


def paragraph(text: str, cls: str = "") -> str:
    return f'<p class="{cls}">{esc(text)}</p>' if cls else f"<p>{esc(text)}</p>"


def table(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    head = "".join(f"<th>{esc(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(
        f'<td class="num">{number(v)}</td>' if isinstance(v, (int, float)) and not isinstance(v, bool)
        else f"<td>{number(v)}</td>" for v in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def pairs(values: Mapping[str, Any]) -> str:
    """A two-column table of names and values."""
    return table(("", "value"), [(k, v if isinstance(v, (int, float, str, bool)) or v is None
                                  else _plain(v)) for k, v in values.items()])


def _plain(value: Any) -> str:
    from sqlanon.report.text import plain

    return plain(value)


def cards(values: Mapping[str, Any], bad: Iterable[str] = ()) -> str:
    bad = set(bad)
    return '<div class="cards">' + "".join(
        f'<div class="card"><b class="{"bad" if k in bad else ""}">{number(v)}</b><span>{esc(k)}</span></div>'
        for k, v in values.items()) + "</div>"


def chart(name: str, spec: Mapping[str, Any]) -> str:
    """A chart drawn to inline SVG, tagged with its name (the browser test finds each by it)."""
    return f'<figure class="chart" data-chart="{esc(name)}">{charts.svg(spec)}</figure>'


def charts_row(*parts: str) -> str:
    return '<div class="charts">' + "".join(parts) + "</div>"


def fragment(title: str, subtitle: str, body: Sequence[str]) -> str:
    """The report as one ``<div>`` with its own style (what a notebook cell shows)."""
    return (f'<div class="sqlanon-report"><style>{CSS}</style><h1>{esc(title)}</h1>'
            f'<p class="sub">{esc(subtitle)}</p>{"".join(body)}</div>')


def document(title: str, subtitle: str, body: Sequence[str]) -> str:
    """The report as a whole HTML document: nothing is loaded from anywhere."""
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
            "style-src 'unsafe-inline'; img-src data:\">"
            f"<title>{esc(title)}</title></head><body>{fragment(title, subtitle, body)}</body></html>\n")
