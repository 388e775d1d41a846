"""A person table and a visits table derived from Adult, for the tests of several tables.

Persons are Adult's first rows (``pid``); each gets 1 to 5 visits whose admission date varies (its
earliest, by rule ``min``, is a quasi-identifier of the person). ``ref`` and ``ref_v`` repeat the
person's number in both tables, so that a test can tell whose rows were released under a pseudonym.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

from sqlglot import exp

from sqlanon.engines.duckdb import DuckDBEngine
from sqlanon.sql.nodes import col, table

QIS = ["sex", "age", "race", "marital-status"]
SALT = "Zq4-rT9x!mW2vLp7"
PERSONS = 1500


def build(adult_csv: Path, person: str = "persons", visits: str = "visits") -> DuckDBEngine:
    """An in-memory DuckDB with the two tables (names quoted: they may be hostile)."""
    duck = DuckDBEngine()
    p, v = (n.replace('"', '""') for n in (person, visits))
    duck.con.execute(f"""
        CREATE TABLE "{p}" AS SELECT row_number() OVER () AS pid, sex, age, race, "marital-status",
            education, row_number() OVER () * 7 AS ref
            FROM (SELECT * FROM read_csv(?, delim=';', header=true, all_varchar=true)
                  LIMIT {PERSONS})""", [str(adult_csv)])
    duck.con.execute(f"""
        CREATE TABLE "{v}" AS SELECT p.pid, w.visit,
            DATE '2020-01-01' + CAST((p.pid % 24) * 30 + w.visit * 3 AS INTEGER) AS admitted,
            'clinic ' || (p.pid % 4) AS clinic, p.ref AS ref_v
            FROM "{p}" p JOIN range(0, 5) w(visit) ON w.visit < 1 + p.pid % 5""")
    return duck


def spec(adult_dir: Path, output: dict[str, Any] | None = None, person: str = "persons",
         visits: str = "visits", **transformation: Any) -> dict[str, Any]:
    attributes: dict[str, Any] = {q: {"role": "quasi_identifier",
                                      "hierarchy": {"csv": str(adult_dir / f"adult_hierarchy_{q}.csv")}}
                                  for q in QIS}
    attributes.update(pid={"role": "identifier", "action": "pseudonymize", "salt": SALT},
                      education="insensitive", ref="insensitive")
    return {"source": {"table": person}, "privacy_unit": "pid", "attributes": attributes,
            "privacy": [{"k_anonymity": {"k": 5}}],
            "tables": {"visits": {"table": visits, "key": "pid", "rules": {"admitted": "min"},
                                  "attributes": {"admitted": {"role": "quasi_identifier", "hierarchy": {
                                      "date": ["month", "quarter", "year"]}},
                                      "clinic": {"role": "identifier", "action": "drop"},
                                      "visit": "insensitive", "ref_v": "insensitive"}}},
            "transformation": {"search": "optimal", "suppression_limit": 0.05, **transformation},
            "output": output or {"mode": "table"}}


def quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def rows(engine: Any, relation: str, columns: list[str]) -> list[tuple[Any, ...]]:
    return [tuple(r) for r in engine.fetch(exp.select(*[col(c) for c in columns]).from_(table(relation)))[1]]


def check_release(engine: Any, source: DuckDBEngine, persons_out: str, visits_out: str, k: int = 5,
                  visits_source: str = "visits") -> dict[str, int]:
    """Everything a release of several tables promises, by brute force over the released rows:
    person-level k-anonymity over both tables' quasi-identifiers, whole persons (all their visits,
    one admission value), suppressed persons gone from both tables, keys that join (the same
    pseudonym for the same person) and no visit without its person. Returns the counts."""
    persons = {r[0]: r for r in rows(engine, persons_out, ["pid", *QIS, "ref"])}
    assert len(persons) == len(rows(engine, persons_out, ["pid"])), "one row per released person"
    visits: dict[Any, list[tuple[Any, ...]]] = defaultdict(list)
    for r in rows(engine, visits_out, ["pid", "admitted", "ref_v"]):
        visits[r[0]].append(r)
    assert set(visits) <= set(persons), "every visit's key has its person in the person table"
    source_visits = dict(source.con.execute(
        f"SELECT ref_v, count(*) FROM {quoted(visits_source)} GROUP BY ref_v").fetchall())
    classes: dict[tuple[Any, ...], set[Any]] = defaultdict(set)
    for pid, person in persons.items():
        mine = visits[pid]
        assert {v[2] for v in mine} == {person[-1]}, "a pseudonym names one person in both tables"
        assert len(mine) == source_visits[person[-1]], "a released person keeps all its visits"
        admitted = {v[1] for v in mine}
        assert len(admitted) == 1, "a person's visits share the person's released admission value"
        classes[(*person[1:-1], *admitted)].add(pid)
    assert min(len(c) for c in classes.values()) >= k
    return {"persons": len(persons), "visits": sum(len(v) for v in visits.values()),
            "suppressed": PERSONS - len(persons), "classes": len(classes)}
