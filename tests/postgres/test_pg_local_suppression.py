"""Local suppression on PostgreSQL writes DuckDB's rows (Adult's first 3,000, k = 5): sdcMicro's
algorithm, and the pattern heuristic with alpha 0 after generalizing age to 10-year intervals."""

from __future__ import annotations

import pytest

from tests.methods.local_suppression.cross import adult_rows, same_as_duckdb

pytestmark = pytest.mark.postgres


@pytest.mark.parametrize("settings", [{"heuristic": "sdcmicro"},
                                      {"heuristic": "pattern", "alpha": 0, "levels": {"age": 1}}])
def test_same_rows_as_duckdb(pg, settings):
    data = adult_rows()
    pg.create_table_from_arrow("adult", data)
    report, rows = same_as_duckdb(pg, data, settings)
    assert report["anonymous"] and report["cells_suppressed"] > 0 and len(rows) == 3_000
