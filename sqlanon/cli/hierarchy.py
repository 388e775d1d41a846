"""The ``sqlanon hierarchy`` verb: build, validate and export hierarchies in ARX's CSV format.

The functions take plain arguments and return text and exit codes; :func:`add_arguments` and
:func:`run` connect them to the command line.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlglot import exp

from sqlanon.domain.hierarchy.base import Hierarchy
from sqlanon.domain.hierarchy.materialize import materialize_column, uncovered_values
from sqlanon.domain.hierarchy.table import read_arx_csv, write_arx_csv
from sqlanon.engines.base import Engine
from sqlanon.errors import HierarchyError, SpecError, did_you_mean
from sqlanon.spec.hierarchies import hierarchy_from_dict
from sqlanon.spec.load import load_spec
from sqlanon.spec.schema import Spec
from sqlanon.sql.nodes import table

SHOWN_VALUES = 10
"""Uncovered values listed by ``validate``."""


@dataclass
class Column:
    """A column of a relation on an open engine."""

    engine: Engine
    relation: exp.Expression
    column: str
    name: str
    """The relation's name, for messages."""


@contextlib.contextmanager
def open_column(column: str, *, data: str | None = None, database: str | None = None,
                table_name: str | None = None, data_delimiter: str | None = None,
                header: bool = True) -> Iterator[Column]:
    """A column of a CSV/Parquet file (``data``) or of a table in ``database``; checked to exist."""
    from sqlanon.engines.connect import connect

    if (data is None) == (table_name is None):
        raise SpecError("give the data as a file (--data) or as a table (--table, with --database)")
    engine = connect(None if data is not None else database)
    try:
        if data is not None:
            path = Path(data)
            if not path.exists():
                raise SpecError(f"data file not found: {data}", path="--data")
            kind = "parquet" if path.suffix.lower() in (".parquet", ".pq") else "csv"
            options: dict[str, Any] = {"header": header} if kind == "csv" else {}
            if data_delimiter and kind == "csv":
                options["delim"] = data_delimiter
            name = path.stem
            engine.register_file(name, str(path), kind=kind, options=options)
        else:
            name = str(table_name)
            if not engine.relation_exists(name):
                raise SpecError(f"no table or view named {name!r} in the database", path="--table")
        columns = [c for c, _ in engine.columns(name)]
        if column not in columns:
            raise SpecError(f"unknown column {column!r} in {name!r}; columns: {', '.join(columns)}."
                            + did_you_mean(column, columns), path="--column")
        yield Column(engine, table(name), column, name)
    finally:
        engine.close()


def parse_builder(text: str) -> Hierarchy:
    """A hierarchy from its spec form written as YAML or JSON, e.g. ``{intervals: {widths: [5, 10]}}``."""
    from sqlanon.spec.yaml_text import parse_yaml

    data = parse_yaml(text, path="--builder", kind="YAML or JSON")
    return hierarchy_from_dict(data, path="--builder", base=Path.cwd())


def spec_hierarchy(spec: Spec, attribute: str) -> Hierarchy:
    """The hierarchy of one attribute of a spec."""
    if attribute not in spec.attributes:
        raise SpecError(f"unknown attribute {attribute!r}." + did_you_mean(attribute, spec.attributes),
                        path="--attribute", source=spec.path)
    h = spec.attributes[attribute].hierarchy
    if h is None:
        raise SpecError(f"attribute {attribute!r} has no hierarchy", path=f"attributes.{attribute}",
                        source=spec.path)
    return h


def build(h: Hierarchy, column: Column, *, delimiter: str = ";", null_label: str | None = None) -> str:
    """The hierarchy over the distinct values of ``column``, as ARX CSV text.

    For a table hierarchy only the rows of values that occur are written (|D| shrinks to them).
    """
    return write_arx_csv(materialize_column(h, column.engine, column.relation, column.column),
                         delimiter=delimiter, null_label=null_label)


def export(spec: Spec | str, attribute: str, *, database: str | None = None, delimiter: str = ";",
           null_label: str | None = None) -> str:
    """A spec attribute's hierarchy as ARX CSV text.

    A table hierarchy (CSV file, map, ordered) is written whole; a builder (intervals, dates, masks)
    is materialized over the distinct values of the attribute in the spec's source.
    """
    from sqlanon.methods.dataset import open_dataset

    spec = load_spec(spec) if isinstance(spec, str) else spec
    h = spec_hierarchy(spec, attribute)
    t = h.table()
    if t is not None:
        return write_arx_csv(t, delimiter=delimiter, null_label=null_label)
    ds = open_dataset(spec, database=database)
    try:
        return build(h, Column(ds.engine, ds.relation, attribute, ds.name), delimiter=delimiter,
                     null_label=null_label)
    finally:
        ds.close()


def validate(path: str, *, delimiter: str = ";", null_leaf: str | None = None,
             column: Column | None = None, strict: bool = False) -> tuple[int, str]:
    """Check an ARX hierarchy file, and its coverage of a column when given.

    Returns:
        ``(exit status, report)``: 0 when the file is a proper hierarchy covering the data (and, with
        ``strict``, raised no warning), else 1.
    """
    lines = [f"hierarchy: {path}"]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            h = read_arx_csv(path, delimiter=delimiter, null_leaf=null_leaf)
        except HierarchyError as e:
            return 1, "\n".join([*lines, f"error: {e}", "result: invalid"]) + "\n"
    t = h.table()
    lines.append(f"rows (|D|): {t.domain_size}, distinct leaves: {len(t.mapping)}, height: {t.height}")
    lines.append("labels per level: " + ", ".join(
        f"{level}: {len(t.level_values(level))}" for level in range(t.height + 1)))
    lines += [f"warning: {w.message}" for w in caught]
    ok = not (strict and caught)
    if column is not None:
        missing = uncovered_values(h, column.engine, column.relation, column.column)
        where = f"column {column.column!r} of {column.name!r}"
        if missing:
            ok = False
            shown = ", ".join("NULL" if m is None else repr(m) for m in missing[:SHOWN_VALUES])
            more = f" and {len(missing) - SHOWN_VALUES} more" if len(missing) > SHOWN_VALUES else ""
            hint = " (NULL needs a row: pass --null with its leaf label)" if None in missing else ""
            lines.append(f"error: {len(missing)} value(s) of {where} are missing from the hierarchy: "
                         f"{shown}{more}{hint}")
        else:
            lines.append(f"data: every value of {where} is covered")
    lines.append("result: " + ("valid" if ok else "invalid"))
    return (0 if ok else 1), "\n".join(lines) + "\n"


# -- command line ---------------------------------------------------------------------------------
def _data_options(p: argparse.ArgumentParser, *, required: bool) -> None:
    p.add_argument("--data", help="a CSV or Parquet file holding the column")
    p.add_argument("--database", help="a DuckDB file or a postgresql:// URL holding --table")
    p.add_argument("--table", help="the table holding the column")
    p.add_argument("--column", required=required, help="the column whose values the hierarchy covers")
    p.add_argument("--data-delimiter", help="the CSV data file's delimiter (default: detected)")
    p.add_argument("--no-header", action="store_true", help="the CSV data file has no header line")


def _output_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--delimiter", default=";", help="the hierarchy file's delimiter (default ;)")
    p.add_argument("--null-label", help="write NULL values under this leaf label (default: left out)")
    p.add_argument("-o", "--output", help="write the hierarchy to this file instead of standard output")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add ``build``, ``validate`` and ``export`` to the ``hierarchy`` verb's parser."""
    sub = parser.add_subparsers(dest="hierarchy_action", required=True, metavar="ACTION")
    p = sub.add_parser("build", help="a builder over a column's distinct values, as ARX CSV")
    source = p.add_mutually_exclusive_group(required=True)
    source.add_argument("--builder", help="YAML or JSON, e.g. '{intervals: {widths: [5, 10]}}'")
    source.add_argument("--spec", help="a spec file whose --attribute's hierarchy to build")
    p.add_argument("--attribute", help="with --spec: the attribute (and default column)")
    _data_options(p, required=False)
    _output_options(p)
    p = sub.add_parser("validate", help="check an ARX hierarchy file and its coverage of a column")
    p.add_argument("hierarchy", help="the hierarchy file (ARX CSV)")
    p.add_argument("--delimiter", default=";", help="the hierarchy file's delimiter (default ;)")
    p.add_argument("--null", help="the leaf label that stands for NULL in the data")
    p.add_argument("--strict", action="store_true", help="fail on warnings too")
    _data_options(p, required=False)
    p = sub.add_parser("export", help="a spec attribute's hierarchy as ARX CSV")
    p.add_argument("spec", help="the spec file (YAML)")
    p.add_argument("--attribute", required=True, help="the attribute whose hierarchy to export")
    p.add_argument("--database", help="overrides source.database (builders read the data's values)")
    _output_options(p)


def _column(args: argparse.Namespace, default: str | None = None) -> contextlib.AbstractContextManager[
        Column | None]:
    column = args.column or default
    if args.data is None and args.table is None:
        if args.column:
            raise SpecError("--column needs the data: --data FILE or --table NAME (with --database)")
        return contextlib.nullcontext(None)
    if column is None:
        raise SpecError("give --column, the column whose values the hierarchy covers")
    return open_column(column, data=args.data, database=args.database, table_name=args.table,
                       data_delimiter=args.data_delimiter, header=not args.no_header)


def _emit(text: str, output: str | None) -> None:
    if output:
        Path(output).write_text(text, encoding="utf-8", newline="")
    else:
        sys.stdout.write(text)


def run(args: argparse.Namespace) -> int:
    """Run ``sqlanon hierarchy <action>``; returns the exit status."""
    if args.hierarchy_action == "validate":
        with _column(args) as column:
            status, report = validate(args.hierarchy, delimiter=args.delimiter, null_leaf=args.null,
                                      column=column, strict=args.strict)
        sys.stdout.write(report)
        return status
    if args.hierarchy_action == "export":
        _emit(export(args.spec, args.attribute, database=args.database, delimiter=args.delimiter,
                     null_label=args.null_label), args.output)
        return 0
    if args.spec is not None:
        if not args.attribute:
            raise SpecError("--spec needs --attribute, the attribute whose hierarchy to build")
        spec = load_spec(args.spec)
        h = spec_hierarchy(spec, args.attribute)
        if args.data is None and args.table is None:
            _emit(_build_over_source(spec, h, args), args.output)
            return 0
        default = args.attribute
    else:
        h = parse_builder(args.builder)
        default = None
    with _column(args, default) as column:
        if column is None:
            raise SpecError("build needs the data: --data FILE or --table NAME, and --column")
        _emit(build(h, column, delimiter=args.delimiter, null_label=args.null_label), args.output)
    return 0


def _build_over_source(spec: Spec, h: Hierarchy, args: argparse.Namespace) -> str:
    from sqlanon.methods.dataset import open_dataset

    ds = open_dataset(spec, database=args.database)
    try:
        column = Column(ds.engine, ds.relation, args.attribute, ds.name)
        return build(h, column, delimiter=args.delimiter, null_label=args.null_label)
    finally:
        ds.close()


__all__ = ["Column", "add_arguments", "build", "export", "open_column", "parse_builder", "run",
           "spec_hierarchy", "validate"]
