"""Load and validate a YAML spec. Every error names the file, the key path and the rule."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import yaml

from sqlanon.errors import HierarchyError, SpecError, did_you_mean
from sqlanon.hierarchy.base import Hierarchy
from sqlanon.hierarchy.builders import DateHierarchy, IntervalHierarchy, MaskHierarchy, OrderedHierarchy
from sqlanon.hierarchy.table import TableHierarchy, read_arx_csv
from sqlanon.models import build_model
from sqlanon.spec import schema as S

TOP_KEYS = ("source", "attributes", "privacy", "transformation", "output", "metrics")


class _Ctx:
    def __init__(self, source: str | None, base: Path) -> None:
        self.source = source
        self.base = base

    def error(self, path: str, message: str) -> SpecError:
        return SpecError(message, path=path, source=self.source)

    def mapping(self, value: Any, path: str) -> dict[str, Any]:
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise self.error(path, f"must be a mapping, got {_kind(value)}")
        return value

    def keys(self, value: dict[str, Any], allowed: tuple[str, ...], path: str) -> None:
        for key in value:
            if key not in allowed:
                raise self.error(f"{path}.{key}" if path else str(key),
                                 f"unknown key {key!r}; allowed: {', '.join(allowed)}."
                                 + did_you_mean(str(key), allowed))

    def choice(self, value: Any, choices: tuple[str, ...], path: str) -> str:
        if value not in choices:
            raise self.error(path, f"{value!r} is not one of {', '.join(choices)}."
                             + did_you_mean(str(value), choices))
        return value

    def number(self, value: Any, path: str, *, low: float | None = None, high: float | None = None
               ) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self.error(path, f"must be a number, got {value!r}")
        if (low is not None and value < low) or (high is not None and value > high):
            raise self.error(path, f"must be in [{low}, {high}], got {value!r}")
        return value

    def file(self, value: Any, path: str) -> Path:
        if not isinstance(value, str) or not value:
            raise self.error(path, "must be a file path")
        p = Path(os.path.expanduser(value))
        return p if p.is_absolute() else self.base / p


def _kind(v: Any) -> str:
    return {dict: "a mapping", list: "a list", str: "a string"}.get(type(v), type(v).__name__)


def load_spec(path: str | os.PathLike[str]) -> S.Spec:
    """Read a YAML spec file."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SpecError("spec file not found", source=str(p)) from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
        raise SpecError(f"{where}not valid YAML ({getattr(e, 'problem', e)})", source=str(p)) from None
    return spec_from_dict(data, source=str(p), base=p.parent)


def spec_from_dict(data: Any, *, source: str | None = None, base: str | os.PathLike[str] = ".") -> S.Spec:
    """Build a spec from plain data (as parsed from YAML)."""
    c = _Ctx(source, Path(base))
    if not isinstance(data, dict):
        raise c.error("", f"the spec must be a mapping with keys {', '.join(TOP_KEYS)}, got {_kind(data)}")
    c.keys(data, TOP_KEYS, "")
    for required in ("source", "attributes"):
        if required not in data:
            raise c.error(required, "is required")
    src = _source(c, data["source"])
    attrs = _attributes(c, data["attributes"])
    privacy = _privacy(c, data.get("privacy"), attrs)
    transformation = _transformation(c, data.get("transformation"), attrs)
    output = _output(c, data.get("output"))
    metrics = _metrics(c, data.get("metrics"))
    return S.Spec(src, attrs, privacy, transformation, output, metrics, path=source)


def _source(c: _Ctx, value: Any) -> S.Source:
    v = c.mapping(value, "source")
    c.keys(v, ("table", "file", "format", "database", "connection", "schema", "delimiter", "header"),
           "source")
    if bool(v.get("table")) == bool(v.get("file")):
        raise c.error("source", "give exactly one of `table` (a table of the database) or `file` "
                      "(a CSV or Parquet file)")
    fmt = v.get("format")
    file = None
    if v.get("file"):
        file = str(c.file(v["file"], "source.file"))
        if fmt is None:
            suffix = Path(file).suffix.lower()
            fmt = {".csv": "csv", ".tsv": "csv", ".txt": "csv", ".parquet": "parquet",
                   ".pq": "parquet"}.get(suffix)
            if fmt is None:
                raise c.error("source.format", f"cannot tell the format of {file!r}; set format: csv "
                              "or parquet")
        fmt = c.choice(fmt, ("csv", "parquet"), "source.format")
    database = v.get("connection") or v.get("database")
    if database and not str(database).startswith(("postgres://", "postgresql://", "host=", ":memory:")):
        database = str(c.file(database, "source.database"))
    if v.get("table") is not None and not isinstance(v["table"], str):
        raise c.error("source.table", "must be a table name")
    return S.Source(table=v.get("table"), file=file, format=fmt, database=database,
                    schema=v.get("schema"), delimiter=v.get("delimiter"), header=v.get("header", True))


def _attributes(c: _Ctx, value: Any) -> dict[str, S.Attribute]:
    v = c.mapping(value, "attributes")
    if not v:
        raise c.error("attributes", "declare at least one attribute")
    out = {}
    for name, spec in v.items():
        path = f"attributes.{name}"
        if isinstance(spec, str):
            spec = {"role": spec}
        spec = c.mapping(spec, path)
        c.keys(spec, ("role", "type", "hierarchy", "weight", "action", "salt", "order"), path)
        if str(name).startswith("__sa_"):
            raise c.error(path, "names starting with __sa_ are reserved for sqlanon's own columns")
        role = c.choice(spec.get("role"), S.ROLES, f"{path}.role")
        typ = c.choice(spec["type"], S.TYPES, f"{path}.type") if spec.get("type") else None
        hierarchy = _hierarchy(c, spec["hierarchy"], f"{path}.hierarchy") \
            if spec.get("hierarchy") is not None else None
        if role == "quasi_identifier" and hierarchy is None:
            raise c.error(f"{path}.hierarchy", "a quasi-identifier needs a hierarchy (csv, intervals, "
                          "date, mask, ordered or map)")
        action = c.choice(spec.get("action", "drop"), S.IDENTIFIER_ACTIONS, f"{path}.action")
        if spec.get("action") and role != "identifier":
            raise c.error(f"{path}.action", "only identifiers take an action")
        weight = c.number(spec.get("weight", 1.0), f"{path}.weight", low=0)
        order = spec.get("order")
        if order is not None and (not isinstance(order, list) or len(set(map(str, order))) != len(order)):
            raise c.error(f"{path}.order", "must be a list of distinct values, lowest first")
        out[str(name)] = S.Attribute(str(name), role, typ, hierarchy, float(weight), action,
                                     spec.get("salt"), tuple(order) if order else None)
    if not any(a.role == "quasi_identifier" for a in out.values()):
        raise c.error("attributes", "declare at least one quasi_identifier")
    return out


HIERARCHY_KINDS = ("csv", "intervals", "date", "mask", "ordered", "map")


def _hierarchy(c: _Ctx, value: Any, path: str) -> Hierarchy:
    v = c.mapping(value, path)
    kinds = [k for k in v if k in HIERARCHY_KINDS]
    if len(kinds) != 1:
        c.keys(v, (*HIERARCHY_KINDS, "delimiter", "null"), path)
        raise c.error(path, f"give exactly one of {', '.join(HIERARCHY_KINDS)}")
    kind = kinds[0]
    body = v[kind]
    p = f"{path}.{kind}"
    try:
        if kind == "csv":
            c.keys(v, ("csv", "delimiter", "null"), path)
            return read_arx_csv(c.file(body, p), delimiter=v.get("delimiter", ";"), null_leaf=v.get("null"))
        if kind == "intervals":
            b = c.mapping(body, p)
            c.keys(b, ("widths", "origin", "bottom", "top"), p)
            widths = b.get("widths")
            if not isinstance(widths, list) or not widths:
                raise c.error(f"{p}.widths", "must be a non-empty list of widths")
            return IntervalHierarchy(tuple(c.number(w, f"{p}.widths[{i}]") for i, w in enumerate(widths)),
                                     origin=b.get("origin", 0), bottom=b.get("bottom"), top=b.get("top"))
        if kind == "date":
            if not isinstance(body, list):
                raise c.error(p, "must be a list of units such as [month, year, decade]")
            return DateHierarchy(tuple(body))
        if kind == "mask":
            b = c.mapping(body, p)
            c.keys(b, ("levels", "from", "char"), p)
            return MaskHierarchy(b.get("levels"), from_right=c.choice(b.get("from", "right"),
                                                                      ("right", "left"), f"{p}.from") == "right",
                                 char=b.get("char", "*"))
        if kind == "ordered":
            b = c.mapping(body, p)
            c.keys(b, ("values", "sizes"), p)
            if not isinstance(b.get("values"), list) or not isinstance(b.get("sizes"), list):
                raise c.error(p, "needs `values` (lowest first) and `sizes` (group sizes per level)")
            return OrderedHierarchy(b["values"], b["sizes"], source=p)
        b = c.mapping(body, p)
        rows = []
        for leaf, ancestors in b.items():
            ancestors = ancestors if isinstance(ancestors, list) else [ancestors]
            rows.append([str(leaf), *[str(a) for a in ancestors]])
        if not rows:
            raise c.error(p, "must map each value to its list of generalizations")
        return TableHierarchy(rows, source=f"{c.source or 'spec'}: {p}", null_leaf=v.get("null"))
    except HierarchyError as e:
        if e.source:
            raise
        raise HierarchyError(e.rule, path=f"{p}.{e.path}" if e.path else p, source=c.source) from None


def _privacy(c: _Ctx, value: Any, attrs: dict[str, S.Attribute]) -> tuple:
    if value is None:
        return ()
    if isinstance(value, dict):
        value = [{k: v} for k, v in value.items()]
    if not isinstance(value, list):
        raise c.error("privacy", "must be a list of models, e.g. - k_anonymity: {k: 5}")
    models = []
    for i, entry in enumerate(value):
        path = f"privacy[{i}]"
        if not isinstance(entry, dict) or len(entry) != 1:
            raise c.error(path, "each entry is one model name mapped to its parameters")
        (key, params), = entry.items()
        model = build_model(str(key), params, f"{path}.{key}", c.source)
        for a in model.sensitive_attributes():
            if a not in attrs:
                raise c.error(f"{path}.{key}.attribute", f"unknown attribute {a!r}."
                              + did_you_mean(a, attrs))
            if attrs[a].role != "sensitive":
                raise c.error(f"{path}.{key}.attribute",
                              f"{a!r} has role {attrs[a].role}; the model needs a sensitive attribute")
        model.validate_against(attrs, f"{path}.{key}")
        models.append(model)
    return tuple(models)


def _transformation(c: _Ctx, value: Any, attrs: dict[str, S.Attribute]) -> S.Transformation:
    v = c.mapping(value, "transformation")
    known = ("method", "levels", "suppression_limit", "suppressed", "search", "metric", "weights",
             "algorithm", "k", "attributes", "time_limit", "t", "p", "q", "r", "gamma", "seed")
    c.keys(v, known, "transformation")
    method = c.choice(v.get("method", "generalization"), ("generalization", "microaggregation",
                                                           "noise"), "transformation.method")
    levels_in = c.mapping(v.get("levels"), "transformation.levels")
    levels = {}
    for name, level in levels_in.items():
        path = f"transformation.levels.{name}"
        if name not in attrs:
            raise c.error(path, f"unknown attribute {name!r}." + did_you_mean(str(name), attrs))
        a = attrs[name]
        if a.role != "quasi_identifier":
            raise c.error(path, f"{name!r} is not a quasi_identifier (role {a.role})")
        if isinstance(level, bool) or not isinstance(level, int) or level < 0:
            raise c.error(path, f"a level must be an integer >= 0, got {level!r}")
        assert a.hierarchy is not None
        if level > a.hierarchy.height:
            raise c.error(path, f"level {level} is above the hierarchy's height {a.hierarchy.height}")
        levels[str(name)] = level
    limit = c.number(v.get("suppression_limit", 0.0), "transformation.suppression_limit", low=0, high=1)
    suppressed = c.choice(v.get("suppressed", "remove"), S.SUPPRESSED_MODES, "transformation.suppressed")
    options = {k: val for k, val in v.items() if k not in ("method", "levels", "suppression_limit",
                                                           "suppressed")}
    return S.Transformation(method, levels, float(limit), suppressed, options)


def _output(c: _Ctx, value: Any) -> S.Output:
    v = c.mapping(value, "output")
    c.keys(v, ("mode", "name", "dialect", "path", "database"), "output")
    mode = c.choice(v.get("mode", "table"), S.OUTPUT_MODES, "output.mode")
    dialect = v.get("dialect", "duckdb")
    from sqlanon.compile.dialects import PROFILES, profile
    from sqlanon.errors import UnsupportedError

    try:
        dialect = profile(str(dialect)).name
    except UnsupportedError:
        raise c.error("output.dialect", f"unknown dialect {dialect!r}; one of {', '.join(PROFILES)}."
                      + did_you_mean(str(dialect), PROFILES)) from None
    if mode in ("table", "view") and v.get("name") is not None and not isinstance(v["name"], str):
        raise c.error("output.name", "must be a table name")
    return S.Output(mode, v.get("name"), dialect, v.get("path"),
                    str(c.file(v["database"], "output.database")) if v.get("database") else None)


def _metrics(c: _Ctx, value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        raise c.error("metrics", "must be a list of metric names")
    from sqlanon.metrics import METRICS, load_all

    load_all()
    for i, m in enumerate(value):
        if m not in METRICS:
            raise c.error(f"metrics[{i}]", f"unknown metric {m!r}; known: {', '.join(sorted(METRICS))}."
                          + did_you_mean(str(m), METRICS))
    return tuple(value)
