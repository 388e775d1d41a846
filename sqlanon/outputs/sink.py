"""The output side of a run (:class:`~sqlanon.methods.base.Sink`): the pre-flight output check and
the writer, handed to a method so that it never imports them."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sqlanon.engines.base import Engine
from sqlanon.methods.base import Release
from sqlanon.methods.dataset import Dataset
from sqlanon.outputs import writer
from sqlanon.outputs.preflight import OutputPlan, check_before_opening, plan_output
from sqlanon.spec.schema import Spec
from sqlanon.sql.dialects import profile


class OutputSink:
    """Writes the spec's output (``dialect`` None), or compiles it for ``dialect``."""

    def __init__(self, spec: Spec, *, dialect: str | None = None,
                 before_write: Callable[[Any], None] | None = None) -> None:
        self.spec = spec
        self.dialect = dialect
        self.plan: OutputPlan | None = None
        self._before_write = before_write

    @staticmethod
    def check_before_opening(spec: Spec, engine: Engine | None, database: str | None) -> None:
        """What can be refused before the source is opened (a file source's output, ``output.path``)."""
        check_before_opening(spec, engine, database)

    def check(self, ds: Dataset) -> OutputPlan:
        if self.dialect is None:
            self.plan = plan_output(self.spec, ds)
        else:
            self.plan = plan_output(self.spec, ds, profile(self.dialect), writing=False)
        return self.plan

    def destination(self) -> tuple[str, bool]:
        assert self.plan is not None and self.plan.name is not None
        return self.plan.name, self.plan.exists

    def write(self, ds: Dataset, release: Release) -> dict[str, Any]:
        return writer.write(self.spec, ds, release, self.plan)

    def compile(self, ds: Dataset, release: Release) -> str:
        target = profile(self.dialect or self.spec.output.dialect)
        return writer.compile_script(self.spec, release.query(target), target, source_name=ds.name,
                                     schema=ds.schema)

    def tables(self, ds: Dataset) -> writer.TableWriter:
        return writer.TableWriter(ds.engine, ds.schema)

    def before_write(self, result: Any) -> None:
        if self._before_write is not None:
            self._before_write(result)

    def beside(self, name: str) -> OutputSink:
        """The sink of a relation named ``name`` written beside the output: a table beside an
        in-place output, else the same mode; printed SQL goes to ``<name>.sql`` beside
        ``output.path``."""
        out = self.spec.output
        path = None if out.path is None else str(Path(out.path).with_name(f"{name}{Path(out.path).suffix}"))
        output = dataclasses.replace(out, mode="table" if out.mode == "in_place" else out.mode,
                                     name=name, path=path)
        return OutputSink(dataclasses.replace(self.spec, output=output), dialect=self.dialect)
