"""The one runner: a :class:`~sqlanon.methods.base.Plan` executed on one engine.

It opens the spec's source, lets the output side check the output before anything is scanned
(when the verb writes or compiles), refuses a source without rows where the method needs rows, and
runs the method; the source (and an engine it opened) is closed after.
"""

from __future__ import annotations

from typing import Any, Protocol

from sqlglot import exp

from sqlanon.engines.base import Engine
from sqlanon.errors import SpecError, UnsupportedError
from sqlanon.methods.base import Plan, Sink
from sqlanon.methods.dataset import Dataset, open_dataset
from sqlanon.spec.schema import Spec


class RunObserver(Protocol):
    """Reads the source before the method runs, what the method checked while its working state is
    open, and the method's result (and output) after it, on the same connection: the HTML report's
    figures (``Plan.options["observer"]``)."""

    def opened(self, ds: Dataset) -> None: ...

    def checked(self, ds: Dataset, checked: Any) -> None:
        """Called by a method that checks a transformation, once, with the checked result while its
        evaluator is open (a generalization: its
        :class:`~sqlanon.methods.generalization.method.CheckedNode`), before the output is written."""

    def finished(self, ds: Dataset, result: Any) -> None: ...


def run_plan(plan: Plan, sink: Sink, *, engine: Engine | None = None, database: str | None = None
             ) -> Any:
    """Run ``plan`` on ``engine`` (or the spec's database, or ``database``); the method's result."""
    spec = plan.spec
    ds = open_dataset(spec, engine, database=database)
    try:
        if ds.owns_engine:  # closed below, when the plan has run
            ds.engine.closes_after_run()
        require_capabilities(plan, ds.engine)
        if plan.writes:
            sink.check(ds)  # the output is checked before the source is read
        if plan.method.requires_rows:
            require_rows(spec, ds)
        if ds.owns_engine:
            ds.engine.sized_for(ds.relation)
        observer: RunObserver | None = plan.option("observer")
        if observer is not None:
            observer.opened(ds)
        result = plan.method.run(plan, ds, sink)
        if observer is not None:
            observer.finished(ds, result)
        return result
    finally:
        ds.close()


def require_capabilities(plan: Plan, engine: Engine) -> None:
    """Refuse an engine that lacks every capability of a group the plan needs, naming the method."""
    for group in plan.requires:
        if not any(getattr(engine.capabilities, capability) for capability in group):
            raise UnsupportedError(f"method {plan.method.name} needs an engine that declares "
                                   f"{' or '.join(group)}; {engine.name} declares "
                                   f"{', '.join(engine.capabilities.declared()) or 'none'}")


def require_rows(spec: Spec, ds: Dataset) -> None:
    """Refuse a source without rows.

    An empty table is an error rather than trivially anonymous: there is nothing to release, and
    every figure of the report (suppression limit, loss, class sizes) is a ratio over no rows.
    """
    with ds.engine.purpose("count the source's rows"):
        _, rows = ds.engine.fetch(exp.select(exp.Literal.number(1)).from_(ds.relation.copy()).limit(1))
    if not rows:
        where = "source.file" if spec.source.file else "source.table"
        raise SpecError(f"{ds.name!r} has no rows: there is nothing to anonymize", path=where,
                        source=spec.path)
