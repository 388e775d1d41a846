"""The risk analysis and the population-uniqueness model on Spark give DuckDB's figures."""

from __future__ import annotations

import random

import pyarrow as pa
import pytest

from sqlanon import api
from sqlanon.engines.duckdb import DuckDBEngine

pytestmark = pytest.mark.spark

SPEC = {
    "source": {"table": "people"},
    "attributes": {
        "zip": {"role": "quasi_identifier", "hierarchy": {"mask": {"levels": 5}}},
        "age": {"role": "quasi_identifier", "type": "integer",
                "hierarchy": {"intervals": {"widths": [5, 20]}}},
    },
    "privacy": [{"population_uniqueness": {"threshold": 0.005, "sampling_fraction": 0.2,
                                           "estimator": "zayatz"}}],
    "transformation": {"levels": {"zip": 2, "age": 1}, "suppression_limit": 0.5},
    "metrics": {"names": ["population_uniques"], "options": {"sampling_fraction": 0.2}},
}


def test_risk_and_population_uniqueness_match_duckdb(spark):
    rng = random.Random(5)
    rows = [(f"{rng.randint(23000, 23999)}", rng.randint(18, 90)) for _ in range(400)]
    duck = DuckDBEngine()
    try:
        data = pa.table({"zip": [z for z, _ in rows], "age": pa.array([a for _, a in rows], pa.int32())})
        for engine in (duck, spark):
            engine.create_table_from_arrow("people", data)
        risks = [api.risk(SPEC, engine=e).as_dict() for e in (duck, spark)]
        checks = [api.check(SPEC, engine=e) for e in (duck, spark)]
    finally:
        duck.close()
    assert risks[0] == risks[1]
    assert risks[0]["release"]["suppressed_rows"] == 23  # the size-1 classes: the share is 0.0057
    assert [c.node.suppressed_rows for c in checks] == [checks[0].node.suppressed_rows] * 2
    assert checks[0].metrics == checks[1].metrics
