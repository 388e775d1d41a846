"""Local suppression on PostgreSQL writes DuckDB's rows (Adult's first 3,000, k = 5)."""

from __future__ import annotations

import pytest

from tests.methods.local_suppression.cross import adult_rows, same_as_duckdb

pytestmark = pytest.mark.postgres


def test_same_rows_as_duckdb(pg):
    data = adult_rows()
    pg.create_table_from_arrow("adult", data)
    report, rows = same_as_duckdb(pg, data, {"heuristic": "sdcmicro"})
    assert report["anonymous"] and report["cells_suppressed"] > 0 and len(rows) == 3_000
