"""The output of a table in memory: the verb runs on the data registered in an embedded DuckDB of
its own, and the output comes back to the caller as the kind of the input (docs/spec.md, in-memory
data)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from sqlanon.engines.frames import registered
from sqlanon.errors import UnsupportedError
from sqlanon.outputs.preflight import output_name
from sqlanon.spec.in_memory import spec_for_data


@dataclass(eq=False)  # a DataFrame has no truth value to compare by
class Result:
    """What ``apply`` and ``anonymize`` return for in-memory ``data``: the output as the kind of the
    input (pandas, polars, Arrow; None when nothing was written: ``dry_run``, mode ``none``) and the
    verb's report. It unpacks as ``data, report``."""

    data: Any
    report: Any
    beside: dict[str, Any] = field(default_factory=dict)
    """Relations written beside the output (Anatomy's sensitive table), by name, as the same kind."""

    def __iter__(self) -> Iterator[Any]:
        return iter((self.data, self.report))

    def _repr_html_(self) -> str:
        """In a notebook: the report's HTML report."""
        return str(self.report._repr_html_())


def run_on_data(verb: Callable[..., Any], spec: Any, data: Any, *, engine: Any = None,
                database: str | None = None, writes: bool = True, **options: Any) -> Any:
    """``verb(spec, engine=..., **options)`` on ``data``; a :class:`Result` when the verb ``writes``
    an output, else the verb's report."""
    if engine is not None or database is not None:
        raise UnsupportedError("in-memory data runs in an embedded DuckDB of its own: leave out "
                               "engine and database")
    spec = spec_for_data(spec)
    name = spec.source.relation_name
    with registered(data, name) as source:
        report = verb(spec, engine=source.engine, **options)
        if not writes:
            return report
        output = output_name(spec, name)
        written = spec.output.mode == "table" and source.engine.relation_exists(output)
        beside = [o["relation"] for o in getattr(report, "outputs", {}).values()
                  if isinstance(o, dict) and o.get("mode") == "table" and "relation" in o] if written else []
        return Result(source.fetch(output) if written else None, report,
                      {name: source.fetch(name) for name in beside})
