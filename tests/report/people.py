"""A small table of people made in DuckDB for the HTML report's tests, and specs over it."""

from __future__ import annotations

from typing import Any

ROWS = 3000
DISEASES = ("flu", "cold", "asthma", "diabetes", "none")


def create(engine: Any, rows: int = ROWS) -> None:
    """``people``: id, age 18..87, income, a five-digit zip, sex and a disease, spread by arithmetic."""
    engine.con.execute(f"""
        CREATE TABLE people AS SELECT i AS id, 18 + (i * 37) % 70 AS age,
          (20000 + ((i * 7919) % 90000) + 40 * ((i * 37) % 70))::DOUBLE AS income,
          (47000 + (i * 13) % 700)::VARCHAR AS zip, CASE WHEN i % 3 = 0 THEN 'f' ELSE 'm' END AS sex,
          {list(DISEASES)!r}[1 + (i * 11) % 5] AS disease
        FROM range({int(rows)}) t(i)""")


def rows(engine: Any) -> list[tuple[Any, ...]]:
    return engine.con.execute("SELECT id, age, income, zip, sex, disease FROM people ORDER BY id").fetchall()


GENERALIZED = {
    "id": {"role": "identifier"},
    "age": {"role": "quasi_identifier", "type": "integer",
            "hierarchy": {"intervals": {"widths": [5, 10, 20]}}},
    "zip": {"role": "quasi_identifier", "hierarchy": {"mask": {"levels": 5}}},
    "sex": {"role": "quasi_identifier", "hierarchy": {"map": {"f": "*", "m": "*"}}},
    "income": {"role": "insensitive"},
    "disease": {"role": "sensitive"},
}


def generalization(**transformation: Any) -> dict[str, Any]:
    """k-anonymity (k = 5) and distinct 2-diversity of the disease, as a check or a search."""
    return {"source": {"table": "people"}, "attributes": GENERALIZED,
            "privacy": [{"k_anonymity": {"k": 5}}, {"l_diversity": {"attribute": "disease", "l": 2}}],
            "transformation": transformation,
            "output": {"mode": "table", "name": "released", "replace": True}}


def microaggregation() -> dict[str, Any]:
    attributes = {"id": {"role": "insensitive"}, "age": {"role": "quasi_identifier", "type": "integer"},
                  "income": {"role": "quasi_identifier"}, "zip": {"role": "insensitive"},
                  "sex": {"role": "insensitive"}, "disease": {"role": "sensitive"}}
    return {"source": {"table": "people"}, "attributes": attributes,
            "transformation": {"method": "microaggregation", "algorithm": "mdav", "k": 5,
                               "attributes": ["age", "income"]},
            "output": {"mode": "table", "name": "micro", "replace": True}}


def laplace(dataset: str = "people") -> dict[str, Any]:
    """The Laplace mechanism on age and income, charged to a ledger dataset with a budget of 5."""
    attributes = {"id": {"role": "insensitive"}, "age": {"role": "sensitive"},
                  "income": {"role": "sensitive"}, "zip": {"role": "insensitive"},
                  "sex": {"role": "insensitive"},
                  "disease": {"role": "insensitive"}}
    return {"source": {"table": "people"}, "attributes": attributes,
            "transformation": {"method": "noise", "mechanism": "laplace", "attributes": ["income", "age"],
                               "epsilon": 0.5, "sensitivity": 1,
                               "bounds": {"income": [0, 200000], "age": [0, 120]},
                               "dataset": dataset, "budget_epsilon": 5},
            "output": {"mode": "table", "name": "noisy", "replace": True}}
