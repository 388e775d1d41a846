"""Open a spec's source on an engine and resolve its attributes against the real columns."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from sqlglot import exp

from sqlanon.engines.base import Engine
from sqlanon.engines.connect import connect
from sqlanon.engines.swap import recover
from sqlanon.errors import EngineError, SpecError, did_you_mean
from sqlanon.spec.schema import Spec
from sqlanon.sql.dialects import DialectProfile
from sqlanon.sql.nodes import table


@dataclass
class Dataset:
    engine: Engine
    relation: exp.Table
    name: str
    columns: list[tuple[str, str]]
    owns_engine: bool = False
    schema: str | None = None
    """``source.schema``: where the source is, and where outputs are written (None: the
    connection's current schema)."""
    recovered: tuple[str, ...] = ()
    """What was done to complete or undo an interrupted replacement of the source table
    (:func:`~sqlanon.engines.swap.recover`), before it was read."""

    @property
    def column_names(self) -> list[str]:
        return [c for c, _ in self.columns]

    def close(self) -> None:
        if self.owns_engine:
            self.engine.close()


def open_dataset(spec: Spec, engine: Engine | None = None, *, database: str | None = None) -> Dataset:
    """Connect to the spec's source (or use ``engine``) and check every declared attribute exists.

    A file source is loaded into an embedded DuckDB: in memory, or in ``database`` /
    ``output.database`` when given. The input file is only read. An interrupted replacement of a
    source table (on an engine that replaces tables in recorded steps) is completed or undone first.
    """
    src = spec.source
    owns = engine is None
    recovered: tuple[str, ...] = ()
    if engine is None:
        target = database or src.database or spec.output.database
        engine = connect(target, create=bool(src.file))  # a file source's database is an output
    try:
        if src.file:
            if src.schema is not None:
                raise SpecError("applies to table sources only (a file is loaded into a temporary "
                                "table)", path="source.schema", source=spec.path)
            if not engine.capabilities.file_registration:
                raise SpecError("file sources load into the embedded DuckDB; use a table source for "
                                f"{engine.name}", path="source.file", source=spec.path)
            if not Path(src.file).exists():
                raise SpecError(f"data file not found: {src.file}", path="source.file", source=spec.path)
            opts: dict[str, object] = {}
            if src.format == "csv":
                opts["header"] = bool(src.header)
                if src.delimiter:
                    opts["delim"] = src.delimiter
                if src.all_text:
                    opts["all_varchar"] = True
            name = src.relation_name
            try:
                engine.register_file(name, src.file, kind=src.format or "csv", options=opts)
            except EngineError as e:
                raise SpecError(f"cannot read {src.file} as {(src.format or 'csv').upper()}: {e.detail}",
                                path="source.file", source=spec.path) from e
        else:
            name = src.table or ""
            check_source_names(spec, engine.dialect)
            recovered = tuple(recover(engine, name, schema=src.schema))
        schema = None if src.file else src.schema
        try:
            columns = engine.columns(name, schema)
        except EngineError:
            if not src.file:  # a missing table or schema, named as the spec names it
                locate_table(spec, engine)
            raise
        ds = Dataset(engine, table(name, schema), name, columns, owns, schema, recovered)
        resolve_attributes(spec, ds)
        return ds
    except BaseException:
        if owns:
            engine.close()
        raise


def check_source_names(spec: Spec, dialect: DialectProfile) -> None:
    """Refuse a source table or schema name that ``dialect`` would shorten to another one."""
    src = spec.source
    for key, value in (("schema", src.schema), ("table", src.table)):
        too_long = value is not None and dialect.name_too_long(value)
        if too_long:
            raise SpecError(f"{value!r} is {too_long}", path=f"source.{key}", source=spec.path)


def locate_table(spec: Spec, engine: Engine) -> None:
    """Refuse a source table (or its schema) that does not exist, or whose name the engine would
    shorten to another one."""
    src = spec.source
    check_source_names(spec, engine.dialect)
    if src.schema is not None and not engine.schema_exists(src.schema):
        raise SpecError(f"no schema named {src.schema!r} in the database", path="source.schema",
                        source=spec.path)
    if not engine.relation_exists(src.table or "", src.schema):
        where = f" in schema {src.schema!r}" if src.schema is not None else " in the database"
        raise SpecError(f"no table or view named {src.table!r}{where}", path="source.table",
                        source=spec.path)


def resolve_attributes(spec: Spec, ds: Dataset) -> None:
    names = ds.column_names
    for a in spec.attributes:
        if a not in names:
            raise SpecError(f"unknown column {a!r} in {ds.name!r}; columns: {', '.join(names)}."
                            + did_you_mean(a, names), path=f"attributes.{a}", source=spec.path)
    for c in names:
        if c.startswith("__sa_"):
            raise SpecError(f"column {c!r} uses the reserved prefix __sa_", path="source",
                            source=spec.path)
