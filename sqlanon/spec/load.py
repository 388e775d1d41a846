"""Load and validate a YAML spec. Every error names the file, the key path and the rule.

The shapes of values (mappings, lists, numbers) and unknown keys are checked here; the rules
themselves live in :mod:`sqlanon.spec.schema` so that specs built in Python obey the same ones.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from sqlanon.errors import HierarchyError, SpecError, did_you_mean
from sqlanon.domain.hierarchy.base import Hierarchy
from sqlanon.domain.hierarchy.builders import (
    DateHierarchy,
    IntervalHierarchy,
    MapHierarchy,
    MaskHierarchy,
    OrderedHierarchy,
)
from sqlanon.domain.hierarchy.table import read_arx_csv
from sqlanon.domain.models import build_model
from sqlanon.spec import schema as S
from sqlanon.spec.targets import file_path, target_kind
from sqlanon.spec.yaml_text import parse_yaml

TOP_KEYS = ("source", "attributes", "privacy", "transformation", "output", "metrics")
SOURCE_KEYS = ("table", "file", "format", "database", "connection", "schema", "delimiter", "header",
               "all_text")
ATTRIBUTE_KEYS = ("role", "type", "hierarchy", "weight", "action", "salt", "order")
HIERARCHY_KINDS = ("csv", "intervals", "date", "mask", "ordered", "map")
HIERARCHY_OPTIONS = {"csv": ("delimiter", "null"), "map": ("null",), "ordered": ("null",)}
TRANSFORMATION_KEYS = ("method", "levels", "suppression_limit", "suppressed", "search", "metric",
                       "weights", "algorithm", "k", "attributes", "time_limit", "t", "p", "q", "r",
                       "gamma", "seed", "statistic", "projection", "block_by", "block_size", "key",
                       "centroid", "mechanism", "alpha", "epsilon", "delta", "sensitivity", "bounds",
                       "matrix", "categories", "pd", "theta", "fraction", "keep_probability", "linkage",
                       "attribute", "distance", "order", "trust_bounds", "dataset", "budget_epsilon",
                       "budget_delta")
OUTPUT_KEYS = ("mode", "name", "dialect", "path", "database", "replace")


def join(path: str, key: str) -> str:
    """``path.key``, ``path[i]`` for an index, or whichever is non-empty."""
    if not path or not key:
        return path or key
    return path + key if key.startswith("[") else f"{path}.{key}"


class _Ctx:
    """Where values come from: the spec file (for messages) and the folder relative paths start in."""

    def __init__(self, source: str | None, base: Path) -> None:
        self.source = source
        self.base = base

    def error(self, path: str, message: str) -> SpecError:
        return SpecError(message, path=path, source=self.source)

    def mapping(self, value: Any, path: str) -> dict[Any, Any]:
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise self.error(path, f"must be a mapping, got {_kind(value)}")
        return value

    def keys(self, value: dict[Any, Any], allowed: tuple[str, ...], path: str) -> None:
        for key in value:
            if key not in allowed:
                raise self.error(join(path, str(key)), f"unknown key {key!r}; allowed: "
                                 f"{', '.join(allowed)}." + did_you_mean(str(key), allowed))

    def file(self, value: Any, path: str) -> Path:
        if not isinstance(value, str) or not value:
            raise self.error(path, f"must be a file path, got {value!r}")
        p = Path(os.path.expanduser(value))
        return p if p.is_absolute() else self.base / p

    @contextlib.contextmanager
    def located(self) -> Iterator[None]:
        """Add the spec file to errors raised by the schema's rules."""
        try:
            yield
        except SpecError as e:
            if e.source is not None or self.source is None:
                raise
            raise type(e)(e.rule, path=e.path, source=self.source) from None


def _name_key(c: _Ctx, key: Any, path: str, what: str) -> str:
    """A mapping key that names a column: text, or an integer (a column named ``2019``). YAML reads
    ``null``, ``~``, ``on``, ``yes``, ``1.5`` as other types, which are refused rather than renamed."""
    if isinstance(key, str) and key:
        return key
    if isinstance(key, int) and not isinstance(key, bool):
        return str(key)
    raise c.error(path, f"{what} must be text (quote it), got {key!r}")


def _kind(v: Any) -> str:
    names: dict[type, str] = {dict: "a mapping", list: "a list", str: "a string"}
    return names.get(type(v), type(v).__name__)


def load_spec(path: str | os.PathLike[str]) -> S.Spec:
    """Read a YAML spec file; relative file paths inside it are relative to its folder."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SpecError("spec file not found", source=str(p)) from None
    except (IsADirectoryError, UnicodeDecodeError) as e:
        raise SpecError(f"cannot read the spec file ({type(e).__name__})", source=str(p)) from None
    except OSError as e:  # permissions, a name too long, ...
        raise SpecError(f"cannot read the spec file ({e.strerror or type(e).__name__})",
                        source=str(p)) from None
    return spec_from_dict(parse_yaml(text, source=str(p)), source=str(p), base=p.parent)


def spec_from_dict(data: Any, *, source: str | None = None, base: str | os.PathLike[str] = ".") -> S.Spec:
    """Build a spec from plain data (as parsed from YAML); ``base`` resolves relative file paths."""
    c = _Ctx(source, Path(base))
    if not isinstance(data, dict):
        raise c.error("", f"the spec must be a mapping with keys {', '.join(TOP_KEYS)}, got {_kind(data)}")
    c.keys(data, TOP_KEYS, "")
    for required in ("source", "attributes"):
        if required not in data:
            raise c.error(required, "is required")
    with c.located():
        metrics, metric_options = _metrics(c, data.get("metrics"))
        return S.Spec(_source(c, data["source"]), _attributes(c, data["attributes"]),
                      _privacy(c, data.get("privacy")), _transformation(c, data.get("transformation")),
                      _output(c, data.get("output")), metrics, path=source, metric_options=metric_options)


def _database_file(c: _Ctx, value: Any, path: str) -> Any:
    """A database setting, with a DuckDB file resolved against the spec's folder (a server URL or
    ``:memory:`` kept as written; a URL of another scheme refused before it passes for a path)."""
    if not isinstance(value, str):
        return value
    try:
        kind = target_kind(value, path)
    except SpecError as e:
        raise c.error(path, e.rule) from None
    return str(c.file(file_path(value), path)) if kind == "file" else value


def _source(c: _Ctx, value: Any) -> S.Source:
    v = c.mapping(value, "source")
    c.keys(v, SOURCE_KEYS, "source")
    file = str(c.file(v["file"], "source.file")) if v.get("file") is not None else None
    if v.get("connection") is not None and v.get("database") is not None:
        raise c.error("source", "give one of `database` and `connection` (the same setting), not both")
    key = "connection" if v.get("connection") is not None else "database"
    database = v.get(key)
    database = _database_file(c, database, f"source.{key}")
    return S.Source(table=v.get("table"), file=file, format=v.get("format"), database=database,
                    schema=v.get("schema"), delimiter=v.get("delimiter"), header=v.get("header", True),
                    all_text=v.get("all_text", False))


def _attributes(c: _Ctx, value: Any) -> dict[str, S.Attribute]:
    v = c.mapping(value, "attributes")
    out = {}
    for name, spec in v.items():
        name = _name_key(c, name, "attributes", "an attribute name")
        path = f"attributes.{name}"
        if isinstance(spec, str):
            spec = {"role": spec}
        spec = c.mapping(spec, path)
        c.keys(spec, ATTRIBUTE_KEYS, path)
        if "role" not in spec:
            raise c.error(f"{path}.role", f"is required; use one of {', '.join(S.ROLES)}")
        order = spec.get("order")
        if order is not None and not isinstance(order, list):
            raise c.error(f"{path}.order", f"must be a list of the values, lowest first, got {_kind(order)}")
        hierarchy = None
        if spec.get("hierarchy") is not None:
            hierarchy = hierarchy_from_dict(spec["hierarchy"], path=f"{path}.hierarchy", source=c.source,
                                            base=c.base, order=order)
        out[str(name)] = S.Attribute(str(name), spec["role"], spec.get("type"), hierarchy,
                                     spec.get("weight", 1.0), spec.get("action", "drop"),
                                     spec.get("salt"), tuple(order) if order is not None else None)
    return out


def hierarchy_from_dict(value: Any, *, path: str = "hierarchy", source: str | None = None,
                        base: str | os.PathLike[str] = ".", order: list[Any] | None = None) -> Hierarchy:
    """A hierarchy from its spec form: ``{csv: file}``, ``{intervals: {...}}``, ``{date: [...]}``, ...

    A bare string is a CSV file. ``order`` (the attribute's ``order``) supplies the values of an
    ``ordered`` hierarchy that lists none. Errors name ``source``, ``path`` and, for files, the file.
    """
    c = _Ctx(source, Path(base))
    if isinstance(value, str):
        value = {"csv": value}
    v = c.mapping(value, path)
    kinds = [k for k in v if k in HIERARCHY_KINDS]
    if len(kinds) != 1:
        c.keys(v, (*HIERARCHY_KINDS, "delimiter", "null"), path)
        raise c.error(path, f"give exactly one of {', '.join(HIERARCHY_KINDS)}")
    kind = kinds[0]
    c.keys(v, (kind, *HIERARCHY_OPTIONS.get(kind, ())), path)
    null = v.get("null")
    if null is not None and not isinstance(null, str):
        raise c.error(join(path, "null"), f"must be the leaf label that stands for NULL, got {null!r}")
    p = join(path, kind)
    inline = f"{c.source or 'spec'}: {p}"
    try:
        return _build(c, kind, v[kind], p, v, order, inline)
    except HierarchyError as e:
        if e.source and e.source not in (c.source, inline):  # a file: name it inside the message
            raise HierarchyError(f"{e.source}: {e.rule}", path=p, source=c.source) from None
        raise HierarchyError(e.rule, path=join(p, e.path), source=c.source) from None


def _build(c: _Ctx, kind: str, body: Any, p: str, v: dict[str, Any], order: list[Any] | None,
           inline: str) -> Hierarchy:
    if kind == "csv":
        return read_arx_csv(c.file(body, p), delimiter=v.get("delimiter", ";"), null_leaf=v.get("null"))
    if kind == "date":
        if not isinstance(body, list):
            raise c.error(p, f"must be a list of units such as [month, year, decade], got {_kind(body)}")
        return DateHierarchy(tuple(body))
    if kind == "map":
        if not isinstance(body, dict):
            raise c.error(p, f"must map each value to its list of generalizations, got {_kind(body)}")
        return MapHierarchy(body, source=inline, null_leaf=v.get("null"))
    b = c.mapping(body, p)
    if kind == "intervals":
        c.keys(b, ("widths", "origin", "bottom", "top"), p)
        widths = b.get("widths")
        if not isinstance(widths, list) or not widths:
            raise c.error(join(p, "widths"), "must be a non-empty list of widths")
        return IntervalHierarchy(tuple(widths), origin=b.get("origin", 0), bottom=b.get("bottom"),
                                 top=b.get("top"))
    if kind == "mask":
        c.keys(b, ("levels", "from", "char"), p)
        side = S.choose(b.get("from", "right"), ("right", "left"), join(p, "from"), "side")
        levels: Any = b.get("levels")  # MaskHierarchy checks it and names the key
        return MaskHierarchy(levels, from_right=side == "right", char=b.get("char", "*"))
    c.keys(b, ("values", "sizes"), p)
    values = b.get("values", order)
    if not isinstance(values, list):
        raise c.error(join(p, "values"), "needs the values, lowest first (or the attribute's `order`)")
    if not isinstance(b.get("sizes"), list):
        raise c.error(join(p, "sizes"), "needs the group sizes per level, e.g. [2, 4]")
    return OrderedHierarchy(values, b["sizes"], source=inline, null_leaf=v.get("null"))


def _relative_files(c: _Ctx, params: Any) -> Any:
    """A model's file parameter (a research subset) is relative to the spec file, like every path."""
    from sqlanon.domain.models.presence import is_file

    subset = params.get("subset") if isinstance(params, dict) else None
    if isinstance(subset, str) and is_file(subset):
        return {**params, "subset": str(c.file(subset, "subset"))}
    return params


def _privacy(c: _Ctx, value: Any) -> tuple[Any, ...]:
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
        ((key, params),) = entry.items()
        models.append(build_model(str(key), _relative_files(c, params), f"{path}.{key}", c.source))
    return tuple(models)


def _transformation(c: _Ctx, value: Any) -> S.Transformation:
    v = c.mapping(value, "transformation")
    c.keys(v, TRANSFORMATION_KEYS, "transformation")
    levels = c.mapping(v.get("levels"), "transformation.levels")
    levels = {_name_key(c, k, "transformation.levels", "a quasi-identifier name"): lv
              for k, lv in levels.items()}
    options = {k: val for k, val in v.items()
               if k not in ("method", "levels", "suppression_limit", "suppressed")}
    return S.Transformation(v.get("method", "generalization"), {str(k): lv for k, lv in levels.items()},
                            v.get("suppression_limit", 0.0), v.get("suppressed", "remove"), options)


def _output(c: _Ctx, value: Any) -> S.Output:
    v = c.mapping(value, "output")
    c.keys(v, OUTPUT_KEYS, "output")
    database = _database_file(c, v["database"], "output.database") if v.get("database") else None
    return S.Output(v.get("mode", "table"), v.get("name"), v.get("dialect", "duckdb"), v.get("path"),
                    database, v.get("replace", False))


def _metrics(c: _Ctx, value: Any) -> tuple[tuple[str, ...], dict[str, Any]]:
    """``[names]`` or ``{names: [...], options: {...}}``."""
    options: dict[str, Any] = {}
    if isinstance(value, dict):
        c.keys(value, ("names", "options"), "metrics")
        options = c.mapping(value.get("options"), "metrics.options")
        value = value.get("names")
        path = "metrics.names"
    else:
        path = "metrics"
    if value is None:
        return (), options
    if not isinstance(value, list):
        raise c.error(path, f"must be a list of metric names, got {_kind(value)}")
    for i, name in enumerate(value):
        S.check_metric_name(name, f"{path}[{i}]")
    return tuple(value), options
