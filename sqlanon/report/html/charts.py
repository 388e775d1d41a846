"""Charts as inline SVG: Vega-Lite specifications rendered by ``vl-convert-python`` (no browser, no
network: the SVG is self-contained and is pasted into the page as it is).

Each builder returns a Vega-Lite specification over a small list of records (aggregates computed on
the engine); :func:`svg` renders one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sqlanon.errors import UnsupportedError
from sqlanon.report.html import renderer

SCHEMA = "https://vega.github.io/schema/vega-lite/v5.json"
EXTRA = "report"
"""The optional dependency group that installs the charts' renderer."""
COLORS = {"before": "#9aa5b1", "after": "#1f6fb2"}
WIDTH = 360
HEIGHT = 200


def _vlc() -> Any:
    try:
        import vl_convert
    except ImportError:
        raise UnsupportedError(f"the HTML report draws its charts with vl-convert-python: install it with "
                               f"`pip install 'sqlanon[{EXTRA}]'`") from None
    return vl_convert


def short(label: str, limit: int = 48) -> str:
    """A label cut to ``limit`` characters (with an ellipsis)."""
    return label if len(label) <= limit else label[:limit - 1] + "…"


def require_renderer() -> None:
    """Refuse, before any work, when the charts cannot be drawn."""
    _vlc()


def start_renderer() -> None:
    """Refuse when the charts cannot be drawn; else start their renderer's process, which gets
    ready while the run works (:mod:`sqlanon.report.html.renderer`)."""
    require_renderer()
    renderer.start()


def svg(spec: Mapping[str, Any]) -> str:
    """The chart as one ``<svg>`` element (fonts as text, no external reference)."""
    drawn = renderer.draw(spec)
    text = drawn if drawn is not None else str(_vlc().vegalite_to_svg(dict(spec)))
    start = text.find("<svg")
    return text[start:] if start >= 0 else text


def _base(title: str, values: Sequence[Mapping[str, Any]], *, width: int = WIDTH,
          height: int = HEIGHT) -> dict[str, Any]:
    return {"$schema": SCHEMA, "title": {"text": title, "anchor": "start", "fontSize": 13},
            "width": width, "height": height, "data": {"values": [dict(v) for v in values]},
            # labelLimit 0: labels are not measured for truncation (costly in the renderer); long
            # labels are shortened before they get here (:func:`short`)
            "config": {"font": "sans-serif", "view": {"stroke": None},
                       "axis": {"labelFontSize": 10, "titleFontSize": 11, "labelLimit": 0},
                       "legend": {"labelLimit": 0}}}


def _phase_color() -> dict[str, Any]:
    return {"field": "phase", "type": "nominal", "title": None,
            "scale": {"domain": list(COLORS), "range": list(COLORS.values())},
            "legend": {"orient": "top"}}


def class_sizes(values: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Equivalence classes by size (records ``size``, ``classes``, ``phase``), both axes log scale."""
    spec = _base("Equivalence classes by size", values)
    spec.update(mark={"type": "point", "filled": True, "size": 40, "opacity": 0.8},
                encoding={"x": {"field": "size", "type": "quantitative", "title": "class size (records)",
                                "scale": {"type": "log"}},
                          "y": {"field": "classes", "type": "quantitative", "title": "classes (log)",
                                "scale": {"type": "log"}},
                          "color": _phase_color(),
                          "tooltip": [{"field": "phase"}, {"field": "size"}, {"field": "classes"}]})
    return spec


def risk_distribution(values: Sequence[Mapping[str, Any]], order: Sequence[str]) -> dict[str, Any]:
    """Fraction of records per record-risk interval (records ``interval``, ``records``, ``phase``)."""
    spec = _base("Records by re-identification risk (1 / class size)", values, width=WIDTH + 120)
    spec.update(mark={"type": "bar"},
                encoding={"x": {"field": "interval", "type": "ordinal", "sort": list(order),
                                "title": "record risk interval", "axis": {"labelAngle": -45}},
                          "xOffset": {"field": "phase", "sort": list(COLORS)},
                          "y": {"field": "records", "type": "quantitative", "title": "fraction of records",
                                "axis": {"format": "%"}},
                          "color": _phase_color(),
                          "tooltip": [{"field": "phase"}, {"field": "interval"},
                                      {"field": "records", "format": ".2%"}]})
    return spec


def bars(title: str, values: Sequence[Mapping[str, Any]], *, x: str, y: str, x_title: str,
         y_title: str, percent: bool = False, by_phase: bool = False, sort: Sequence[str] | None = None
         ) -> dict[str, Any]:
    """A bar per category (``x``) of a quantity (``y``); side by side per phase with ``by_phase``."""
    spec = _base(title, values)
    encoding: dict[str, Any] = {
        "x": {"field": x, "type": "nominal", "title": x_title, "sort": list(sort) if sort else None,
              "axis": {"labelAngle": -45}},
        "y": {"field": y, "type": "quantitative", "title": y_title,
              **({"axis": {"format": "%"}} if percent else {})},
        "tooltip": [{"field": x}, {"field": y, **({"format": ".2%"} if percent else {})}]}
    if by_phase:
        encoding["xOffset"] = {"field": "phase", "sort": list(COLORS)}
        encoding["color"] = _phase_color()
    else:
        encoding["color"] = {"value": COLORS["after"]}
    spec.update(mark={"type": "bar"}, encoding=encoding)
    return spec


def shares_by_class(title: str, values: Sequence[Mapping[str, Any]], order: Sequence[str],
                    value_order: Sequence[str]) -> dict[str, Any]:
    """Stacked shares of a sensitive attribute's values per class (records ``class``, ``value``,
    ``share``), the overall distribution as the first bar; values stacked in ``value_order``."""
    spec = _base(title, values, width=WIDTH + 120, height=max(HEIGHT, 14 * len(order)))
    spec.update(mark={"type": "bar"},
                encoding={"y": {"field": "class", "type": "nominal", "sort": list(order), "title": None,
                                "axis": {"labelLimit": 0}},
                          "x": {"field": "share", "type": "quantitative", "stack": "normalize",
                                "title": "share of the class's records", "axis": {"format": "%"}},
                          "color": {"field": "value", "type": "nominal", "title": "value",
                                    "scale": {"scheme": "tableau20", "domain": list(value_order)}},
                          "order": {"field": "rank", "type": "quantitative"},
                          "tooltip": [{"field": "class"}, {"field": "value"},
                                      {"field": "share", "format": ".1%"}]})
    return spec


def histogram(title: str, values: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Binned counts (records ``lo``, ``hi``, ``count``, ``phase``) as two outlined step areas."""
    spec = _base(title, values, width=260, height=150)
    spec.update(mark={"type": "bar", "opacity": 0.55, "binSpacing": 0},
                encoding={"x": {"field": "lo", "type": "quantitative", "bin": {"binned": True},
                                "title": None},
                          "x2": {"field": "hi"},
                          "y": {"field": "count", "type": "quantitative", "title": "records",
                                "stack": None},
                          "color": _phase_color(),
                          "tooltip": [{"field": "phase"}, {"field": "lo"}, {"field": "hi"},
                                      {"field": "count"}]})
    return spec


def correlations(title: str, values: Sequence[Mapping[str, Any]], attributes: Sequence[str]
                 ) -> dict[str, Any]:
    """A correlation matrix (records ``a``, ``b``, ``r``, ``phase``), one heat map per phase."""
    size = max(120, 34 * len(attributes))
    order = list(attributes)
    spec = _base(title, values, width=size, height=size)
    del spec["width"], spec["height"]
    spec.update(facet={"column": {"field": "phase", "type": "nominal", "sort": list(COLORS), "title": None}},
                spec={"width": size, "height": size, "layer": [
                    {"mark": "rect",
                     "encoding": {"x": {"field": "a", "type": "nominal", "sort": order, "title": None},
                                  "y": {"field": "b", "type": "nominal", "sort": order, "title": None},
                                  "color": {"field": "r", "type": "quantitative", "title": "r",
                                            "scale": {"scheme": "redblue", "domain": [-1, 1],
                                                      "reverse": True}},
                                  "tooltip": [{"field": "a"}, {"field": "b"},
                                              {"field": "r", "format": ".3f"}]}},
                    {"mark": {"type": "text", "fontSize": 9},
                     "encoding": {"x": {"field": "a", "type": "nominal", "sort": list(attributes)},
                                  "y": {"field": "b", "type": "nominal", "sort": list(attributes)},
                                  "text": {"field": "r", "type": "quantitative", "format": ".2f"}}}]})
    return spec


def lattice(values: Sequence[Mapping[str, Any]], height_max: int) -> dict[str, Any]:
    """The lattice the search explored (records ``height``, ``position``, ``node``, ``state``), one
    point per node, by height (sum of levels) as ARX's lattice view draws it."""
    states = ["optimum", "tie", "anonymous", "not anonymous", "not checked"]
    spec = _base("Lattice explored by the search (nodes by height)", values, width=WIDTH + 120,
                 height=max(HEIGHT, 18 * (height_max + 1)))
    spec.update(mark={"type": "point", "filled": True, "size": 60},
                encoding={"y": {"field": "height", "type": "ordinal", "sort": "descending",
                                "title": "height (sum of levels)"},
                          "x": {"field": "position", "type": "quantitative", "title": None,
                                "axis": None},
                          "color": {"field": "state", "type": "nominal", "title": None,
                                    "scale": {"domain": states,
                                              "range": ["#d62728", "#ff9f1c", "#2ca02c", "#9aa5b1",
                                                        "#e4e8ec"]},
                                    "legend": {"orient": "top"}},
                          "shape": {"field": "state", "type": "nominal", "legend": None,
                                    "scale": {"domain": states,
                                              "range": ["diamond", "diamond", "circle", "circle",
                                                        "circle"]}},
                          "tooltip": [{"field": "node"}, {"field": "state"}, {"field": "value"}]})
    return spec


def ledger(values: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """A budget's spends over time (records ``step``, ``epsilon``, ``cumulative``, ``description``)
    with the total as a rule when known (record ``total``)."""
    spec = _base("Privacy budget spent over time (ε)", values)
    layers: list[dict[str, Any]] = [
        {"mark": {"type": "line", "point": True, "interpolate": "step-after", "color": COLORS["after"]},
         "encoding": {"x": {"field": "step", "type": "ordinal", "title": "spend (oldest first)"},
                      "y": {"field": "cumulative", "type": "quantitative", "title": "ε spent"},
                      "tooltip": [{"field": "description"}, {"field": "spent_at"},
                                  {"field": "epsilon"}, {"field": "cumulative"}]}}]
    totals = {float(v["total"]) for v in values if v.get("total") is not None}
    if totals:
        layers.append({"mark": {"type": "rule", "color": "#d62728", "strokeDash": [4, 3]},
                       "encoding": {"y": {"datum": max(totals)}}})
    spec.update(layer=layers)
    return spec
