"""A sequence of releases of an Adult sample: a table of persons (a key, age, sex, education, marital
status; occupation sensitive), changed by random deletes and inserts between releases."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

POOL = 3000
FIRST = 2000
CHANGES = 150
"""Persons deleted and inserted between two releases."""


def load_pool(con: Any, adult_dir: Path) -> None:
    """``pool``: the first 3,000 rows of Adult with a key; ``people``: the first 2,000 of them."""
    con.execute(
        "CREATE TABLE pool AS SELECT CAST(row_number() OVER () AS INTEGER) AS id, "
        "CAST(age AS INTEGER) AS age, sex, education, \"marital-status\" AS marital, occupation "
        "FROM read_csv(?, delim=';', header=true, all_varchar=true) LIMIT ?",
        [str(adult_dir / "adult.csv"), POOL])
    con.execute("CREATE TABLE people AS SELECT * FROM pool WHERE id <= ?", [FIRST])


def change(con: Any, rng: random.Random) -> None:
    """Delete ``CHANGES`` random persons and insert as many of the pool's unpublished ones."""
    present = [r[0] for r in con.execute("SELECT id FROM people").fetchall()]
    absent = sorted(set(range(1, POOL + 1)) - set(present))
    con.execute("DELETE FROM people WHERE list_contains(?, id)", [rng.sample(present, CHANGES)])
    con.execute("INSERT INTO people SELECT * FROM pool WHERE list_contains(?, id)",
                [rng.sample(absent, CHANGES)])


def spec(mode: str, output: str, state: str, m: int = 2) -> dict[str, Any]:
    return {"source": {"table": "people"},
            "attributes": {"id": "identifier", "age": "quasi_identifier", "sex": "quasi_identifier",
                           "education": "quasi_identifier", "marital": "insensitive",
                           "occupation": "sensitive"},
            "transformation": {"method": "m_invariance"},
            "publishing": {"mode": mode, "m": m, "key": "id", "state": state},
            "output": {"mode": "table", "name": output}}
