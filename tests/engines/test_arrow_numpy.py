"""Columns read as Arrow become the numpy columns DuckDB's own ``fetchnumpy`` gives (Spark reads its
frequency tables this way; no JVM needed: the conversion is plain Arrow)."""

from __future__ import annotations

import datetime

import duckdb
import numpy as np
import pytest

from sqlanon.engines.arrow_numpy import table_numpy

QUERY = """SELECT * FROM (VALUES
    (1, 2::BIGINT, 'a', 1.5::DOUBLE, true, 7::SMALLINT),
    (NULL, 3::BIGINT, NULL, NULL, NULL, 8::SMALLINT),
    (4, 5::BIGINT, 'ü"x', -0.5::DOUBLE, false, 9::SMALLINT)) AS t(i, b, s, d, f, h)"""


@pytest.mark.parametrize("where", ["", "WHERE i IS NOT NULL", "WHERE false"])
def test_numbers_text_and_nulls_read_as_duckdb_reads_them(where):
    con = duckdb.connect()
    query = f"SELECT * FROM ({QUERY}) AS q {where}"
    expected = con.execute(query).fetchnumpy()
    got = table_numpy(con.sql(query).to_arrow_table())
    assert list(got) == list(expected)
    for name, column in expected.items():
        assert type(got[name]) is type(column), name
        assert got[name].dtype == column.dtype, name
        assert np.array_equal(np.ma.getmaskarray(got[name]), np.ma.getmaskarray(column)), name
        assert np.ma.compressed(got[name]).tolist() == np.ma.compressed(column).tolist(), name


def test_other_types_read_as_a_list_of_rows_gives_them():
    """Decimals as int when integral, else float, dates as dates, NULL as None."""
    data = duckdb.connect().sql(
        "SELECT * FROM (VALUES (2.00::DECIMAL(10, 2), DATE '2024-01-02'), (2.50::DECIMAL(10, 2), NULL),"
        " (NULL, DATE '2024-03-04')) AS t(m, day)").to_arrow_table()
    got = table_numpy(data)
    assert got["m"].tolist() == [2, 2.5, None]
    assert got["day"].tolist() == [datetime.date(2024, 1, 2), None, datetime.date(2024, 3, 4)]
