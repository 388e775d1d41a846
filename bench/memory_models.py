"""The optimal search with δ-disclosure, β-likeness, (k,e)-, (k,p,q,r)-anonymity and δ-presence: nodes
checked in SQL against nodes checked in memory, on DuckDB, in one run.

``python -m bench.memory_models --runs 3`` (``--only presence``: the problems whose name holds the
text). Three problems: Adult (8 QIs, sensitive occupation) with k = 2, 3-disclosure privacy and basic
and enhanced 3-likeness; creditcard (8 QIs, sensitive PAY_5 read as a number) with k = 5,
(3, 2)-anonymity and (2, 2, 0.01, 0.01)-anonymity; Adult with k = 2 and (0, 0.5)-presence of the
research subset of its rows earning >50K (7,508 rows; Loss then counts the subset's rows, as ARX's
quality models do). All at 2 % suppression, metric Loss. Each run builds a new evaluator (the in-memory check
includes its one read of the table); runs alternate SQL, memory. The script prints the medians, their
ratio and the nodes checked, and fails if the two choose different nodes or values.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sqlanon.domain.hierarchy import Hierarchy, read_arx_csv
from sqlanon.domain.models.disclosure import BetaLikeness, DeltaDisclosure
from sqlanon.domain.models.k_anonymity import KAnonymity
from sqlanon.domain.models.numeric_sensitive import KEAnonymity, KPQRAnonymity
from sqlanon.domain.models.presence import DeltaPresence
from sqlanon.engines.duckdb import DuckDBEngine
from sqlanon.methods.generalization.evaluator import Evaluator, Problem
from sqlanon.methods.generalization.search import SqlNodeEvaluator, lattice_of, search
from sqlanon.methods.generalization.search.fast import FastNodeEvaluator
from sqlanon.sql.nodes import table

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
ADULT_QIS = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass",
             "salary-class"]
CC_QIS = ["LIMIT_BAL", "SEX", "EDUCATION", "MARRIAGE", "AGE", "PAY_0", "PAY_2", "PAY_3"]
LIMIT = 0.02


def problems(engine: DuckDBEngine) -> dict[str, Problem]:
    adult, cc = DATA / "adult", DATA / "creditcard"
    engine.con.execute("CREATE TABLE adult AS SELECT * FROM read_csv(?, delim=';', header=true, "
                       "all_varchar=true)", [str(adult / "adult.csv")])
    engine.con.execute("""CREATE TABLE adult_research AS SELECT * FROM adult WHERE "salary-class" = '>50K'""")
    engine.con.execute("CREATE TABLE cc AS SELECT * REPLACE (CAST(PAY_5 AS BIGINT) AS PAY_5) FROM "
                       "read_csv(?, delim=';', header=true, all_varchar=true)",
                       [str(cc / "creditcard_int.csv")])
    hierarchies: dict[str, Hierarchy] = {q: read_arx_csv(adult / f"adult_hierarchy_{q}.csv")
                                         for q in ADULT_QIS}
    return {
        "adult: k=2, δ-presence (0, 0.5) of the >50K rows": Problem(
            engine, table("adult"), ADULT_QIS, hierarchies, [],
            [KAnonymity(2), DeltaPresence("adult_research", 0.0, 0.5)]),
        "adult: k=2, δ-disclosure, β-likeness (basic, enhanced)": Problem(
            engine, table("adult"), ADULT_QIS,
            hierarchies, ["occupation"],
            [KAnonymity(2), DeltaDisclosure("occupation", 3.0), BetaLikeness("occupation", 3.0),
             BetaLikeness("occupation", 3.0, variant="enhanced")]),
        "creditcard: k=5, (k,e), (k,p,q,r)": Problem(
            engine, table("cc"), CC_QIS,
            {q: read_arx_csv(cc / f"creditcard_int_hierarchy_{q}.csv") for q in CC_QIS}, ["PAY_5"],
            [KAnonymity(5), KEAnonymity("PAY_5", 3, 2.0), KPQRAnonymity("PAY_5", 2, 2, 0.01, 0.01)]),
    }


def timed(problem: Problem, nodes: Callable[[Evaluator], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    with Evaluator(problem) as ev:
        result = search(lattice_of(problem), nodes(ev), "optimal")
    return time.perf_counter() - start, result


def checkers(metric: str) -> dict[str, Callable[[Evaluator], Any]]:
    """The two ways to check a node, with ``metric``."""
    return {"sql": lambda ev: SqlNodeEvaluator(ev, LIMIT, metric),
            "memory": lambda ev: FastNodeEvaluator(ev, LIMIT, metric)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--only", default="", help="run the problems whose name holds this text")
    args = parser.parse_args()
    engine = DuckDBEngine()
    for name, problem in problems(engine).items():
        if args.only not in name:
            continue
        ways = checkers("loss")
        seconds: dict[str, list[float]] = {w: [] for w in ways}
        found: dict[str, Any] = {}
        for _ in range(args.runs):
            for way, nodes in ways.items():
                s, result = timed(problem, nodes)
                print(f"  {name}, {way}: {s:.3f} s", flush=True)
                seconds[way].append(s)
                found[way] = result
        if (found["sql"].node, found["sql"].metric) != (found["memory"].node, found["memory"].metric):
            raise SystemExit(f"{name}: the two searches disagree: {found['sql'].node} "
                             f"{found['sql'].metric} against {found['memory'].node} {found['memory'].metric}")
        sql, memory = (statistics.median(seconds[w]) for w in ways)
        print(f"{name}: SQL node checks {sql:.2f} s ({found['sql'].checked} nodes), in memory {memory:.3f} s "
              f"({found['memory'].checked} nodes): {sql / memory:.1f}x faster; node {found['memory'].node}")


if __name__ == "__main__":
    main()
