"""Load and validate a YAML spec. Every error names the file, the key path and the rule.

The shapes of values (mappings, lists, numbers) and unknown keys are checked here; the rules
themselves live in :mod:`sqlanon.spec.schema` and its sections so that specs built in Python obey
the same ones.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from sqlanon.domain.models import build_model
from sqlanon.errors import SpecError
from sqlanon.spec.attribute import ROLES, Attribute
from sqlanon.spec.context import Context, kind_of
from sqlanon.spec.hierarchies import hierarchy_from_dict
from sqlanon.spec.methods import METHODS
from sqlanon.spec.output import Output
from sqlanon.spec.privacy_unit import PrivacyUnit
from sqlanon.spec.publishing import Publishing, publishing_from_dict
from sqlanon.spec.schema import Spec
from sqlanon.spec.source import Source
from sqlanon.spec.tables import tables_from_yaml
from sqlanon.spec.targets import file_path, target_kind
from sqlanon.spec.transformation import Transformation
from sqlanon.spec.values import check_metric_name
from sqlanon.spec.yaml_text import parse_yaml

TOP_KEYS = ("source", "attributes", "privacy", "transformation", "output", "metrics", "publishing",
            "privacy_unit", "tables")
SOURCE_KEYS = ("table", "file", "format", "database", "connection", "schema", "delimiter", "header",
               "all_text")
ATTRIBUTE_KEYS = ("role", "type", "hierarchy", "weight", "action", "salt", "order")
TRANSFORMATION_KEYS = ("method", "levels", "suppression_limit", "suppressed", "search", "metric",
                       "weights", "algorithm", "k", "attributes", "time_limit", "t", "p", "q", "r",
                       "gamma", "seed", "statistic", "projection", "block_by", "block_size", "key",
                       "centroid", "mechanism", "alpha", "epsilon", "delta", "sensitivity", "bounds",
                       "matrix", "categories", "pd", "theta", "fraction", "keep_probability", "linkage",
                       "attribute", "distance", "order", "trust_bounds", "dataset", "budget_epsilon",
                       "budget_delta", "ledger", "release_key")
"""The keys of the built-in methods' ``transformation`` sections; a registered method's own keys are
allowed too (:func:`transformation_keys`)."""
OUTPUT_KEYS = ("mode", "name", "dialect", "path", "database", "replace")


def transformation_keys() -> tuple[str, ...]:
    """Every key a ``transformation`` section may have: :data:`TRANSFORMATION_KEYS`, then the keys
    each registered method reads (:data:`~sqlanon.spec.methods.METHODS`)."""
    keys = dict.fromkeys(TRANSFORMATION_KEYS)
    for _, method in METHODS.items():
        keys.update(dict.fromkeys(method.transformation_keys()))
    return tuple(keys)


def _name_key(c: Context, key: Any, path: str, what: str) -> str:
    """A mapping key that names a column: text, or an integer (a column named ``2019``). YAML reads
    ``null``, ``~``, ``on``, ``yes``, ``1.5`` as other types, which are refused rather than renamed."""
    if isinstance(key, str) and key:
        return key
    if isinstance(key, int) and not isinstance(key, bool):
        return str(key)
    raise c.error(path, f"{what} must be text (quote it), got {key!r}")


def load_spec(path: str | os.PathLike[str]) -> Spec:
    """Read a YAML spec file; relative file paths inside it are relative to its folder."""
    p = Path(path)
    return spec_from_dict(read_spec_file(p), source=str(p), base=p.parent)


def read_spec_file(p: Path) -> Any:
    """The parsed YAML of a spec file, not yet validated."""
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SpecError("spec file not found", source=str(p)) from None
    except (IsADirectoryError, UnicodeDecodeError) as e:
        raise SpecError(f"cannot read the spec file ({type(e).__name__})", source=str(p)) from None
    except OSError as e:  # permissions, a name too long, ...
        raise SpecError(f"cannot read the spec file ({e.strerror or type(e).__name__})",
                        source=str(p)) from None
    return parse_yaml(text, source=str(p))


def spec_from_dict(data: Any, *, source: str | None = None, base: str | os.PathLike[str] = ".") -> Spec:
    """Build a spec from plain data (as parsed from YAML); ``base`` resolves relative file paths."""
    c = Context(source, Path(base))
    if not isinstance(data, dict):
        raise c.error("", f"the spec must be a mapping with keys {', '.join(TOP_KEYS)}, got {kind_of(data)}")
    c.keys(data, TOP_KEYS, "")
    for required in ("source", "attributes"):
        if required not in data:
            raise c.error(required, "is required")
    with c.located():
        metrics, metric_options = _metrics(c, data.get("metrics"))
        unit = PrivacyUnit.from_yaml(data["privacy_unit"]) if data.get("privacy_unit") is not None else None
        publishing = publishing_from_dict(data.get("publishing"), unit.column if unit is not None else None)
        return Spec(_source(c, data["source"]), _attributes(c, data["attributes"]),
                    _privacy(c, data.get("privacy")),
                    _transformation(c, data.get("transformation"), publishing),
                    _output(c, data.get("output")), metrics, path=source, metric_options=metric_options,
                    publishing=publishing,
                    privacy_unit=unit,
                    tables=tables_from_yaml(data.get("tables"), lambda v, p: _attributes(c, v, p)))


def _database_file(c: Context, value: Any, path: str) -> Any:
    """A database setting, with a DuckDB file resolved against the spec's folder (a server URL or
    ``:memory:`` kept as written; a URL of another scheme refused before it passes for a path)."""
    if not isinstance(value, str):
        return value
    try:
        kind = target_kind(value, path)
    except SpecError as e:
        raise c.error(path, e.rule) from None
    return str(c.file(file_path(value), path)) if kind == "file" else value


def _source(c: Context, value: Any) -> Source:
    v = c.mapping(value, "source")
    c.keys(v, SOURCE_KEYS, "source")
    file = str(c.file(v["file"], "source.file")) if v.get("file") is not None else None
    if v.get("connection") is not None and v.get("database") is not None:
        raise c.error("source", "give one of `database` and `connection` (the same setting), not both")
    key = "connection" if v.get("connection") is not None else "database"
    database = v.get(key)
    database = _database_file(c, database, f"source.{key}")
    return Source(table=v.get("table"), file=file, format=v.get("format"), database=database,
                  schema=v.get("schema"), delimiter=v.get("delimiter"), header=v.get("header", True),
                  all_text=v.get("all_text", False))


def _attributes(c: Context, value: Any, section: str = "attributes") -> dict[str, Attribute]:
    v = c.mapping(value, section)
    out = {}
    for name, spec in v.items():
        name = _name_key(c, name, section, "an attribute name")
        path = f"{section}.{name}"
        if isinstance(spec, str):
            spec = {"role": spec}
        spec = c.mapping(spec, path)
        c.keys(spec, ATTRIBUTE_KEYS, path)
        if "role" not in spec:
            raise c.error(f"{path}.role", f"is required; use one of {', '.join(ROLES)}")
        order = spec.get("order")
        if order is not None and not isinstance(order, list):
            raise c.error(f"{path}.order",
                          f"must be a list of the values, lowest first, got {kind_of(order)}")
        hierarchy = None
        if spec.get("hierarchy") is not None:
            hierarchy = hierarchy_from_dict(spec["hierarchy"], path=f"{path}.hierarchy", source=c.source,
                                            base=c.base, order=order)
        out[str(name)] = Attribute(str(name), spec["role"], spec.get("type"), hierarchy,
                                   spec.get("weight", 1.0), spec.get("action", "drop"),
                                   spec.get("salt"), tuple(order) if order is not None else None)
    return out


def _relative_files(c: Context, params: Any) -> Any:
    """A model's file parameter (a research subset) is relative to the spec file, like every path."""
    subset = params.get("subset") if isinstance(params, dict) else None
    if not isinstance(subset, str):
        return params
    from sqlanon.domain.models.presence import is_file

    if is_file(subset):
        return {**params, "subset": str(c.file(subset, "subset"))}
    return params


def _privacy(c: Context, value: Any) -> tuple[Any, ...]:
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


def _transformation(c: Context, value: Any, publishing: Publishing | None = None) -> Transformation:
    v = c.mapping(value, "transformation")
    known = TRANSFORMATION_KEYS if all(k in TRANSFORMATION_KEYS for k in v) else transformation_keys()
    c.keys(v, known, "transformation")
    levels = c.mapping(v.get("levels"), "transformation.levels")
    levels = {_name_key(c, k, "transformation.levels", "a quasi-identifier name"): lv
              for k, lv in levels.items()}
    options = {k: val for k, val in v.items()
               if k not in ("method", "levels", "suppression_limit", "suppressed")}
    method = "m_invariance" if publishing is not None and publishing.mode == "m_invariance" \
        else "generalization"  # m-invariance groups the rows itself
    return Transformation(v.get("method", method), {str(k): lv for k, lv in levels.items()},
                          v.get("suppression_limit", 0.0), v.get("suppressed", "remove"), options)


def _output(c: Context, value: Any) -> Output:
    v = c.mapping(value, "output")
    c.keys(v, OUTPUT_KEYS, "output")
    database = _database_file(c, v["database"], "output.database") if v.get("database") else None
    return Output(v.get("mode", "table"), v.get("name"), v.get("dialect", "duckdb"), v.get("path"),
                  database, v.get("replace", False))


def _metrics(c: Context, value: Any) -> tuple[tuple[str, ...], dict[str, Any]]:
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
        raise c.error(path, f"must be a list of metric names, got {kind_of(value)}")
    for i, name in enumerate(value):
        check_metric_name(name, f"{path}[{i}]")
    return tuple(value), options
