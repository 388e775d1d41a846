"""The spec of a run on a table in memory (a DataFrame or an Arrow table given to the Python API).

The data takes the place of the spec's source: ``source`` may be left out, and then the data is
known in SQL (and in the output's default name, ``data_anon``) as :data:`DEFAULT_NAME`; or it may
give ``source.table`` alone, to name it. The result is handed back to the caller, so the output is a
table (or ``none``); the modes that write into a database (``view``, ``in_place``, ``sql``) are refused.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from sqlanon.errors import SpecError
from sqlanon.spec.load import read_spec_file, spec_from_dict
from sqlanon.spec.schema import Spec

DEFAULT_NAME = "data"
"""The table name of in-memory data whose spec has no ``source``."""

MODES = ("table", "none")
"""The output modes of in-memory data."""


def spec_for_data(spec: Spec | Mapping[str, Any] | str | os.PathLike[str]) -> Spec:
    """``spec`` (a :class:`Spec`, a mapping as parsed from YAML, or a YAML file) for in-memory data.

    Raises:
        SpecError: the source names a file, database or schema; the output mode writes into a
            database; or any rule of an ordinary spec.
    """
    if isinstance(spec, Spec):
        found = spec
    elif isinstance(spec, Mapping):
        found = spec_from_dict(_with_source(spec))
    else:
        path = Path(spec)
        found = spec_from_dict(_with_source(read_spec_file(path)), source=str(path), base=path.parent)
    _require_in_memory(found)
    return found


def _with_source(data: Any) -> Any:
    """``data`` with ``source: {table: data}`` when it has no source (other shapes are left for the
    loader to refuse)."""
    if isinstance(data, Mapping) and not data.get("source"):
        return {**data, "source": {"table": DEFAULT_NAME}}
    return data


def _require_in_memory(spec: Spec) -> None:
    src, out = spec.source, spec.output
    refused = (
        ("source.file", src.file is not None,
         "in-memory data takes the place of the source: name it with source.table, or leave source out"),
        ("source.database", src.database is not None,
         "in-memory data runs in an embedded DuckDB of its own: leave source.database out"),
        ("source.schema", src.schema is not None,
         "in-memory data has no schema: leave source.schema out"),
        ("output.mode", out.mode not in MODES,
         f"in-memory data comes back to the caller as a table of its own kind; mode {out.mode} writes "
         f"into a database: use mode table (the default) or none"),
        ("output.database", out.database is not None,
         "in-memory data comes back to the caller, not into a database: leave output.database out"),
    )
    for path, wrong, rule in refused:
        if wrong:
            raise SpecError(rule, path=path, source=spec.path)
