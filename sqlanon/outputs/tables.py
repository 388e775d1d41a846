"""Several tables, one release (the spec's ``tables`` section, :mod:`sqlanon.spec.tables`).

The persons are released once: the person table, with each event table's quasi-identifiers as
person-level attributes (:func:`~sqlanon.compile.tables.joined_query`), goes through the spec's
method with its privacy unit, as one table would; its released rows (a SELECT over that joined
relation) then give every output (:mod:`sqlanon.compile.tables`): the person table's, and each event
table's rows of the released persons with their persons' released values and keys.

Writing: on an engine with transactional DDL (DuckDB, PostgreSQL) every output (``table``, ``view``,
``in_place``) is created or replaced in one transaction: a failure or a kill leaves every table as it
was. An engine without (Spark) writes ``table`` outputs one after the other and refuses ``in_place``
and ``replace``, which would leave some tables replaced and others not.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable
from typing import Any

from sqlglot import exp

from sqlanon.compile.hash_text import parse_types
from sqlanon.compile.tables import (
    event_output,
    joined_query,
    person_output,
    released_persons,
    unsettled_events,
)
from sqlanon.engines.base import Engine
from sqlanon.engines.connect import connect
from sqlanon.engines.staging import StagingArea, remove_leftovers
from sqlanon.errors import EngineError, SpecError, UnsupportedError, did_you_mean
from sqlanon.outputs.tables_sql import printed, stable_token
from sqlanon.outputs.writer import Target, run, script
from sqlanon.spec.attribute import Attribute
from sqlanon.spec.output import Output
from sqlanon.spec.schema import Spec
from sqlanon.spec.source import Source
from sqlanon.spec.tables import EventTable
from sqlanon.sql.dialects import DialectProfile, profile
from sqlanon.sql.nodes import table
from sqlanon.sql.render import render

Written = tuple[str, str, exp.Select, dict[str, Any]]
"""An output: the key path naming it, its relation, its rows, and notes for the report."""
Verb = Callable[..., Any]
"""``api.anonymize`` or ``api.apply``: runs a spec on an engine and returns its report."""


def release_tables(spec: Spec, verb: Verb, *, engine: Engine | None = None, database: str | None = None,
                   writes: bool = True, **options: Any) -> Any:
    """Release the person table and every event table of ``spec`` (module docstring); the report of
    the person-level release, its ``outputs`` naming every relation written."""
    if spec.source.file:
        raise SpecError("several tables are tables of a database; load the file first", path="tables",
                        source=spec.path)
    owns = engine is None
    engine = engine or connect(database or spec.source.database or spec.output.database)
    try:
        return _release(spec, verb, engine, writes and spec.output.mode != "none", options)
    finally:
        if owns:
            engine.close()


def _release(spec: Spec, verb: Verb, engine: Engine, writes: bool, options: dict[str, Any]) -> Any:
    schema = spec.source.schema
    person = spec.source.table or ""
    if not engine.relation_exists(person, schema):
        raise SpecError(f"no table or view named {person!r}", path="source.table", source=spec.path)
    mode = spec.output.mode
    if writes:
        _refuse(spec, engine, mode)
    person_columns = [c for c, _ in engine.columns(person, schema)]
    events = {t.entry: _event_columns(spec, engine, t, person_columns) for t in spec.tables}
    if writes:
        remove_leftovers(engine)
    assert spec.privacy_unit is not None
    unit = spec.privacy_unit.column
    if unit not in person_columns:
        raise SpecError(f"unknown column {unit!r}." + did_you_mean(unit, person_columns),
                        path="privacy_unit.column", source=spec.path)
    joined = joined_query(person, schema, person_columns, unit, spec.tables, spec.privacy_unit.varying)
    area = StagingArea(engine)
    if mode == "sql":  # printed: stable names (the statement reads them as its own relations)
        area.token = stable_token(spec.output.name or f"{person}_anon")
    with area:
        lasting = mode == "view" and writes
        names = [_lasting(spec, person, "joined"), _lasting(spec, person, "released")] if lasting \
            else [area.name("j"), area.name("r")]
        where = None if mode == "sql" else schema
        new = [n for n in names if not (lasting and engine.relation_exists(n, where))]
        try:
            return _release_joined(spec, verb, engine, joined, names, events, writes, options)
        except BaseException:
            if lasting:  # a view mode that failed leaves none of the views it created
                for name in reversed(new):
                    with contextlib.suppress(EngineError):
                        engine.drop(name, kind="VIEW", schema=where)
            raise
        finally:
            if not lasting:
                engine.drop(names[1], schema=where)
                engine.drop(names[0], schema=where)


def _release_joined(spec: Spec, verb: Verb, engine: Engine, joined: exp.Select, names: list[str],
                    events: dict[str, list[tuple[str, str]]], writes: bool, options: dict[str, Any]
                    ) -> Any:
    mode = spec.output.mode
    # printed SQL reads the joined persons as a relation of its own statement, unqualified
    schema = None if mode == "sql" else spec.source.schema
    joined_name, released = names
    dialect = engine.dialect
    target = profile(spec.output.dialect) if mode == "sql" else dialect
    if mode == "view" and writes:
        _run_view(engine, joined_name, schema, render(joined, dialect, pretty=True), spec.output.replace)
    else:
        engine.create_table_as(joined_name, joined, schema=schema)
    derived = _derived(spec, joined_name, schema, target.name if writes else None)
    try:
        report = verb(derived, engine=engine, **options)
    except SpecError as e:  # an event table's attribute is named where the spec declares it
        raise _located(spec, e) from None
    if not writes:
        return report
    select = report.outputs["sql"]
    key = spec.attributes.get(spec.privacy_unit.column) if spec.privacy_unit else None
    if mode == "sql":
        dropped = set(report.outputs.get("dropped_columns", ()))
        columns = [c for c in engine.columns(joined_name) if c[0] not in dropped]
        outputs = _outputs(spec, target, released, None, columns, key, events, engine)
        report.outputs = printed(spec, target, outputs, [
            (joined_name, render(joined, target, pretty=True)), (released, select)])
        return report
    if mode == "view":
        _run_view(engine, released, schema, select, spec.output.replace)
    else:
        run(engine, script("table", select, Target(released, schema, dialect), replace=False,
                           transaction=False).statements)
    outputs = _outputs(spec, dialect, released, schema, engine.columns(released, schema), key, events,
                       engine)
    report.outputs = _write(spec, engine, outputs, mode)
    if mode == "view":
        report.outputs["relations_read"] = [joined_name, released]
    return report


def _located(spec: Spec, error: SpecError) -> SpecError:
    for t in spec.tables:
        for q in t.quasi_identifiers:
            if error.path == f"attributes.{q}" or error.path.startswith(f"attributes.{q}."):
                return type(error)(error.rule, path=f"tables.{t.entry}.{error.path}", source=spec.path)
            if error.path == f"privacy_unit.attributes.{q}":
                return type(error)(error.rule, path=f"tables.{t.entry}.rules.{q}", source=spec.path)
    return error


def _derived(spec: Spec, joined: str, schema: str | None, dialect: str | None) -> Spec:
    """The person-level release as one table's spec: the joined relation, the event tables'
    quasi-identifiers as attributes, the person column kept (the outputs release it), the rows as a
    SELECT (``dialect``) or not written (None)."""
    assert spec.privacy_unit is not None
    unit = spec.privacy_unit.column
    attributes = {n: a for n, a in spec.attributes.items() if n != unit}
    attributes[unit] = Attribute(unit, "insensitive")
    for t in spec.tables:
        attributes.update({q: t.attributes[q] for q in t.quasi_identifiers})
    output = Output("sql", dialect=dialect) if dialect is not None else Output("none")
    return dataclasses.replace(spec, source=Source(table=joined, schema=schema),
                               attributes=attributes, output=output, tables=(), path=spec.path)


def _event_columns(spec: Spec, engine: Engine, t: EventTable, person_columns: list[str]
                   ) -> list[tuple[str, str]]:
    """The event table's columns, after checking that what the spec names exists and that the
    ``constant`` attributes agree between a person's rows (rows without a person are not released)."""
    path = f"tables.{t.entry}"
    schema = spec.source.schema
    if not engine.relation_exists(t.table, schema):
        raise SpecError(f"no table or view named {t.table!r}", path=f"{path}.table", source=spec.path)
    columns = engine.columns(t.table, schema)
    names = [c for c, _ in columns]
    for key, name in (("key", t.key), ("order_by", t.order_by)):
        if name is not None and name not in names:
            raise SpecError(f"table {t.table!r} has no column {name!r}." + did_you_mean(name, names),
                            path=f"{path}.{key}", source=spec.path)
    for name in t.attributes:
        if name not in names:
            raise SpecError(f"table {t.table!r} has no column {name!r}." + did_you_mean(name, names),
                            path=f"{path}.attributes.{name}", source=spec.path)
    for q in t.quasi_identifiers:
        if q in person_columns:
            raise SpecError(f"{q!r} is also a column of the person table {spec.source.table!r}; a "
                            "person-level attribute needs its own name", path=f"{path}.attributes.{q}",
                            source=spec.path)
    default = spec.privacy_unit.varying if spec.privacy_unit else "constant"
    constant = [q for q in t.quasi_identifiers if t.rule(q, default) == "constant"]
    for row in engine.fetch(unsettled_events(t, schema, default))[1]:
        if row[0] is None:
            continue  # event rows without a person belong to no released person: they are left out
        for i, q in enumerate(constant):
            if row[2 + i]:
                raise SpecError(f"{q!r} differs between the rows of person {row[0]} ({t.key}); declare "
                                f"a rule for it ({path}.rules.{q}: min, max or first)",
                                path=f"{path}.rules.{q}", source=spec.path)
    return columns


def _lasting(spec: Spec, person: str, part: str) -> str:
    """A view mode's intermediate view: named after the person output, as lasting as it."""
    return f"{spec.output.name or f'{person}_anon'}_{part}"


def _run_view(engine: Engine, name: str, schema: str | None, select: str, replace: bool) -> None:
    target = Target(name, schema, engine.dialect)
    exists = engine.relation_exists(name, schema)
    run(engine, script("view", select, target, replace=replace and exists, transaction=False).statements,
        together=True)


def _outputs(spec: Spec, dialect: DialectProfile, released: str, schema: str | None,
             released_columns: list[tuple[str, str]], key: Attribute | None,
             events: dict[str, list[tuple[str, str]]], engine: Engine) -> list[Written]:
    """``(path, name, query, notes)`` of every output for ``dialect``: the person table's, then each
    event table's, reading the released persons ``released`` (in ``schema``) with
    ``released_columns`` (typed as ``engine`` reports them)."""
    assert spec.privacy_unit is not None
    unit = spec.privacy_unit.column
    types = parse_types(released_columns, engine.dialect.sqlglot)
    event_qis = [q for t in spec.tables for q in t.quasi_identifiers]
    person = spec.source.table or ""
    out: list[Written] = [("output.name", spec.output.name or f"{person}_anon", person_output(
        released, schema, [c for c, _ in released_columns], unit, event_qis, key, dialect,
        types.get(unit)), {})]
    keeps_key = key is None or key.role != "identifier" or key.action != "drop"
    for t in spec.tables:
        columns = events[t.entry]
        persons = released_persons(released, schema, unit, t, key, dialect, types.get(unit))
        query, dropped, undeclared = event_output(t, spec.source.schema, [c for c, _ in columns], persons,
                                                  keeps_key, dialect,
                                                  parse_types(columns, engine.dialect.sqlglot))
        notes: dict[str, Any] = {"dropped_columns": dropped} if dropped else {}
        if undeclared:
            notes["warnings"] = [f"columns not declared in the spec were copied unchanged: "
                                 f"{', '.join(undeclared)}"]
        name = spec.source.table if spec.output.mode == "in_place" else t.output_name
        out.append((f"tables.{t.entry}.name", t.table if spec.output.mode == "in_place" else name or "",
                    query, notes))
    if spec.output.mode == "in_place":
        out[0] = ("source.table", person, out[0][2], {})
    return out


def _refuse(spec: Spec, engine: Engine, mode: str) -> None:
    """What cannot be written: modes without a place, outputs that exist (without ``replace``), and
    replacing several tables on an engine that cannot do it in one transaction."""
    if mode == "sql":
        return
    together = engine.capabilities.transactional_ddl and engine.capabilities.atomic_rename
    if not together and (mode == "in_place" or spec.output.replace):
        raise UnsupportedError(
            f"{engine.name} has no multi-statement transaction, so replacing several tables could "
            "leave some replaced and others not; write new tables (output.mode: table, without "
            "replace) and swap them in yourself")
    if mode == "in_place" or spec.output.replace:
        return
    person = spec.source.table or ""
    names = [("output.name", spec.output.name or f"{person}_anon")] + \
        [(f"tables.{t.entry}.name", t.output_name) for t in spec.tables]
    if mode == "view":
        names += [("output.name", _lasting(spec, person, "joined")),
                  ("output.name", _lasting(spec, person, "released"))]
    for path, name in names:
        if engine.relation_exists(name, spec.source.schema):
            raise SpecError(f"{name!r} exists; set output.replace: true to replace it, or choose "
                            "another name", path=path, source=spec.path)


def _write(spec: Spec, engine: Engine, outputs: list[Written],
           mode: str) -> dict[str, Any]:
    """Create (or replace) every output, in one transaction where the engine has one."""
    schema = spec.source.schema
    together = engine.capabilities.transactional_ddl
    if together:
        with engine.transaction():
            _create_all(engine, outputs, mode, schema, spec.output.replace)
    else:
        _create_all(engine, outputs, mode, schema, replace=False)
    relations = [{"relation": name, "rows": engine.row_count(name, schema=schema), **notes}
                 for _, name, _, notes in outputs]
    return {"mode": mode, "suppressed": spec.transformation.suppressed, "relations": relations,
            "together": together}


def _create_all(engine: Engine, outputs: list[Written], mode: str,
                schema: str | None, replace: bool) -> None:
    if mode == "in_place":
        with StagingArea(engine) as area:  # every new table first, then the drops and renames
            staged = [area.name(f"n{i}") for i in range(len(outputs))]
            for (_, _, query, _), new in zip(outputs, staged):
                engine.create_table_as(new, query, schema=schema)
            for (_, name, _, _), new in zip(outputs, staged):
                engine.replace_table(name, new, schema=schema)
        return
    kind = "VIEW" if mode == "view" else "TABLE"
    for _, name, query, _ in outputs:
        if replace:
            engine.drop(name, kind=kind, schema=schema)
        if mode == "view":
            engine.execute(exp.Create(this=table(name, schema), kind="VIEW", expression=query))
        else:
            engine.create_table_as(name, query, schema=schema)
