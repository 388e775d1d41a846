"""The same local suppression on another engine and on DuckDB: Adult's first rows (ids, five text
quasi-identifiers with a few NULLs, an integer age, a sensitive column) and the rows written."""

from __future__ import annotations

import pyarrow as pa
from sqlglot import exp

from sqlanon import api
from sqlanon.engines.duckdb import DuckDBEngine
from sqlanon.spec import spec_from_dict
from sqlanon.sql.nodes import col, table
from tests.conftest import ADULT, require_data

ROWS = 3_000
QIS = ["sex", "age", "race", "education", "workclass"]


def adult_rows(rows: int = ROWS) -> pa.Table:
    with DuckDBEngine() as duck:
        return duck.con.sql(f"""
            WITH a AS (SELECT row_number() OVER () AS rn, * FROM read_csv(?, delim=';', header=true,
                                                                          all_varchar=true))
            SELECT CAST(rn AS BIGINT) AS id, sex, CAST(age AS BIGINT) AS age, race, education,
                   CASE WHEN rn % 97 = 0 THEN NULL ELSE workclass END AS workclass,
                   "salary-class" AS salary
            FROM a WHERE rn <= {rows} ORDER BY rn""", params=[str(require_data(ADULT / "adult.csv"))]
                            ).to_arrow_table()


def spec(qis=QIS, **transformation) -> dict:
    attributes: dict = {"id": "insensitive", "salary": "sensitive",
                        **{q: "quasi_identifier" if q in qis else "insensitive" for q in QIS}}
    if "levels" in transformation:
        attributes["age"] = {"role": "quasi_identifier", "hierarchy": {"intervals": {"widths": [10, 20]}}}
    return {"source": {"table": "adult"},
            "attributes": attributes,
            "transformation": {"method": "local_suppression", "k": 5, **transformation},
            "output": {"mode": "table", "name": "out"}}


def run(engine, settings: dict) -> tuple[dict, list[tuple]]:
    """The report (without outputs) and the written rows by id."""
    report = api.apply(spec_from_dict(spec(**settings)), engine=engine).as_dict()
    rows = engine.fetch(exp.select("*").from_(table("out")).order_by(col("id")))[1]
    return ({k: v for k, v in report.items() if k != "outputs"},
            [tuple(int(v) if isinstance(v, int) else v for v in r) for r in rows])


def same_as_duckdb(engine, data: pa.Table, settings: dict) -> tuple[dict, list[tuple]]:
    """Run on ``engine`` (its table ``adult`` loaded from ``data``) and on DuckDB; assert equal."""
    with DuckDBEngine() as duck:
        duck.create_table_from_arrow("adult", data)
        expected = run(duck, settings)
    got = run(engine, settings)
    assert got[0] == expected[0]
    assert got[1] == expected[1]
    return got
