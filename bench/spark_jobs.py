"""Which calls of the Spark engine run Spark jobs during ``check``, ``apply`` and ``anonymize``.

``python -m bench.spark_jobs [--limit 0.02] [--verb anonymize] [--models k-l-alpha-p-risk]`` loads
Adult into a local[2] session (the test suite's settings: one shuffle partition, no adaptive
execution), runs the verb once to warm the JVM, then once more with every call of the engine that
reaches Spark wrapped: each outermost call gets its own job group, and the script prints per call
its seconds, the Spark jobs it ran and its statement's first characters, then totals per call kind.
"""

from __future__ import annotations

import argparse
import itertools
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from bench.grow_adult import QIS
from sqlanon import api
from sqlanon.engines.spark import SparkEngine
from sqlanon.spec import spec_from_dict

ADULT = Path(__file__).resolve().parents[2] / "shared" / "data" / "adult"
OCCUPATION = "occupation"
MODELS: dict[str, list[dict[str, Any]]] = {
    "k": [{"k_anonymity": {"k": 5}}],
    "k-l-alpha-p-risk": [
        {"k_anonymity": {"k": 5}},
        {"l_diversity": {"attribute": OCCUPATION, "l": 2}},
        {"alpha_k_anonymity": {"attribute": OCCUPATION, "alpha": 0.8, "k": 2}},
        {"p_sensitive_k_anonymity": {"attribute": OCCUPATION, "k": 2, "p": 2}},
        {"average_risk": {"threshold": 0.05}}],
    "entropy-recursive-t": [
        {"l_diversity": {"attribute": OCCUPATION, "l": 2.5, "variant": "entropy"}},
        {"l_diversity": {"attribute": OCCUPATION, "l": 3, "variant": "recursive", "c": 4}},
        {"t_closeness": {"attribute": OCCUPATION, "t": 0.3}},
        {"t_closeness": {"attribute": OCCUPATION, "t": 0.3, "distance": "hierarchical"}}],
    "disclosure-likeness": [
        {"k_anonymity": {"k": 2}},
        {"delta_disclosure": {"attribute": OCCUPATION, "delta": 3}},
        {"beta_likeness": {"attribute": OCCUPATION, "beta": 3}},
        {"beta_likeness": {"attribute": OCCUPATION, "beta": 3, "variant": "enhanced"}}],
}
WRAPPED = ("execute", "fetch", "fetch_arrow", "fetch_numpy", "fetch_one", "fetch_dicts", "columns",
           "relation_exists", "schema_exists", "row_count", "create_table_as", "create_view", "drop",
           "insert_rows", "execute_script", "fetch_script", "create_table_from_arrow", "register_file")


class JobCounter:
    """Wraps an engine's calls; each outermost call runs in a job group of its own."""

    def __init__(self, engine: SparkEngine) -> None:
        self.sc = engine.session.sparkContext
        self.calls: list[tuple[str, float, int, str]] = []
        self._depth = 0
        self._ids = itertools.count()
        for name in WRAPPED:
            self._wrap(engine, name)

    def _wrap(self, engine: SparkEngine, name: str) -> None:
        inner = getattr(engine, name)

        def wrapper(*args: Any, **kwargs: Any) -> Any:
            if self._depth:
                return inner(*args, **kwargs)
            group = f"call{next(self._ids)}"
            self.sc.setJobGroup(group, name)
            self._depth += 1
            start = time.perf_counter()
            try:
                return inner(*args, **kwargs)
            finally:
                self._depth -= 1
                seconds = time.perf_counter() - start
                jobs = len(self.sc.statusTracker().getJobIdsForGroup(group))
                what = args[0] if args else ""
                text = engine.sql(what) if hasattr(what, "sql") else str(what)
                self.calls.append((name, seconds, jobs, " ".join(text.split())[:110]))

        setattr(engine, name, wrapper)


def spec(verb: str, models: list[dict[str, Any]], limit: float, levels: dict[str, int] | None
         ) -> dict[str, Any]:
    attributes: dict[str, Any] = {q: {"role": "quasi_identifier", "hierarchy": {
        "csv": str(ADULT / f"adult_hierarchy_{q}.csv")}} for q in QIS}
    attributes[OCCUPATION] = {"role": "sensitive", "hierarchy": {
        "csv": str(ADULT / f"adult_hierarchy_{OCCUPATION}.csv")}}
    transformation: dict[str, Any] = {"suppression_limit": limit}
    if levels is None:
        transformation.update(search="optimal", metric="loss")
    else:
        transformation["levels"] = levels
    output = {"mode": "table", "name": "released", "replace": True} if verb != "check" \
        else {"mode": "none"}
    return {"source": {"table": "adult"}, "attributes": attributes, "privacy": models,
            "transformation": transformation, "metrics": ["loss", "discernibility"], "output": output}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--verb", choices=("anonymize", "check", "apply"), default="anonymize")
    parser.add_argument("--models", choices=sorted(MODELS), default="k-l-alpha-p-risk")
    parser.add_argument("--limit", type=float, default=0.02)
    parser.add_argument("--all-calls", action="store_true", help="print calls without jobs too")
    args = parser.parse_args()
    import duckdb

    from tests.spark_session import start

    warehouse = Path(tempfile.mkdtemp(prefix="spark_jobs_"))
    session = start(warehouse)
    engine = SparkEngine(session=session)
    data = duckdb.connect().read_csv(str(ADULT / "adult.csv"), sep=";", header=True,
                                     all_varchar=True).to_arrow_table()
    engine.create_table_from_arrow("adult", data)
    levels = None if args.verb == "anonymize" else {"sex": 1, "age": 3, "race": 1, "marital-status": 1,
                                                     "education": 2, "native-country": 2,
                                                     "workclass": 1, "salary-class": 0}
    run = getattr(api, args.verb)
    the_spec = spec_from_dict(spec(args.verb, MODELS[args.models], args.limit, levels))
    try:
        start_warm = time.perf_counter()
        run(the_spec, engine=engine)
        warm = time.perf_counter() - start_warm
        counter = JobCounter(engine)
        started = time.perf_counter()
        run(the_spec, engine=engine)
        total = time.perf_counter() - started
        kinds: Counter[str] = Counter()
        seconds: Counter[str] = Counter()
        for name, s, jobs, text in counter.calls:
            kinds[name] += jobs
            seconds[name] += s
            if jobs or args.all_calls:
                print(f"{s:7.3f} s {jobs:3d} jobs  {name:<14} {text}")
        print(f"\n{args.verb} {args.models} at {args.limit:g}: {total:.2f} s (warm-up run {warm:.2f} s), "
              f"{sum(kinds.values())} Spark jobs in {len(counter.calls)} engine calls")
        for name in sorted(seconds, key=lambda k: -seconds[k]):
            print(f"  {name:<16} {seconds[name]:7.3f} s {kinds[name]:4d} jobs")
    finally:
        session.stop()


if __name__ == "__main__":
    main()
