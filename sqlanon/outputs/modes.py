"""The output modes: a new table, a view, the source replaced in place, or SQL text.

Each mode renders a skeleton from ``sql_templates/`` around the one output statement
(:func:`~sqlanon.outputs.query.output_query`). On an engine the skeleton's statements run inside one
transaction; printed for a dialect, the skeleton carries its own ``BEGIN``/``COMMIT`` where the
target has transactional DDL.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from sqlanon.sql.dialects import DialectProfile, adapt
from sqlanon.sql.render import render
from sqlanon.sql.nodes import table
from sqlanon.methods.dataset import Dataset
from sqlanon.engines.base import Engine
from sqlanon.outputs.preflight import OutputPlan, output_name, plan_output, sql_path
from sqlanon.outputs.query import OutputQuery
from sqlanon.outputs.scripts import render_script, split_statements
from sqlanon.spec.schema import Spec
from sqlanon.engines.staging import staging_name


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


SELECT_SLOT = "__sa_output_select__"
"""Stands for the output SELECT while a skeleton is rendered and split into statements: the SELECT
(one statement, possibly megabytes of inline VALUES) is never tokenized again."""


@dataclass(frozen=True)
class Script:
    """A mode's statements: the skeleton's, with the output SELECT in the one that holds it."""

    skeleton: list[str]
    select: str

    def statements(self) -> list[str]:
        return [s.replace(SELECT_SLOT, self.select) if SELECT_SLOT in s else s for s in self.skeleton]


def script_text(mode: str, oq: OutputQuery, target: Target, *, replace: bool, transaction: bool) -> str:
    """The SQL that realizes ``mode`` (table, view, in_place, or a bare SELECT) on ``target``."""
    return _skeleton(mode, target, replace=replace, transaction=transaction).replace(
        SELECT_SLOT, _select(oq, target))


def script_for(mode: str, oq: OutputQuery, target: Target, *, replace: bool, transaction: bool) -> Script:
    """The statements that realize ``mode`` on ``target``, split without re-reading the SELECT."""
    skeleton = _skeleton(mode, target, replace=replace, transaction=transaction)
    return Script(split_statements(skeleton, target.dialect), _select(oq, target))


def _select(oq: OutputQuery, target: Target) -> str:
    return render(adapt(oq.query, target.dialect), target.dialect, pretty=True)


def _skeleton(mode: str, target: Target, *, replace: bool, transaction: bool) -> str:
    select = SELECT_SLOT
    if mode == "view":
        return render_script("replace_view" if replace else "create_view", target.dialect,
                             relation=target.sql(), select=select, transaction=transaction)
    if mode in ("table", "in_place"):
        if mode == "table" and not replace:
            return render_script("create_table", target.dialect, relation=target.sql(), select=select)
        return render_script("replace_table", target.dialect, relation=target.sql(),
                             staging_relation=target.sql(target.staging),
                             relation_name=target.sql(qualified=False), select=select,
                             transaction=transaction)
    return render_script("select", target.dialect, select=select)


def run_script(engine: Engine, script: Script) -> None:
    """Run a script's statements in one transaction: all of them take effect, or none."""
    with engine.transaction():
        for statement in script.statements():
            engine.execute_script(statement)


def _summary(spec: Spec, oq: OutputQuery, mode: str, **extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"mode": mode, **extra, "suppressed": spec.transformation.suppressed}
    if oq.dropped:
        out["dropped_columns"] = list(oq.dropped)
    if oq.warnings:
        out["warnings"] = oq.warnings
    return out


def write_relation(spec: Spec, ds: Dataset, oq: OutputQuery, kind: str,
                   plan: OutputPlan | None = None) -> dict[str, Any]:
    """A new table or view (``kind``) in the source's schema; an existing one only with
    ``output.replace`` (checked by :func:`~sqlanon.outputs.preflight.plan_output`)."""
    plan = plan or plan_output(spec, ds)
    assert plan.name is not None
    target = Target(plan.name, ds.schema, ds.engine.dialect)
    run_script(ds.engine, script_for(kind, oq, target, replace=plan.exists, transaction=False))
    return _summary(spec, oq, kind, relation=plan.name,
                    rows=ds.engine.row_count(plan.name, schema=ds.schema))


def write_table(spec: Spec, ds: Dataset, oq: OutputQuery, plan: OutputPlan | None = None
                ) -> dict[str, Any]:
    return write_relation(spec, ds, oq, "table", plan)


def write_view(spec: Spec, ds: Dataset, oq: OutputQuery, plan: OutputPlan | None = None
               ) -> dict[str, Any]:
    return write_relation(spec, ds, oq, "view", plan)


def write_in_place(spec: Spec, ds: Dataset, oq: OutputQuery, plan: OutputPlan | None = None
                   ) -> dict[str, Any]:
    """The source replaced by the output in one transaction (views over it refused beforehand)."""
    if plan is None:
        plan_output(spec, ds)
    target = Target(ds.name, ds.schema, ds.engine.dialect)
    run_script(ds.engine, script_for("in_place", oq, target, replace=True, transaction=False))
    return _summary(spec, oq, "in_place", relation=ds.name,
                    rows=ds.engine.row_count(ds.name, schema=ds.schema))


def write_sql(spec: Spec, oq: OutputQuery, target: DialectProfile) -> dict[str, Any]:
    text = script_text("sql", oq, Target("", None, target), replace=False, transaction=False)
    path = sql_path(spec)
    if path is not None:
        path.write_text(text, encoding="utf-8")
        return _summary(spec, oq, "sql", dialect=target.name, path=str(path))
    return _summary(spec, oq, "sql", dialect=target.name, sql=text)


WRITERS = {"table": write_table, "view": write_view, "in_place": write_in_place}
"""The writers of the modes that write into the source's database."""


def compile_script(spec: Spec, oq: OutputQuery, target: DialectProfile, *, source_name: str,
                   schema: str | None = None) -> str:
    """The SQL that the spec's output mode would run, for ``target``; a bare SELECT for ``sql``/``none``.

    ``source_name`` is the source relation's name (the in-place target, and the default output's
    stem); ``schema`` the source's schema, where the output goes (default ``source.schema``).
    """
    mode = spec.output.mode
    if mode not in ("table", "view", "in_place"):
        return script_text("sql", oq, Target("", None, target), replace=False, transaction=False)
    name = source_name if mode == "in_place" else output_name(spec, source_name)
    return script_text(mode, oq, Target(name, spec.source.schema if schema is None else schema, target),
                      replace=spec.output.replace or mode == "in_place",
                      transaction=target.transactional_ddl)
