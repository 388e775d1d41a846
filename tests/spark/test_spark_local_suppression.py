"""Local suppression on Spark writes DuckDB's rows (Adult's first 1,000, k = 5)."""

from __future__ import annotations

import pytest

from tests.methods.local_suppression.cross import adult_rows, same_as_duckdb

pytestmark = pytest.mark.spark


def test_same_rows_as_duckdb(spark):
    data = adult_rows(1_000)
    spark.create_table_from_arrow("adult", data)
    report, rows = same_as_duckdb(spark, data, {"heuristic": "sdcmicro"})
    assert report["anonymous"] and report["cells_suppressed"] > 0 and len(rows) == 1_000
