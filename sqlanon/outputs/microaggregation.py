"""Writing microaggregated rows: the output modes of ``method: microaggregation``.

SQL methods (individual ranking, projection) are one SELECT over the source and go through the same
modes as generalization. Pulled algorithms (MDAV, ...) read a group table
(:mod:`sqlanon.methods.microaggregation.pipeline`):

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

from sqlanon.sql.dialects import profile
from sqlanon.methods.dataset import Dataset
from sqlanon.methods.microaggregation import pipeline
from sqlanon.outputs import modes
from sqlanon.outputs.preflight import OutputPlan, keeps_group_table, output_name, plan_output
from sqlanon.spec.schema import Spec
from sqlanon.engines.staging import remove_leftovers


Inspect = Callable[[pipeline.Masking], None]


def _without_suppression(summary: dict[str, Any]) -> dict[str, Any]:
    """Microaggregation suppresses nothing: the generalization summary's ``suppressed`` is left out."""
    return {k: v for k, v in summary.items() if k != "suppressed"}


def write(spec: Spec, ds: Dataset, *, progress: bool = False, before: Inspect | None = None,
          plan: OutputPlan | None = None) -> tuple[pipeline.Masking, dict[str, Any]]:
    """Group the rows and write the spec's output; ``before`` sees the masking before anything is
    written (while the source is still the original, for the report's metrics). ``plan`` is the
    output checked before the source was scanned (checked now when not given). Returns the masking;
    its temporary group table is still present (drop it with :func:`pipeline.drop_group_table`)."""
    mode = spec.output.mode
    removed = remove_leftovers(ds.engine) if mode not in ("none", "sql") else []
    m, summary = _write(spec, ds, progress=progress, before=before or (lambda m: None), plan=plan)
    if removed:
        summary["staging_removed"] = removed
    return m, summary


def _write(spec: Spec, ds: Dataset, *, progress: bool, before: Inspect, plan: OutputPlan | None
           ) -> tuple[pipeline.Masking, dict[str, Any]]:
    mode = spec.output.mode
    plan = plan or plan_output(spec, ds)
    if not keeps_group_table(spec):
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
        return m, _without_suppression(modes.WRITERS[mode](spec, ds, oq, plan))
    return _write_with_group_table(spec, ds, plan, progress=progress, before=before)


def _write_with_group_table(spec: Spec, ds: Dataset, plan: OutputPlan, *, progress: bool,
                            before: Inspect) -> tuple[pipeline.Masking, dict[str, Any]]:
    mode = spec.output.mode
    engine = ds.engine
    name = output_name(spec, ds)
    groups = plan.group_table
    assert groups is not None
    with engine.transaction():
        if mode == "view" and plan.exists:
            engine.drop(name, kind="VIEW", schema=ds.schema)
        if plan.group_table_exists:
            engine.drop(groups, schema=ds.schema)
        m = pipeline.prepare(spec, ds, group_table=groups, group_schema=ds.schema, temporary=False,
                             progress=progress)
        before(m)
        target = profile(spec.output.dialect) if mode == "sql" else engine.dialect
        oq = pipeline.output_query(spec, m, target)
        if mode == "view":
            script = modes.script_for("view", oq, modes.Target(name, ds.schema, engine.dialect),
                                      replace=False, transaction=False)
            for statement in script.statements():
                engine.execute(statement)
    m.group_table = None  # persistent: not dropped after the report
    if mode == "view":
        out: dict[str, Any] = {"mode": "view", "relation": name,
                               "rows": engine.row_count(name, schema=ds.schema)}
        if oq.dropped:
            out["dropped_columns"] = list(oq.dropped)
        if oq.warnings:
            out["warnings"] = oq.warnings
    else:
        out = _without_suppression(modes.write_sql(spec, oq, target))
    out["group_table"] = groups
    return m, out
