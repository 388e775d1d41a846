"""Checking k-anonymity + recursive (c,l)-diversity + ordered t-closeness on Adult grown to N rows.

Baseline, measured in the same run on the same table: one plain
``CREATE TEMP TABLE ... AS SELECT <QIs>, count(*) FROM adult_big GROUP BY <QIs>``.
The check is ``sqlanon.api.check`` with no metrics (privacy checks only), on the same DuckDB
connection. Runs alternate (baseline, check, baseline, check, ...) after one warm-up each; the script
prints every run, the medians and the ratio of the medians.

Spec: quasi-identifiers sex, age, race, marital-status, native-country, workclass, salary-class
(ARX's Adult hierarchies); sensitive occupation (recursive (4,3)-diversity) and education (ordered
t-closeness, t = 0.2, education levels in their natural order); k = 5; 2 % suppression limit.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

import duckdb

from bench.grow_adult import ensure_grown
from sqlanon import api
from sqlanon.engines.duckdb import DuckDBEngine
from sqlanon.spec import spec_from_dict

QIS = ["sex", "age", "race", "marital-status", "native-country", "workclass", "salary-class"]
EDUCATION_ORDER = ["Preschool", "1st-4th", "5th-6th", "7th-8th", "9th", "10th", "11th", "12th",
                   "HS-grad", "Some-college", "Assoc-voc", "Assoc-acdm", "Bachelors", "Masters",
                   "Prof-school", "Doctorate"]
LEVELS = {"sex": 0, "age": 2, "race": 1, "marital-status": 1, "native-country": 1, "workclass": 1,
          "salary-class": 0}


def spec(adult_dir: Path) -> dict:
    attributes = {q: {"role": "quasi_identifier",
                      "hierarchy": {"csv": str(adult_dir / f"adult_hierarchy_{q}.csv")}} for q in QIS}
    attributes["occupation"] = {"role": "sensitive"}
    attributes["education"] = {"role": "sensitive", "order": EDUCATION_ORDER}
    return {
        "source": {"table": "adult_big"},
        "attributes": attributes,
        "privacy": [{"k_anonymity": {"k": 5}},
                    {"l_diversity": {"attribute": "occupation", "variant": "recursive", "c": 4, "l": 3}},
                    {"t_closeness": {"attribute": "education", "t": 0.2, "distance": "ordered"}}],
        "transformation": {"levels": LEVELS, "suppression_limit": 0.02},
    }


def main() -> None:
    root = Path(__file__).resolve().parents[1]
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=int, default=10_000_000)
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--database", default=str(root / "bench" / "results" / "adult_big.duckdb"))
    p.add_argument("--adult-dir", default=str(root.parent / "shared" / "data" / "adult"))
    a = p.parse_args()
    Path(a.database).parent.mkdir(parents=True, exist_ok=True)
    con = duckdb.connect(a.database)
    ensure_grown(con, str(Path(a.adult_dir) / "adult.csv"), a.rows)
    engine = DuckDBEngine(connection=con, database=a.database)
    s = spec_from_dict(spec(Path(a.adult_dir)))
    cols = ", ".join(f'"{q}"' for q in QIS)
    baseline_sql = (f"CREATE OR REPLACE TEMP TABLE scan AS SELECT {cols}, count(*) AS n "
                    f"FROM adult_big GROUP BY {cols}")

    def baseline() -> float:
        t = time.perf_counter()
        con.execute(baseline_sql)
        return time.perf_counter() - t

    def check() -> tuple[float, dict]:
        t = time.perf_counter()
        r = api.check(s, engine=engine, metrics=())
        return time.perf_counter() - t, r.as_dict()

    baseline()
    check()
    bs, cs = [], []
    report: dict = {}
    for i in range(a.runs):
        bs.append(baseline())
        c, report = check()
        cs.append(c)
        print(f"run {i + 1}: GROUP BY scan {bs[-1]:.3f} s   check {cs[-1]:.3f} s")
    mb, mc = statistics.median(bs), statistics.median(cs)
    print(f"rows {a.rows:,}; median GROUP BY scan {mb:.3f} s; median check {mc:.3f} s; "
          f"ratio check/scan {mc / mb:.2f}")
    print(json.dumps({k: report[k] for k in ("classes", "min_class_size", "suppressed_rows", "privacy")},
                     default=str))


if __name__ == "__main__":
    main()
