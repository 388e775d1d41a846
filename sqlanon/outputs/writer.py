"""The one writer of every transformation method's output: ``output.mode`` table, view, in_place, sql.

A method hands over its released rows as one SELECT (a :class:`~sqlanon.methods.base.Release`); the
writer renders the mode's skeleton from ``sql_templates/`` around it. On an engine the skeleton's
statements take effect together (one statement alone, several inside one transaction); printed for
a dialect, the skeleton carries its own ``BEGIN``/``COMMIT`` where the target has transactional DDL.
An engine without transactions replaces a table (``in_place``, ``output.replace``) in recorded
steps instead, when it declares ``recoverable_swap`` (:func:`~sqlanon.engines.swap.replace_table`).
Statements stay a list from the start (:func:`~sqlanon.outputs.scripts.render_statements`): nothing
is rendered to text and split again.

Modes a method cannot have are refused with the method's reason before anything is opened
(:meth:`~sqlanon.methods.base.Method.check_output_mode`).
Methods whose rows are drawn outside SQL (noise) write a table through :class:`TableWriter`.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlglot import exp

from sqlanon.compile.released import OutputQuery
from sqlanon.engines.base import Engine
from sqlanon.engines.staging import remove_leftovers, staging_name
from sqlanon.engines.swap import replace_table
from sqlanon.methods.dataset import Dataset
from sqlanon.outputs.preflight import OutputPlan, output_name, plan_output, sql_path
from sqlanon.outputs.scripts import Script, render_statements
from sqlanon.registry import Registry
from sqlanon.spec.schema import Spec
from sqlanon.sql.dialects import DialectProfile, adapt, profile
from sqlanon.sql.nodes import table
from sqlanon.sql.render import render

if TYPE_CHECKING:
    from sqlanon.methods.base import Release



@dataclass(frozen=True)
class Mode:
    """How an output mode is written: the skeletons it renders around the output SELECT."""

    create: str
    """The skeleton that creates the output (``select``: the bare statement)."""
    replace: str
    """The skeleton that replaces an existing output."""
    here: bool
    """Written into the source's database (else printed, or not written)."""

    def skeleton(self, replace: bool) -> str:
        return self.replace if replace else self.create


MODES: Registry[Mode] = Registry("output mode")
"""``output.mode`` -> how it is written (the names and their order are the spec's ``OUTPUT_MODES``)."""
MODES.add("table", Mode("create_table", "replace_table", here=True))
MODES.add("view", Mode("create_view", "replace_view", here=True))
MODES.add("in_place", Mode("replace_table", "replace_table", here=True))
MODES.add("sql", Mode("select", "select", here=False))
MODES.add("none", Mode("select", "select", here=False))


@dataclass(frozen=True)
class Target:
    """Where a mode writes: the relation, its schema and the dialect."""

    name: str
    schema: str | None
    dialect: DialectProfile

    def sql(self, name: str | None = None, *, qualified: bool = True) -> str:
        return render(table(name or self.name, self.schema if qualified else None), self.dialect)

    @property
    def staging(self) -> str:
        """A staging table name derived from the target's (stable, so that printed SQL is too)."""
        return staging_name(hashlib.sha256(self.name.encode()).hexdigest()[:12])


def select_sql(oq: OutputQuery, dialect: DialectProfile, *, run_once: bool = False) -> str:
    """The output statement as ``dialect`` text (rendered once, whatever the mode wraps around it).

    ``run_once``: the text only runs on this connection, once (a table written now), and nobody
    reads it: it is not laid out on lines, and the tree is rendered in place where the dialect
    allows (:attr:`~sqlanon.sql.dialects.DialectProfile.renders_in_place`)."""
    return render(adapt(oq.query, dialect), dialect, pretty=not run_once,
                  copy=not (run_once and dialect.renders_in_place))


def script(mode: str, select: str, target: Target, *, replace: bool, transaction: bool) -> Script:
    """The statements that realize ``mode`` (table, view, in_place, or a bare SELECT) on ``target``
    around the rendered ``select``."""
    skeleton = MODES.get(mode).skeleton(replace)
    if skeleton == "select":
        return render_statements(skeleton, target.dialect, select=select)
    if skeleton == "create_table":
        return render_statements(skeleton, target.dialect, relation=target.sql(), select=select)
    if skeleton == "replace_table":
        return render_statements(skeleton, target.dialect, relation=target.sql(),
                                 staging_relation=target.sql(target.staging),
                                 relation_name=target.sql(qualified=False), select=select,
                                 transaction=transaction)
    return render_statements(skeleton, target.dialect, relation=target.sql(), select=select,
                             transaction=transaction)


def run(engine: Engine, statements: tuple[str, ...], *, together: bool = False) -> None:
    """Send a rendered skeleton's statements to the engine: the one place the writer executes SQL.

    ``together``: they take effect together or not at all. One statement does so by itself on every
    engine, so it needs no transaction (and runs on engines without transactional DDL, Spark);
    several run in one transaction, which an engine without transactional DDL refuses before any
    of them runs.
    """
    if together and len(statements) > 1:
        with engine.transaction():
            run(engine, statements)
        return
    for statement in statements:
        engine.execute_script(statement)


def output_dialect(spec: Spec, ds: Dataset) -> DialectProfile:
    """The dialect the output statement is built for: ``output.dialect`` for printed SQL, else the
    engine's."""
    return profile(spec.output.dialect) if spec.output.mode == "sql" else ds.engine.dialect


def _summary(spec: Spec, oq: OutputQuery, mode: str, *, suppression: bool, **extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"mode": mode, **extra}
    if suppression:
        out["suppressed"] = spec.transformation.suppressed
    if oq.dropped:
        out["dropped_columns"] = list(oq.dropped)
    if oq.warnings:
        out["warnings"] = oq.warnings
    return out


def write(spec: Spec, ds: Dataset, release: Release, plan: OutputPlan | None = None) -> dict[str, Any]:
    """Write ``release`` as the spec's output mode; returns what was written (for the report).

    ``plan`` is the output checked before the source was scanned (checked now when not given).
    Staging tables that interrupted runs left behind are removed first (:mod:`sqlanon.engines.staging`).
    """
    mode = spec.output.mode
    plan = plan or plan_output(spec, ds)
    removed = remove_leftovers(ds.engine) if MODES.get(mode).here else []
    if plan.group_table is not None:
        summary = _write_with_kept_table(spec, ds, release, plan)
    else:
        release.prepare(ds)
        summary = _write(spec, ds, release, plan)
    if removed:
        summary["staging_removed"] = removed
    recovered = [*ds.recovered, *plan.recovered]
    if recovered:
        summary["swaps_recovered"] = recovered
    return summary


def _write(spec: Spec, ds: Dataset, release: Release, plan: OutputPlan) -> dict[str, Any]:
    mode = spec.output.mode
    if mode == "none":
        return {"mode": "none"}
    oq = release.query(output_dialect(spec, ds))
    if mode == "sql":
        return write_sql(spec, oq, profile(spec.output.dialect), suppression=release.suppression)
    name = ds.name if mode == "in_place" else plan.name
    assert name is not None
    engine = ds.engine
    if plan.exists and mode != "view" and not engine.capabilities.atomic_rename:
        # no transaction can hold the drop and the rename: staged, then swapped in recorded steps
        rows = replace_table(engine, name, oq.query, schema=ds.schema)
    else:
        _create(ds, oq, mode, name, replace=plan.exists, together=True)
        rows = oq.rows if oq.rows is not None and mode != "view" else engine.row_count(name, schema=ds.schema)
    return _summary(spec, oq, mode, suppression=release.suppression, relation=name, rows=rows)


def _create(ds: Dataset, oq: OutputQuery, mode: str, name: str, *, replace: bool,
            together: bool = False) -> None:
    target = Target(name, ds.schema, ds.engine.dialect)
    select = select_sql(oq, target.dialect, run_once=mode != "view")  # a view's text is kept
    run(ds.engine, script(mode, select, target, replace=replace, transaction=False).statements,
        together=together)


def _write_with_kept_table(spec: Spec, ds: Dataset, release: Release, plan: OutputPlan
                           ) -> dict[str, Any]:
    """A view or printed SQL that reads a table the release keeps (``plan.group_table``): the old
    view and table are replaced, the table filled and the view created in one transaction."""
    mode = spec.output.mode
    engine = ds.engine
    name = output_name(spec, ds)
    kept = plan.group_table
    assert kept is not None
    with engine.transaction():
        if mode == "view" and plan.exists:  # the view reads the kept table: it goes first
            engine.drop(name, kind="VIEW", schema=ds.schema)
        if plan.group_table_exists:
            engine.drop(kept, schema=ds.schema)
        release.prepare(ds, keep=kept)
        oq = release.query(output_dialect(spec, ds))
        if mode == "view":
            _create(ds, oq, "view", name, replace=False)
    if mode == "view":
        out = _summary(spec, oq, "view", suppression=False, relation=name,
                       rows=engine.row_count(name, schema=ds.schema))
    else:
        out = write_sql(spec, oq, profile(spec.output.dialect), suppression=False)
    out["group_table"] = kept
    return out


def write_sql(spec: Spec, oq: OutputQuery, target: DialectProfile, *, suppression: bool = True
              ) -> dict[str, Any]:
    """Mode sql: the bare SELECT for ``target``, into ``output.path`` or the report."""
    text = script("sql", select_sql(oq, target), Target("", None, target), replace=False,
                  transaction=False).text
    path = sql_path(spec)
    if path is not None:
        path.write_text(text, encoding="utf-8")
        return _summary(spec, oq, "sql", suppression=suppression, dialect=target.name, path=str(path))
    return _summary(spec, oq, "sql", suppression=suppression, dialect=target.name, sql=text)


def compile_script(spec: Spec, oq: OutputQuery, target: DialectProfile, *, source_name: str,
                   schema: str | None = None) -> str:
    """The SQL that the spec's output mode would run, for ``target``; a bare SELECT for ``sql``/``none``.

    ``source_name`` is the source relation's name (the in-place target, and the default output's
    stem); ``schema`` the source's schema, where the output goes (default ``source.schema``).
    """
    mode = spec.output.mode
    select = select_sql(oq, target)
    if not MODES.get(mode).here:
        return script("sql", select, Target("", None, target), replace=False, transaction=False).text
    name = source_name if mode == "in_place" else output_name(spec, source_name)
    return script(mode, select, Target(name, spec.source.schema if schema is None else schema, target),
                  replace=spec.output.replace,
                  transaction=target.transactional_ddl).text


class TableWriter:
    """Writes a table whose rows the engine cannot produce from the source alone (noise drawn in
    numpy and attached to the rows): created under its own or a staging name, then moved into
    place through the same skeletons as every other output."""

    def __init__(self, engine: Engine, schema: str | None) -> None:
        self.engine = engine
        self.schema = schema

    def _target(self, name: str) -> Target:
        return Target(name, self.schema, self.engine.dialect)

    def create(self, name: str, query: exp.Expression) -> None:
        """``CREATE TABLE name AS query``."""
        target = self._target(name)
        run(self.engine, render_statements("create_table", target.dialect, relation=target.sql(),
                                           select=render(adapt(query, target.dialect), target.dialect,
                                                         pretty=True)).statements)

    @property
    def swaps_in_steps(self) -> bool:
        """Whether replacing a table takes :meth:`replace_in_steps` (no transaction can hold the drop
        and the rename)."""
        return not self.engine.capabilities.atomic_rename

    def replace_in_steps(self, name: str, query: exp.Expression) -> None:
        """Replace the table ``name`` by ``query``'s rows in recorded steps a later run completes or
        undoes (:func:`~sqlanon.engines.swap.replace_table`)."""
        replace_table(self.engine, name, query, schema=self.schema)

    def move_into_place(self, staging: str, name: str, *, replace: bool) -> None:
        """Rename ``staging`` to ``name``, dropping the old ``name`` first when ``replace``; inside
        the caller's transaction."""
        target = self._target(name)
        run(self.engine, render_statements("rename_table", target.dialect, relation=target.sql(),
                                           staging_relation=target.sql(staging),
                                           relation_name=target.sql(qualified=False),
                                           replace=replace).statements)
