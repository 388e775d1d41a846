"""Writing the spec that ``anonymize`` chose: the input spec with fixed ``levels`` (docs/search.md).

The input YAML is read again and re-emitted with PyYAML: keys keep their order and every value is
kept, but the file's comments and layout are not. Paths inside the spec are relative to the spec's
folder, so relative ones are rewritten relative to the new file's folder: the written spec reads the
same files (source, database, hierarchies, research subsets, outputs) wherever it is written.
The search's report goes into a comment at the top.
"""

from __future__ import annotations

import datetime
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from sqlanon.errors import SpecError
from sqlanon.spec.schema import Spec

SEARCH_KEYS = ("search", "metric", "time_limit")
"""Transformation keys that only a search reads; the chosen spec has fixed levels instead."""
_URL_PREFIXES = ("postgres://", "postgresql://", "host=", ":memory:", "duckdb://")


def destination(spec: Spec, path: str | os.PathLike[str]) -> Path:
    """Where the chosen spec goes, checked before any search: a file in an existing folder, not the
    input spec itself."""
    if spec.path is None:
        raise SpecError("writing the chosen spec needs a spec read from a YAML file (it is re-emitted "
                        "with the chosen levels)", path="write_spec")
    if spec.transformation.options.get("recoding") == "local":
        raise SpecError("a local recoding releases each row at its step's levels, which one "
                        "transformation.levels cannot say; its output is written by anonymize itself "
                        "(use output.mode view or sql to keep it readable later)", path="write_spec",
                        source=spec.path)
    dest = Path(path)
    if dest.is_dir():
        raise SpecError(f"{dest} is a folder; give the file to write the chosen spec to",
                        path="write_spec", source=spec.path)
    if not dest.parent.is_dir():
        raise SpecError(f"the folder of {dest} does not exist", path="write_spec", source=spec.path)
    if dest.exists() and dest.resolve() == Path(spec.path).resolve():
        raise SpecError("would overwrite the input spec (its comments would be lost); write the chosen "
                        "spec to another file", path="write_spec", source=spec.path)
    return dest


def write_chosen_spec(spec: Spec, levels: Mapping[str, int], report: Mapping[str, Any],
                      path: str | os.PathLike[str]) -> Path:
    """Write ``spec`` (read again from its file) with ``levels`` fixed and ``report`` as a comment."""
    dest = destination(spec, path)
    assert spec.path is not None
    source = Path(spec.path)
    data = yaml.safe_load(source.read_text(encoding="utf-8"))
    chosen = chosen_data(data, spec, levels, old_base=source.parent, new_base=dest.parent)
    body = yaml.safe_dump(chosen, sort_keys=False, allow_unicode=True, default_flow_style=None, width=100)
    dest.write_text(comment(source, report) + body, encoding="utf-8")
    from sqlanon.spec.load import load_spec

    load_spec(dest)  # the written spec must load as it is
    return dest


def chosen_data(data: dict[str, Any], spec: Spec, levels: Mapping[str, int], *, old_base: Path,
                new_base: Path) -> dict[str, Any]:
    """The spec's YAML data with the levels fixed, ``spec``'s output name (the file's, or one given
    in its place, e.g. by ``--output``), and relative paths rebased to ``new_base``."""
    out = dict(data)
    old = dict(data.get("transformation") or {})
    rest = {k: v for k, v in old.items() if k not in (*SEARCH_KEYS, "method", "levels")}
    order = [a for a in spec.attributes if a in levels]
    out["transformation"] = {"method": "generalization",
                             "levels": {a: int(levels[a]) for a in order}, **rest}
    given = data.get("output")
    output = given if isinstance(given, dict) else {}
    if spec.output.name is not None and output.get("name") != spec.output.name:
        out["output"] = {**output, "name": spec.output.name}  # a name given on the command line
    return rebased(out, old_base, new_base)


def rebased(data: dict[str, Any], old_base: Path, new_base: Path) -> dict[str, Any]:
    """``data`` with every relative file path of a spec re-expressed relative to ``new_base``."""

    def move(value: Any) -> Any:
        if not isinstance(value, str) or not value:
            return value
        p = Path(os.path.expanduser(value))
        if p.is_absolute():
            return value
        target = (old_base / p).resolve()
        try:
            return os.path.relpath(target, new_base.resolve())
        except ValueError:  # another drive (Windows): keep it absolute
            return str(target)

    def file_or_url(value: Any) -> Any:
        return value if isinstance(value, str) and value.startswith(_URL_PREFIXES) else move(value)

    out = dict(data)
    if isinstance(out.get("source"), dict):
        src = dict(out["source"])
        for key in ("file", "database", "connection"):
            if key in src:
                src[key] = move(src[key]) if key == "file" else file_or_url(src[key])
        out["source"] = src
    if isinstance(out.get("attributes"), dict):
        attrs = {}
        for name, a in out["attributes"].items():
            if isinstance(a, dict) and a.get("hierarchy") is not None:
                h = a["hierarchy"]
                if isinstance(h, str):
                    h = move(h)
                elif isinstance(h, dict) and isinstance(h.get("csv"), str):
                    h = {**h, "csv": move(h["csv"])}
                a = {**a, "hierarchy": h}
            attrs[name] = a
        out["attributes"] = attrs
    if out.get("privacy") is not None:
        out["privacy"] = _rebased_models(out["privacy"], move)
    if isinstance(out.get("output"), dict):
        o = dict(out["output"])
        for key in ("database", "path"):
            if key in o:
                o[key] = move(o[key])
        out["output"] = o
    return out


def _rebased_models(privacy: Any, move: Any) -> Any:
    """Research subsets given as files are paths too (relative to the spec, like every path)."""
    from sqlanon.domain.models.presence import is_file

    def entry(params: Any) -> Any:
        subset = params.get("subset") if isinstance(params, dict) else None
        if isinstance(subset, str) and is_file(subset):
            return {**params, "subset": move(subset)}
        return params

    if isinstance(privacy, dict):
        return {k: entry(v) for k, v in privacy.items()}
    if isinstance(privacy, list):
        return [{k: entry(v) for k, v in e.items()} if isinstance(e, dict) else e for e in privacy]
    return privacy


def comment(source: Path, report: Mapping[str, Any]) -> str:
    """The header: where the spec comes from, and the search's report (YAML, commented out)."""
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    shown = json.loads(json.dumps(report, default=str))  # plain values only
    name = " ".join(str(source).splitlines())
    lines = [f"Written by `sqlanon anonymize` from {name} on {when}.",
             "The levels below are the search's choice: `sqlanon apply` and `sqlanon compile` reuse them.",
             "Comments and layout of the input spec are not kept. The search's report:"]
    lines += yaml.safe_dump(shown, sort_keys=False, allow_unicode=True, default_flow_style=None,
                            width=100).splitlines()
    return "".join(f"# {line}".rstrip() + "\n" for line in lines) + "\n"
