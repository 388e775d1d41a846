"""The class-size histogram of Adult's nine quasi-identifiers at level 0, read once per session."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import ADULT_QIS


@pytest.fixture(scope="session")
def adult_histogram(adult_dir: Path):
    import duckdb

    from sqlanon.domain.risk.histogram import SizeHistogram

    con = duckdb.connect()
    con.execute("CREATE TABLE adult AS SELECT * FROM read_csv(?, delim=';', header=true, all_varchar=true)",
                [str(adult_dir / "adult.csv")])
    cols = ", ".join('"' + q + '"' for q in ADULT_QIS)
    rows = con.execute(f"SELECT s, count(*) FROM (SELECT count(*) AS s FROM adult GROUP BY {cols}) "
                       "GROUP BY s").fetchall()
    con.close()
    return SizeHistogram.of(dict(rows))
