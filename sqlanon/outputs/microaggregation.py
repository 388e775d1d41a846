"""Writing microaggregated rows: the output modes of ``method: microaggregation``.

SQL methods (individual ranking, projection) are one SELECT over the source and go through the same
modes as generalization. Pulled algorithms (MDAV, ...) read a group table (:mod:`sqlanon.microagg.pipeline`):

* ``table`` and ``in_place`` read a temporary group table while the statement runs (``in_place`` in one
  transaction, as for generalization); it is dropped after.
* ``view`` and ``sql`` need the group table for as long as the view or the printed SQL is used: it is
  created as a real table ``<output name>__groups`` in the source's database, together with the view
  in one transaction. ``output.replace`` replaces both. The printed SQL of mode ``sql`` reads that table;
  to run it on another system, copy the table there under the same name.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlanon.compile.dialects import profile
from sqlanon.dataset import Dataset
from sqlanon.errors import SpecError
from sqlanon.microagg import pipeline
from sqlanon.outputs import modes
from sqlanon.outputs.scripts import split_statements
from sqlanon.spec.schema import Spec
from sqlanon.staging import remove_leftovers


def _refuse_existing(spec: Spec, ds: Dataset, name: str, what: str) -> bool:
    exists = ds.engine.relation_exists(name)
    if exists and not spec.output.replace:
        raise SpecError(f"{name!r} already exists; sqlanon does not overwrite it unless `output.replace:"
                        f" true` is set (or choose another output.name for the {what})",
                        path="output.name", source=spec.path)
    return exists


Inspect = Callable[[pipeline.Masking], None]


def _without_suppression(summary: dict[str, Any]) -> dict[str, Any]:
    """Microaggregation suppresses nothing: the generalization summary's ``suppressed`` is left out."""
    return {k: v for k, v in summary.items() if k != "suppressed"}


def write(spec: Spec, ds: Dataset, *, progress: bool = False, before: Inspect | None = None
          ) -> tuple[pipeline.Masking, dict[str, Any]]:
    """Group the rows and write the spec's output; ``before`` sees the masking before anything is
    written (while the source is still the original, for the report's metrics). Returns the masking;
    its temporary group table is still present (drop it with :func:`pipeline.drop_group_table`)."""
    mode = spec.output.mode
    removed = remove_leftovers(ds.engine) if mode not in ("none", "sql") else []
    m, summary = _write(spec, ds, progress=progress, before=before or (lambda m: None))
    if removed:
        summary["staging_removed"] = removed
    return m, summary


def _write(spec: Spec, ds: Dataset, *, progress: bool, before: Inspect
           ) -> tuple[pipeline.Masking, dict[str, Any]]:
    mode = spec.output.mode
    settings = spec.microaggregation
    if mode in ("none", "table", "in_place") or settings.in_sql:
        if mode in ("table", "view"):
            _refuse_existing(spec, ds, modes.output_name(spec, ds), mode)
        if mode == "in_place" and spec.source.file:
            raise SpecError("in_place replaces a database table; a file source is never written. Use "
                            "mode table (with output.database) or sql", path="output.mode",
                            source=spec.path)
        m = pipeline.prepare(spec, ds, progress=progress)
        try:
            before(m)
        except BaseException:
            pipeline.drop_group_table(ds, m)
            raise
        if mode == "none":
            return m, {"mode": "none"}
        target = profile(spec.output.dialect) if mode == "sql" else ds.engine.dialect
        oq = pipeline.output_query(spec, m, target)
        if mode == "sql":
            return m, _without_suppression(modes.write_sql(spec, oq, target))
        writer = {"table": modes.write_table, "view": modes.write_view, "in_place": modes.write_in_place}
        return m, _without_suppression(writer[mode](spec, ds, oq))
    return _write_with_group_table(spec, ds, progress=progress, before=before)


def _write_with_group_table(spec: Spec, ds: Dataset, *, progress: bool, before: Inspect
                            ) -> tuple[pipeline.Masking, dict[str, Any]]:
    mode = spec.output.mode
    engine = ds.engine
    name = modes.output_name(spec, ds)
    groups = name + pipeline.GROUPS_SUFFIX
    if spec.source.file and getattr(engine, "database", None) == ":memory:":
        raise SpecError(f"the SQL of algorithm {spec.microaggregation.algorithm} reads its group table "
                        f"{groups!r}, which would be created in an in-memory database that disappears; "
                        "set output.database to a DuckDB file (or use mode table)",
                        path="output.database", source=spec.path)
    view_exists = mode == "view" and _refuse_existing(spec, ds, name, "view")
    groups_exist = _refuse_existing(spec, ds, groups, "group table")
    with engine.transaction():
        if view_exists:
            engine.drop(name, kind="VIEW")
        if groups_exist:
            engine.drop(groups)
        m = pipeline.prepare(spec, ds, group_table=groups, temporary=False, progress=progress)
        before(m)
        target = profile(spec.output.dialect) if mode == "sql" else engine.dialect
        oq = pipeline.output_query(spec, m, target)
        if mode == "view":
            script = modes.script_for("view", oq, modes.Target(name, spec.source.schema, engine.dialect),
                                      replace=False, transaction=False)
            for statement in split_statements(script, engine.dialect):
                engine.execute(statement)
    m.group_table = None  # persistent: not dropped after the report
    if mode == "view":
        out: dict[str, Any] = {"mode": "view", "relation": name, "rows": engine.row_count(name)}
        if oq.dropped:
            out["dropped_columns"] = list(oq.dropped)
        if oq.warnings:
            out["warnings"] = oq.warnings
    else:
        out = _without_suppression(modes.write_sql(spec, oq, target))
    out["group_table"] = groups
    return m, out
