"""sdcMicro's individual risk and SUDA2 give DuckDB's figures, and the risk DuckDB's per-record table,
on Spark, from the same rows: Adult's first 1,500 rows with a sampling weight and NULLs in two
quasi-identifiers."""

from __future__ import annotations

import pyarrow as pa
import pytest

from sqlanon.domain.risk.individual import individual_risk
from sqlanon.domain.risk.suda2 import suda2
from sqlanon.engines.duckdb import DuckDBEngine
from tests.conftest import ADULT, require_data

pytestmark = pytest.mark.spark

QIS = ["sex", "age", "race", "education", "workclass"]


def adult_rows() -> pa.Table:
    with DuckDBEngine() as duck:
        return duck.con.sql("""
            WITH a AS (SELECT row_number() OVER () AS rn, * FROM read_csv(?, delim=';', header=true,
                                                                          all_varchar=true))
            SELECT sex, CAST(age AS BIGINT) AS age, race, CASE WHEN rn % 13 = 0 THEN NULL ELSE education
                   END AS education, CASE WHEN rn % 29 = 0 THEN NULL ELSE workclass END AS workclass,
                   CAST(50 + (rn * 7919) % 400 AS DOUBLE) / 4 AS w
            FROM a WHERE rn <= 1500 ORDER BY rn""",
                            params=[str(require_data(ADULT / "adult.csv"))]).to_arrow_table()


def sorted_rows(engine, name):
    _, rows = engine.fetch_script(f"SELECT * FROM {name}")
    return sorted(rows, key=repr)


def test_spark_gives_duckdbs_figures_and_tables(spark):
    data = adult_rows()
    spark.create_table_from_arrow("adult_w", data)
    with DuckDBEngine() as duck:
        duck.create_table_from_arrow("adult_w", data)
        on_duck = individual_risk(duck, "adult_w", QIS, "w", output="risk_out")
        s_duck = suda2(duck, "adult_w", QIS)
        duck_rows = sorted_rows(duck, "risk_out")
    on_spark = individual_risk(spark, "adult_w", QIS, "w", output="risk_out")
    s_spark = suda2(spark, "adult_w", QIS)  # its per-record table is written as the risk's is
    same_figures(on_spark.as_dict(), on_duck.as_dict())
    assert s_spark.as_dict() == s_duck.as_dict()
    assert on_spark.records == 1500 and s_spark.sample_uniques > 0
    spark_rows = sorted_rows(spark, "risk_out")
    assert len(spark_rows) == len(duck_rows) == 1500
    for a, b in zip(spark_rows, duck_rows):
        assert a[:6] == b[:6] and a[6:] == pytest.approx(b[6:], rel=1e-12)


def same_figures(a: dict, b: dict) -> None:
    assert a.keys() == b.keys()
    for k in a:
        assert a[k] == (pytest.approx(b[k], rel=1e-12) if isinstance(b[k], float) else b[k]), k
