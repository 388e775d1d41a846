"""Golden SQL per dialect: tests/outputs/snapshots/<test>/<dialect>.sql, compared exactly.

Every snapshot must also parse with sqlglot for its dialect, statement by statement, into real
statements (not the opaque ``Command`` sqlglot falls back to). After a deliberate change of the
generated SQL, refresh the files with ``SQLANON_UPDATE_SNAPSHOTS=1 pytest tests/outputs`` and review
the diff.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import sqlglot
from sqlglot import exp

from sqlanon.api import levels_of
from sqlanon.engines.duckdb import DuckDBEngine
from sqlanon.methods.dataset import open_dataset
from sqlanon.methods.generalization.evaluator import Evaluator
from sqlanon.methods.generalization.problem import problem_for
from sqlanon.outputs import compile_output_sql
from sqlanon.spec import spec_from_dict
from tests.outputs.people import load_people, people_spec

SNAPSHOTS = Path(__file__).parent / "snapshots"
DIALECTS = ("duckdb", "postgres", "spark", "snowflake", "bigquery", "trino")
SALT = "golden-salt-4f9c2a7e"


def spec_table_hash() -> dict:
    spec = people_spec()
    spec["attributes"]["name"] = {"role": "identifier", "action": "hash", "salt": SALT}
    return spec


def spec_view_mask_l_diversity() -> dict:
    spec = people_spec(output={"mode": "view", "name": "people_release"},
                       transformation={"suppressed": "mask", "suppression_limit": 0.5},
                       privacy=[{"k_anonymity": {"k": 2}},
                                {"l_diversity": {"attribute": "disease", "l": 2}}])
    spec["attributes"]["name"] = {"role": "identifier", "action": "mask"}
    return spec


def spec_in_place_lookup_t_closeness() -> dict:
    # an age hierarchy of 100 leaves is joined as an inline VALUES lookup, not a CASE map
    ages = {str(a): [f"{a // 10 * 10}-{a // 10 * 10 + 9}", "<40" if a < 40 else ">=40", "*"]
            for a in range(100)}
    spec = people_spec(output={"mode": "in_place"}, transformation={"suppression_limit": 1.0},
                       privacy=[{"l_diversity": {"attribute": "disease", "l": 1.5, "variant": "entropy"}},
                                {"t_closeness": {"attribute": "disease", "t": 0.5}}])
    spec["attributes"]["age"]["hierarchy"] = {"map": ages}
    spec["attributes"]["name"] = {"role": "identifier", "action": "pseudonymize", "salt": SALT}
    return spec


def spec_sql_defaults() -> dict:
    return people_spec(output={"mode": "sql"})


CASES = {
    "table_hash": spec_table_hash,
    "view_mask_l_diversity": spec_view_mask_l_diversity,
    "in_place_lookup_t_closeness": spec_in_place_lookup_t_closeness,
    "sql_select": spec_sql_defaults,
}


def check_parses(sql: str, dialect: str) -> None:
    statements = [s for s in sqlglot.parse(sql, read=dialect) if s is not None]
    assert statements, "no statement"
    for s in statements:
        assert not isinstance(s, exp.Command), f"sqlglot could not parse: {s.sql(dialect)[:200]}"


@pytest.fixture(scope="module")
def compiled() -> dict[tuple[str, str], str]:
    """Each case compiled for every dialect (one check per case: the node is the same)."""
    out = {}
    with DuckDBEngine() as engine:
        load_people(engine)
        for case, make in CASES.items():
            spec = spec_from_dict(make())
            ds = open_dataset(spec, engine)
            with Evaluator(problem_for(spec, ds)) as ev:
                node = ev.check(levels_of(spec, ev.p.qis), spec.transformation.suppression_limit)
                for dialect in DIALECTS:
                    out[case, dialect] = compile_output_sql(spec, ds, ev, node, dialect)
    return out


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("case", sorted(CASES))
def test_snapshot(compiled, case, dialect):
    sql = compiled[case, dialect]
    path = SNAPSHOTS / case / f"{dialect}.sql"
    if os.environ.get("SQLANON_UPDATE_SNAPSHOTS") == "1":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(sql, encoding="utf-8")
    assert path.exists(), f"no snapshot {path}; run with SQLANON_UPDATE_SNAPSHOTS=1 to create it"
    assert sql == path.read_text(encoding="utf-8")
    check_parses(sql, dialect)


def test_every_snapshot_belongs_to_a_case():
    found = {(p.parent.name, p.stem) for p in SNAPSHOTS.glob("*/*.sql")}
    assert found == {(c, d) for c in CASES for d in DIALECTS}


def test_skeletons_per_dialect(compiled):
    """The shape of the in-place script, per dialect (statement kinds in order)."""
    kinds = {d: [type(s).__name__ for s in sqlglot.parse(compiled["in_place_lookup_t_closeness", d],
                                                          read=d) if s is not None] for d in DIALECTS}
    assert kinds == {
        "duckdb": ["Transaction", "Create", "Drop", "Alter", "Commit"],
        "postgres": ["Transaction", "Create", "Drop", "Alter", "Commit"],
        "snowflake": ["Create", "Alter", "Drop"],  # SWAP WITH is atomic; DDL commits on its own
        "bigquery": ["Create"],  # CREATE OR REPLACE TABLE ... AS is one atomic statement
        "spark": ["Create", "Drop", "Alter"],  # no transactional DDL: documented as not atomic
        "trino": ["Create", "Drop", "Alter"],
    }
    assert kinds["spark"] == kinds["trino"]
    assert compiled["in_place_lookup_t_closeness", "spark"].startswith("-- NOT ATOMIC")
