"""Every output problem found before anything is scanned, searched, drawn or written.

One check for every method (generalization, microaggregation, noise) and verb: the output's name
(not empty, not an internal ``__sa_`` name, not longer than the target keeps, not the source table
itself), an existing output without ``output.replace``, views that an in-place replacement would
break, a file source without a database to write into, and an ``output.path`` that cannot be
written. Outputs are written in the source's schema (``source.schema``, else the connection's
current schema).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from sqlanon.engines.base import Engine
from sqlanon.engines.swap import recover
from sqlanon.errors import SpecError
from sqlanon.methods.base import KEPT_TABLE_SUFFIX
from sqlanon.methods.dataset import Dataset
from sqlanon.spec.schema import Spec
from sqlanon.sql.dialects import DialectProfile, stored_case
from sqlanon.sql.nodes import INTERNAL_PREFIX

GROUPS_SUFFIX = KEPT_TABLE_SUFFIX
"""A view or printed SQL of a pulled microaggregation reads its group table ``<output name>__groups``."""


@dataclass(frozen=True)
class OutputPlan:
    """Where a checked output goes."""

    mode: str
    name: str | None = None
    """The relation written (the source itself for ``in_place``); None for modes sql and none."""
    schema: str | None = None
    exists: bool = False
    """Whether ``name`` exists and is replaced."""
    group_table: str | None = None
    group_table_exists: bool = False
    path: Path | None = None
    """Mode sql: the file the SQL is written to."""
    recovered: tuple[str, ...] = ()
    """What was done to complete or undo an interrupted replacement of the output table."""


def output_name(spec: Spec, ds: Dataset | str) -> str:
    """``output.name``, or ``<source>_anon`` (``ds``: the source, or its relation's name)."""
    stem = ds if isinstance(ds, str) else ds.name
    return spec.output.name if spec.output.name is not None else f"{stem}_anon"


def keeps_group_table(spec: Spec) -> bool:
    """Whether the output reads a table the run keeps (a microaggregation pulled into memory, not
    one SQL query, written as a view or SQL text reads its group table)."""
    return spec.method.keeps_table(spec)


def sql_path(spec: Spec) -> Path | None:
    """``output.path`` resolved relative to the spec file, like the spec's other paths."""
    if not spec.output.path:
        return None
    path = Path(spec.output.path)
    if not path.is_absolute() and spec.path:
        path = Path(spec.path).parent / path
    return path


def check_before_opening(spec: Spec, engine: Engine | None, database: str | None) -> None:
    """What can be refused before the source is opened: where a file source's output would go, and
    an ``output.path`` that cannot be written."""
    mode = spec.output.mode
    if spec.source.file and mode == "in_place":
        raise SpecError("in_place replaces a database table; a file source is never written. Use mode "
                        "table (with output.database) or sql", path="output.mode", source=spec.path)
    if spec.source.file and mode == "view":
        raise SpecError("a view over a file source would read a temporary copy that disappears; use "
                        "mode table (with output.database) or sql", path="output.mode", source=spec.path)
    if spec.source.file and mode == "table" and engine is None \
            and not (database or spec.source.database or spec.output.database):
        raise SpecError("the source is a file, so there is no database to write the table into: set "
                        "output.database to a DuckDB file (or pass --database). sqlanon never writes "
                        "beside the input file on its own", path="output.database", source=spec.path)
    if mode == "sql":
        _check_writable(spec)


def _check_writable(spec: Spec) -> None:
    path = sql_path(spec)
    if path is None:
        return
    problem = None
    if path.is_dir():
        problem = "is a directory"
    elif not path.parent.is_dir():
        problem = f"cannot be written: directory {str(path.parent)!r} does not exist"
    elif path.exists() and not os.access(path, os.W_OK):
        problem = "cannot be written: permission denied"
    elif not path.exists() and not os.access(path.parent, os.W_OK):
        problem = f"cannot be written: no permission to create files in {str(path.parent)!r}"
    if problem:
        raise SpecError(f"{str(path)!r} {problem}", path="output.path", source=spec.path)


def check_name(spec: Spec, name: str, dialect: DialectProfile, what: str = "output") -> None:
    """An output relation's name: not empty, not internal, not longer than ``dialect`` keeps."""
    if not name:
        raise SpecError("must not be empty; leave it out for the default <source>_anon",
                        path="output.name", source=spec.path)
    if dialect.fold(name).startswith(INTERNAL_PREFIX):
        raise SpecError(f"{name!r} starts with {INTERNAL_PREFIX}, which sqlanon reserves for its own "
                        f"staging tables; choose another name for the {what}", path="output.name",
                        source=spec.path)
    too_long = dialect.name_too_long(name)
    if too_long:
        raise SpecError(f"the {what} name {name!r} is {too_long} (a longer name is cut short and may "
                        "then name another table); choose a shorter output.name", path="output.name",
                        source=spec.path)


def check_output_relation(spec: Spec, name: str, source: str, dialect: DialectProfile,
                          mode: str) -> None:
    """A table or view output's name (:func:`check_name`), and not the source relation ``source``
    itself as ``dialect`` compares names (in the same schema)."""
    check_name(spec, name, dialect, mode)
    if dialect.fold(name) == dialect.fold(source):
        same = ""
        if name != source:
            same = (f" (names on {dialect.name} ignore case)" if dialect.case_insensitive_names
                    else f" (on {dialect.name} both are {stored_case(name, dialect)!r})")
        raise SpecError(f"{name!r} is the source table itself{same}; sqlanon does not write an "
                        "output over its source: choose another output.name, or use mode in_place "
                        "to replace the source", path="output.name", source=spec.path)


def plan_output(spec: Spec, ds: Dataset, dialect: DialectProfile | None = None, *,
                writing: bool = True) -> OutputPlan:
    """Check the spec's output against the opened source and its database; nothing is scanned.

    ``dialect`` is the target the names must fit (default: the engine's); ``writing`` False (for
    ``compile``) checks the names only, not what exists in the database.

    Raises:
        SpecError: naming ``output.name``, ``output.mode`` or ``output.path``.
    """
    if writing:
        check_before_opening(spec, ds.engine, None)
    mode = spec.output.mode
    dialect = dialect or ds.engine.dialect
    engine = ds.engine
    if spec.output.name is not None:
        check_name(spec, spec.output.name, dialect)
    if mode == "none":
        return OutputPlan(mode)
    if mode == "in_place":
        if writing:
            _refuse_replacing(spec, engine, ds.name, "output.mode")
            _refuse_dependent_views(spec, engine, ds.name, ds.schema)
        return OutputPlan(mode, ds.name, ds.schema, exists=True)
    name = output_name(spec, ds)
    plan = OutputPlan(mode, schema=ds.schema, path=sql_path(spec) if mode == "sql" else None)
    if mode in ("table", "view"):
        check_output_relation(spec, name, ds.name, dialect, mode)
        recovered = tuple(recover(engine, name, schema=ds.schema)) if writing and mode == "table" else ()
        exists = writing and _refuse_existing(spec, engine, name, ds.schema, mode)
        if exists and mode == "table":
            _refuse_replacing(spec, engine, name, "output.replace")
            _refuse_dependent_views(spec, engine, name, ds.schema)
        plan = OutputPlan(mode, name, ds.schema, exists=exists, path=plan.path, recovered=recovered)
    if keeps_group_table(spec):
        groups = name + GROUPS_SUFFIX
        check_name(spec, groups, dialect, "group table")
        if writing and not engine.capabilities.transactional_ddl:
            raise SpecError(f"the {mode} output of {spec.method.kept_table_reader(spec)} reads a group "
                            f"table created with it in one transaction, which {engine.name} cannot do "
                            "(the engine does not declare the capability 'transactional_ddl'); write a "
                            "table (output.mode: table)", path="output.mode", source=spec.path)
        if writing and spec.source.file and getattr(engine, "database", None) == ":memory:":
            raise SpecError(f"the SQL of {spec.method.kept_table_reader(spec)} reads its group "
                            f"table {groups!r}, which would be created in an in-memory database that "
                            "disappears; set output.database to a DuckDB file (or use mode table)",
                            path="output.database", source=spec.path)
        groups_exist = writing and _refuse_existing(spec, engine, groups, ds.schema, "group table")
        plan = OutputPlan(mode, plan.name, ds.schema, plan.exists, groups, groups_exist, plan.path,
                          plan.recovered)
    return plan


def _refuse_existing(spec: Spec, engine: Engine, name: str, schema: str | None, what: str) -> bool:
    """Whether ``name`` exists (and may be replaced); an error if it exists and may not."""
    exists = engine.relation_exists(name, schema)
    if exists and not spec.output.replace:
        raise SpecError(f"{name!r} already exists; sqlanon does not overwrite it unless `output.replace:"
                        f" true` is set (or choose another output.name for the {what})",
                        path="output.name", source=spec.path)
    return exists


def _refuse_replacing(spec: Spec, engine: Engine, name: str, key: str) -> None:
    """A table is replaced by a staging table renamed into its place, which takes an engine that
    replaces a table atomically (capability ``atomic_rename``), or in steps a later run can complete
    or undo (``recoverable_swap``)."""
    caps = engine.capabilities
    if not (caps.atomic_rename or caps.recoverable_swap):
        raise SpecError(f"{engine.name} cannot replace table {name!r} safely (the engine declares "
                        "neither 'atomic_rename' nor 'recoverable_swap'); write the output under a "
                        "new output.name", path=key, source=spec.path)


def _refuse_dependent_views(spec: Spec, engine: Engine, name: str, schema: str | None) -> None:
    """A table that views read is not replaced: PostgreSQL refuses to drop it, and DuckDB drops it
    and leaves the views reading whatever takes its name."""
    views = engine.dependent_views(name, schema)
    if views:
        where = f"{schema}.{name}" if schema else name
        listed = ", ".join(repr(v) for v in views)
        in_place = spec.output.mode == "in_place"
        action = "in_place would replace" if in_place else "output.replace would replace"
        instead = "use mode table" if in_place else "choose another output.name"
        raise SpecError(f"{action} table {where!r}, which view{'s' if len(views) > 1 else ''} "
                        f"{listed} read{'' if len(views) > 1 else 's'}: replacing it would break them. "
                        f"Drop the views first and re-create them after, or {instead}",
                        path="output.mode" if in_place else "output.name", source=spec.path)
