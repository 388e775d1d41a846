"""A noise release drawn for the HTML report of a run that writes nothing (``check --html``,
``sqlanon report``): the noisy rows go to a scratch table beside the source, the report's figures
and the utility metrics are read from it, and it is dropped. DP mechanisms are refused: the figures
of a draw that is not the release would spend privacy budget on nothing published."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlglot import exp

from sqlanon.errors import InternalError
from sqlanon.sql.nodes import internal, table

if TYPE_CHECKING:
    from sqlanon.methods.base import Plan, Release, Sink, TableWriter
    from sqlanon.methods.dataset import Dataset


@dataclass(frozen=True)
class DrawnRows:
    """The released rows the run's observer reads (``checked.query``)."""

    query: exp.Select


class _Scratch:
    """The run's sink, with a scratch table as the destination: nothing of the spec's output."""

    def __init__(self, sink: Sink, name: str) -> None:
        self.sink, self.name = sink, name

    def destination(self) -> tuple[str, bool]:
        return self.name, False

    def tables(self, ds: Dataset) -> TableWriter:
        return self.sink.tables(ds)

    def check(self, ds: Dataset) -> Any:
        return None

    def before_write(self, result: Any) -> None:
        return None

    def write(self, ds: Dataset, release: Release) -> dict[str, Any]:
        raise InternalError("a noise draw for a report writes only its scratch table")

    def compile(self, ds: Dataset, release: Release) -> str:
        raise InternalError("a noise draw for a report has no SQL to print")

    def beside(self, name: str) -> Sink:
        raise InternalError("a noise draw for a report writes nothing beside its scratch table")


def drawn_for_report(plan: Plan, ds: Dataset, sink: Sink) -> Any:
    """Draw the noise into a scratch table, show the rows to the run's observer, drop the table;
    the report has the metrics and no output."""
    from sqlanon.methods.perturbation.apply import run_noise

    observer = plan.option("observer")
    if observer is None:
        raise InternalError("a noise spec is checked only for an HTML report")
    name = internal(f"report_{uuid.uuid4().hex[:12]}")
    try:
        report = run_noise(plan.spec, ds, _Scratch(sink, name), quality=plan.option("metrics") != ())
        observer.checked(ds, DrawnRows(exp.select(exp.Star()).from_(table(name, ds.schema))))
    finally:
        ds.engine.drop(name, schema=ds.schema)
    report.outputs = {}
    return report
