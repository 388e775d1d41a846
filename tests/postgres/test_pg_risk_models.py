"""The risk-based models give the same figures on PostgreSQL as on DuckDB: Adult's research subset at
one node, k-map against Adult as its population."""

from __future__ import annotations

import pytest

from sqlanon import api
from sqlanon.engines.duckdb import DuckDBEngine
from sqlanon.spec import spec_from_dict
from tests.compare import same
from tests.conftest import ADULT, require_data

pytestmark = pytest.mark.postgres

PRIVACY = [
    {"average_risk": {"threshold": 0.2, "highest_risk": 0.2, "records_at_risk": 0.05}},
    {"sample_uniqueness": {"threshold": 0.01}},
    {"k_map": {"k": 10, "population": "adult"}},
    {"k_map": {"k": 10, "estimator": "zero_truncated_poisson", "sampling_fraction": 0.1}},
]
LEVELS = {"sex": 0, "age": 4, "race": 1, "marital-status": 2, "education": 3, "native-country": 1,
          "workclass": 1, "salary-class": 0}


def _load(engine) -> None:
    import duckdb

    con = duckdb.connect()
    try:
        for name, file in (("adult", "adult.csv"), ("research", "adult_subset.csv")):
            data = con.read_csv(str(ADULT / file), sep=";", header=True, all_varchar=True).to_arrow_table()
            engine.create_table_from_arrow(name, data)
    finally:
        con.close()


def test_same_figures_as_duckdb(pg):
    require_data(ADULT)
    attributes = {q: {"role": "quasi_identifier",
                      "hierarchy": {"csv": str(ADULT / f"adult_hierarchy_{q}.csv")}} for q in LEVELS}
    spec = {"source": {"table": "research"}, "attributes": attributes, "privacy": PRIVACY,
            "transformation": {"levels": LEVELS, "suppression_limit": 0.02}, "output": {"mode": "none"}}
    duck = DuckDBEngine()
    try:
        figures = {}
        for name, engine in (("duckdb", duck), ("postgres", pg)):
            _load(engine)
            figures[name] = api.check(spec_from_dict(spec), engine=engine,
                                      metrics=("prosecutor_risk_avg", "sample_uniques")).as_dict()
    finally:
        duck.close()
    assert same(figures["postgres"], figures["duckdb"]), figures
    report = figures["duckdb"]
    assert report["anonymous"] and 0 < report["suppressed_rows"]
    assert all(m["holds"] for m in report["privacy"].values())
