"""Person-level k-anonymity on Adult grown to P persons with R/P visits each (a privacy unit).

Table ``visits``: ``bench/grow_adult.py`` grows Adult to P rows (the persons, ``pid`` 1..P), and each
person gets R/P visits (``visit`` 0..R/P−1) carrying its quasi-identifiers; the rows are stored in a
hashed order of (pid, visit), so a person's rows are spread over the table as in an event log.

Baseline, measured in the same run on the same table: the plain SQL a person-level count needs, one
``GROUP BY pid`` and a ``GROUP BY`` of the person-level quasi-identifiers::

    CREATE TEMP TABLE scan AS SELECT <QIs>, count(*) FROM
        (SELECT pid, min(<QI>) ... FROM visits GROUP BY pid) GROUP BY <QIs>

The quasi-identifiers take the rule ``min`` (``--rule constant`` also checks that no person's values
differ, one MAX per attribute more). Subjects (``sqlanon.api``, no metrics): ``check`` of
k-anonymity (k = 5, 2 % suppression) at a fixed node with the privacy unit ``pid`` (goal ≤ 2× the
baseline), and ``anonymize`` with the optimal search (Loss) on the same spec (goal ≤ 3×). Runs
alternate baseline and subject after one warm-up each; the script prints every run, the medians and
their ratios.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

import duckdb

from bench.grow_adult import grow
from sqlanon import api
from sqlanon.engines.duckdb import DuckDBEngine
from sqlanon.spec import spec_from_dict

QIS = ["sex", "age", "race", "marital-status", "native-country", "workclass", "salary-class"]
LEVELS = {"sex": 0, "age": 2, "race": 1, "marital-status": 1, "native-country": 1, "workclass": 1,
          "salary-class": 0}


def spec(adult_dir: Path, levels: dict[str, int] | None, rule: str = "min") -> dict:
    attributes = {q: {"role": "quasi_identifier",
                      "hierarchy": {"csv": str(adult_dir / f"adult_hierarchy_{q}.csv")}} for q in QIS}
    attributes.update({c: {"role": "insensitive"} for c in ("pid", "visit")})
    transformation = {"levels": levels, "suppression_limit": 0.02} if levels is not None else \
        {"search": "optimal", "metric": "loss", "suppression_limit": 0.02}
    return {"source": {"table": "visits"}, "privacy_unit": {"column": "pid", "varying": rule},
            "attributes": attributes,
            "privacy": [{"k_anonymity": {"k": 5}}], "transformation": transformation,
            "output": {"mode": "none"}}


def build(con: duckdb.DuckDBPyConnection, adult_csv: str, rows: int, persons: int) -> None:
    grow(con, adult_csv, persons, name="adult_persons")
    cols = ", ".join(f'p."{q}"' for q in QIS)
    con.execute(f"""CREATE OR REPLACE TABLE visits AS
        SELECT p.pid, v.visit, {cols}
        FROM (SELECT row_number() OVER () AS pid, * FROM adult_persons) p, range({rows // persons}) v(visit)
        ORDER BY hash(p.pid * 1000 + v.visit)""")
    con.execute("DROP TABLE adult_persons")


def main() -> None:
    root = Path(__file__).resolve().parents[1]
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=int, default=10_000_000)
    p.add_argument("--persons", type=int, default=1_000_000)
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--rule", choices=("min", "constant"), default="min",
                   help="the quasi-identifiers' rule: min (the person's value, as the baseline reads it) or "
                        "constant (also checks that they do not vary: a MAX per attribute more)")
    p.add_argument("--database", default=str(root / "bench" / "results" / "visits.duckdb"))
    p.add_argument("--adult-dir", default=str(root.parent / "shared" / "data" / "adult"))
    a = p.parse_args()
    Path(a.database).parent.mkdir(parents=True, exist_ok=True)
    con = duckdb.connect(a.database)
    have = con.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = 'visits'"
                       ).fetchone()[0]
    if not have or con.execute("SELECT count(*), count(DISTINCT pid) FROM visits").fetchone() != \
            (a.persons * (a.rows // a.persons), a.persons):
        build(con, str(Path(a.adult_dir) / "adult.csv"), a.rows, a.persons)
    engine = DuckDBEngine(connection=con, database=a.database)
    checked = spec_from_dict(spec(Path(a.adult_dir), LEVELS, a.rule))
    searched = spec_from_dict(spec(Path(a.adult_dir), None, a.rule))
    person_level = ", ".join(f'min("{q}") AS "{q}"' for q in QIS)
    cols = ", ".join(f'"{q}"' for q in QIS)
    baseline_sql = (f"CREATE OR REPLACE TEMP TABLE scan AS SELECT {cols}, count(*) AS n FROM "
                    f"(SELECT pid, {person_level} FROM visits GROUP BY pid) GROUP BY {cols}")

    def baseline() -> float:
        t = time.perf_counter()
        con.execute(baseline_sql)
        return time.perf_counter() - t

    def check() -> tuple[float, dict]:
        t = time.perf_counter()
        r = api.check(checked, engine=engine, metrics=())
        return time.perf_counter() - t, r.as_dict()

    def search() -> tuple[float, dict]:
        t = time.perf_counter()
        r = api.anonymize(searched, engine=engine, metrics=())
        return time.perf_counter() - t, r.as_dict()

    baseline()
    check()
    search()
    bs, cs, ss = [], [], []
    reports: dict = {}
    for i in range(a.runs):
        bs.append(baseline())
        c, reports["check"] = check()
        cs.append(c)
        bs.append(baseline())
        s, reports["search"] = search()
        ss.append(s)
        print(f"run {i + 1}: GROUP BY person + QIs {bs[-2]:.3f} / {bs[-1]:.3f} s   check {c:.3f} s   "
              f"search {s:.3f} s")
    mb, mc, ms = statistics.median(bs), statistics.median(cs), statistics.median(ss)
    print(f"rule {a.rule}; rows {a.rows:,}, persons {a.persons:,}; median baseline {mb:.3f} s; "
          f"check {mc:.3f} s (ratio {mc / mb:.2f}, goal 2); search {ms:.3f} s (ratio {ms / mb:.2f}, goal 3)")
    for name, r in reports.items():
        print(name, json.dumps({k: r.get(k) for k in ("transformation", "classes", "min_class_size",
                                                        "suppressed_rows", "privacy_unit")}, default=str))
    found = reports["search"].get("search") or {}
    print("search", json.dumps({k: found.get(k) for k in ("evaluated_in", "nodes_checked", "value")}))


if __name__ == "__main__":
    main()
