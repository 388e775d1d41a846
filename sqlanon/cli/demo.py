"""``sqlanon demo``: a realistic table of people in an embedded DuckDB file, anonymized by a full spec."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import numpy as np

EDUCATION = {
    "Primary": ["Compulsory", "Low", "*"], "Lower-secondary": ["Compulsory", "Low", "*"],
    "Upper-secondary": ["Secondary", "Medium", "*"], "Vocational": ["Secondary", "Medium", "*"],
    "Bachelor": ["Tertiary", "High", "*"], "Master": ["Tertiary", "High", "*"],
    "Doctorate": ["Tertiary", "High", "*"],
}
OCCUPATIONS = ["Clerical", "Sales", "Engineering", "Teaching", "Health care", "Construction",
               "Management", "Transport", "Hospitality", "Research", "Farming", "Legal"]
SEX = {"F": ["*"], "M": ["*"]}

DEFAULT_DATABASE = "sqlanon_demo/people.duckdb"
"""In a folder of its own, so that the database and its spec do not litter the working directory."""

SPEC = """\
# A complete sqlanon spec: written by `sqlanon demo`, readable as a template.
source: {{table: people, database: {database}}}
attributes:
  person_id:  {{role: identifier, action: pseudonymize, salt: demo-salt-change-me}}
  name:       {{role: identifier}}                      # dropped
  age:        {{role: quasi_identifier, type: integer, hierarchy: {{intervals: {{widths: [5, 10, 20], top: 90}}}}}}
  zip:        {{role: quasi_identifier, hierarchy: {{mask: {{levels: 5}}}}}}
  birth_date: {{role: quasi_identifier, type: date, hierarchy: {{date: [month, year, decade]}}}}
  sex:        {{role: quasi_identifier, hierarchy: {{map: {sex}}}}}
  education:  {{role: quasi_identifier, hierarchy: {{map: {education}}}}}
  occupation: {{role: sensitive}}
  income:     {{role: sensitive, type: integer}}
  notes:      {{role: insensitive}}
privacy:
  - k_anonymity: {{k: 5}}
  - l_diversity: {{attribute: occupation, variant: recursive, c: 4, l: 3}}
  - t_closeness: {{attribute: income, t: 0.2, distance: ordered}}
transformation:
  method: generalization
  levels: {{age: 2, zip: 3, birth_date: 3, sex: 0, education: 1}}
  suppression_limit: 0.02
output: {{mode: table, name: people_anon}}
"""


def generate_people(rows: int, seed: int) -> Any:
    """A deterministic synthetic population (no real person is in it)."""
    import pyarrow as pa

    rng = np.random.default_rng(seed)
    age = np.clip(rng.normal(44, 16, rows).round(), 18, 95).astype(np.int32)
    ref = np.datetime64("2026-01-01")
    days = (age * 365.25 + rng.integers(0, 365, rows)).astype("timedelta64[D]")
    birth = (ref - days).astype("datetime64[D]")
    prefixes = rng.choice(np.arange(100, 130), rows)
    zip_code = np.char.zfill((prefixes * 100 + rng.integers(0, 100, rows)).astype(str), 5)
    sex = rng.choice(["F", "M"], rows)
    edu_names = list(EDUCATION)
    education = rng.choice(edu_names, rows, p=[0.08, 0.12, 0.3, 0.15, 0.2, 0.12, 0.03])
    occupation = rng.choice(OCCUPATIONS, rows)
    edu_rank = np.array([edu_names.index(e) for e in education])
    income = (np.exp(rng.normal(10.1 + 0.12 * edu_rank + 0.004 * age, 0.35)) // 100 * 100).astype(np.int64)
    first = rng.choice(["Ana", "Ben", "Chloé", "Dmitri", "Eve", "Farah", "Gus", "Hana", "O'Neil"], rows)
    name = np.char.add(np.char.add(first, " #"), np.arange(rows).astype(str))
    return pa.table({
        "person_id": np.arange(1, rows + 1, dtype=np.int64), "name": name, "age": age, "zip": zip_code,
        "birth_date": birth, "sex": sex, "education": education, "occupation": occupation,
        "income": income, "notes": rng.choice(["", "called back", "moved"], rows),
    })


def _flow(mapping: dict[str, list[str]]) -> str:
    import json

    return "{" + ", ".join(f"{json.dumps(k)}: {json.dumps(v)}" for k, v in mapping.items()) + "}"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--database", default=DEFAULT_DATABASE,
                   help=f"the DuckDB file to create; the spec is written beside it "
                        f"(default: ./{DEFAULT_DATABASE})")
    p.add_argument("--rows", type=int, default=100_000, help="rows to generate (default 100000)")
    p.add_argument("--seed", type=int, default=7, help="generator seed (default 7)")
    p.add_argument("--json", action="store_true", help="print the JSON report")


def run_demo(database: str, *, rows: int = 100_000, seed: int = 7) -> dict[str, Any]:
    """Create ``people`` in ``database``, write ``<database>.spec.yml`` beside it, apply it, return the
    report.

    The database's folder is created when missing; nothing is written anywhere else.
    """
    from sqlanon import api
    from sqlanon.engines import connect

    db = Path(database).resolve()
    db.parent.mkdir(parents=True, exist_ok=True)
    for p in (db, Path(str(db) + ".wal")):
        p.unlink(missing_ok=True)
    with connect(str(db), create=True) as engine:
        engine.create_table_from_arrow("people", generate_people(rows, seed))
    spec_path = db.with_suffix(".spec.yml")
    spec_path.write_text(SPEC.format(database=db.name, sex=_flow(SEX), education=_flow(EDUCATION)),
                         encoding="utf-8")
    report = api.apply(str(spec_path)).as_dict()
    report["outputs"] = {**report.get("outputs", {}), "database": str(db), "spec": str(spec_path)}
    return report
