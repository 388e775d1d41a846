"""Run ``sqlanon`` with its main steps timed, for ``bench/end_to_end.py``'s split of the process.

``python -m bench.phases anonymize spec.yaml --json`` runs the command line as ``python -m sqlanon``
would, with wrappers around a few functions; the seconds spent in each (inclusive) are written as one
JSON object to standard error. Only the split comes from this run: the whole process is timed
without wrappers.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from typing import Any

SPENT: dict[str, float] = {}


def timed(owner: Any, name: str, step: str) -> None:
    """Replace ``owner.name`` by a wrapper adding its seconds to ``SPENT[step]``."""
    inner: Callable[..., Any] = getattr(owner, name)

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return inner(*args, **kwargs)
        finally:
            SPENT[step] = SPENT.get(step, 0.0) + time.perf_counter() - start

    setattr(owner, name, wrapper)


def main() -> int:
    started = time.perf_counter()
    import sqlanon.cli.main as cli
    import sqlanon.spec.load as spec_load
    from sqlanon.methods.generalization import result
    from sqlanon.methods.generalization.evaluator import Evaluator
    from sqlanon.methods.generalization.search import run
    from sqlanon.methods.generalization.search.fast import FastEvaluator
    from sqlanon.outputs.sink import OutputSink

    SPENT["import"] = time.perf_counter() - started
    timed(spec_load, "load_spec", "spec and hierarchies")
    timed(FastEvaluator, "_load", "search: load")
    timed(run, "search_spec", "search: load and search")
    timed(Evaluator, "__init__", "evaluators (node scan)")
    timed(Evaluator, "check", "node check")
    timed(result, "measured", "metrics")
    timed(OutputSink, "write", "output")
    start = time.perf_counter()
    code = cli.main(sys.argv[1:])
    SPENT["command"] = time.perf_counter() - start
    print(json.dumps(SPENT), file=sys.stderr)
    return code


if __name__ == "__main__":
    raise SystemExit(main())
