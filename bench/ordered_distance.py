"""t-closeness with the ordered distance on a sensitive attribute of many distinct values.

Data: creditcard (30,000 rows), 8 quasi-identifiers with their hierarchies at one node, sensitive
``BILL_AMT1`` (22,723 distinct integer codes) read as numbers. Subject: ``check`` of t-closeness
(ordered distance, t = 0.3) at that node on DuckDB. Baseline, in the same run on the same connection:
one ``GROUP BY`` of the quasi-identifiers and the sensitive attribute (the histogram the distance
reads). Runs alternate; the script prints every run, the medians and their ratio.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

from sqlanon import api
from sqlanon.engines.duckdb import DuckDBEngine
from sqlanon.spec import spec_from_dict

DATA = Path(os.environ.get("SQLANON_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))
QIS = ["LIMIT_BAL", "SEX", "EDUCATION", "MARRIAGE", "AGE", "PAY_0", "PAY_2", "PAY_3"]
NODE = {"LIMIT_BAL": 2, "SEX": 0, "EDUCATION": 1, "MARRIAGE": 1, "AGE": 3, "PAY_0": 1, "PAY_2": 1, "PAY_3": 1}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--attribute", default="BILL_AMT1")
    args = parser.parse_args()
    folder = DATA / "creditcard"
    engine = DuckDBEngine()
    engine.con.execute(
        f"CREATE TABLE cc AS SELECT * REPLACE (CAST(\"{args.attribute}\" AS BIGINT) AS \"{args.attribute}\") "
        "FROM read_csv(?, delim=';', header=true, all_varchar=true)", [str(folder / "creditcard_int.csv")])
    attributes = {q: {"role": "quasi_identifier",
                      "hierarchy": {"csv": str(folder / f"creditcard_int_hierarchy_{q}.csv")}} for q in QIS}
    attributes[args.attribute] = {"role": "sensitive"}
    spec = spec_from_dict({
        "source": {"table": "cc"}, "attributes": attributes,
        "privacy": [{"t_closeness": {"attribute": args.attribute, "t": 0.3, "distance": "ordered"}}],
        "transformation": {"levels": NODE, "suppression_limit": 0.0}, "metrics": []})
    columns = ", ".join(f'"{c}"' for c in [*QIS, args.attribute])
    distinct = engine.con.execute(f'SELECT count(DISTINCT "{args.attribute}") FROM cc').fetchone()
    times: dict[str, list[float]] = {"baseline": [], "check": []}
    for _ in range(args.runs):
        start = time.perf_counter()
        engine.con.execute(f"CREATE OR REPLACE TEMP TABLE h AS SELECT {columns}, count(*) AS n FROM cc "
                           f"GROUP BY {columns}")
        times["baseline"].append(time.perf_counter() - start)
        start = time.perf_counter()
        report = api.check(spec, engine=engine)
        times["check"].append(time.perf_counter() - start)
    print(f"creditcard: {args.attribute} has {distinct[0] if distinct else '?'} distinct values; "
          f"{report.as_dict()['classes']} classes at the node; runs={args.runs}")
    for name, ts in times.items():
        print(f"  {name:<8} " + ", ".join(f"{t:.3f}" for t in ts)
              + f" s; median {statistics.median(ts):.3f} s")
    ratio = statistics.median(times["check"]) / statistics.median(times["baseline"])
    print(f"  check/baseline = {ratio:.1f}")


if __name__ == "__main__":
    main()
