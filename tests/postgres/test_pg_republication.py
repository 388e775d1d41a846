"""m-invariance and ``check --against`` on PostgreSQL give DuckDB's releases, state and verdicts on
the same sequence of Adult releases (computed in the same test)."""

from __future__ import annotations

import random

import pytest
from sqlglot import exp

from sqlanon import api
from sqlanon.sql.nodes import table
from tests.methods.republication.adult_releases import CHANGES, FIRST, POOL, spec

pytestmark = pytest.mark.postgres


def rows(engine, name: str) -> list[tuple]:
    return sorted(tuple(str(v) for v in r) for r in engine.fetch(exp.select("*").from_(table(name)))[1])


def sequence(engine, pool: list[tuple], mode: str) -> tuple[list[str], list]:
    """Two releases; between them, the same random deletes and inserts on either engine."""
    engine.execute_script("CREATE TABLE people (id INTEGER, age INTEGER, sex TEXT, education TEXT, "
                          "marital TEXT, occupation TEXT)")
    engine.insert_rows("people", [r for r in pool if r[0] <= FIRST])
    rng = random.Random(3)
    present = set(range(1, FIRST + 1))
    outputs, checks = [], []
    for number in (1, 2):
        output = f"{mode}_{number}"
        if number > 1:
            gone = rng.sample(sorted(present), CHANGES)
            new = rng.sample(sorted(set(range(1, POOL + 1)) - present), CHANGES)
            engine.execute_script("DELETE FROM people WHERE id IN (" + ", ".join(map(str, gone)) + ")")
            engine.insert_rows("people", [r for r in pool if r[0] in set(new)])
            present = (present - set(gone)) | set(new)
            checks.append(api.check(spec(mode, output, mode), engine=engine, against=outputs[-1]))
        api.apply(spec(mode, output, mode), engine=engine)
        outputs.append(output)
    return outputs, checks


def test_postgres_publishes_what_duckdb_publishes(pg, duck, adult_dir):
    from tests.methods.republication.adult_releases import load_pool

    load_pool(duck.con, adult_dir)
    pool = [tuple(r) for r in duck.con.execute("SELECT * FROM pool ORDER BY id").fetchall()]
    duck.con.execute("DROP TABLE people")
    for mode in ("independent", "m_invariance"):
        pg_outputs, pg_checks = sequence(pg, pool, mode)
        duck_outputs, duck_checks = sequence(duck, pool, mode)
        for a, b in zip(pg_outputs, duck_outputs):
            assert rows(pg, a) == rows(duck, b)
        for part in ("__releases", "__counterfeits", "__signatures"):
            assert rows(pg, mode + part) == rows(duck, mode + part)
        assert [c.as_dict() for c in pg_checks] == [c.as_dict() for c in duck_checks]
        assert all(c.anonymous == (mode == "m_invariance") for c in pg_checks)
        pg.execute_script("DROP TABLE people")
        duck.con.execute("DROP TABLE people")
