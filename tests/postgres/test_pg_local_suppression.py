"""Local suppression on PostgreSQL writes DuckDB's rows (Adult's first 3,000, k = 5): sdcMicro's
algorithm, and the pattern heuristic with alpha 0 after generalizing age to 10-year intervals; the
exact solver's split combinations on 80 rows; the rounds and batch_cover heuristics' SQL."""

from __future__ import annotations

import pytest
from sqlglot import exp

from sqlanon import api
from sqlanon.engines.duckdb import DuckDBEngine
from sqlanon.spec import spec_from_dict
from sqlanon.sql.nodes import col, table
from tests.methods.local_suppression.cross import adult_rows, run, same_as_duckdb, spec

pytestmark = pytest.mark.postgres


@pytest.mark.parametrize("settings", [{"heuristic": "sdcmicro"},
                                      {"heuristic": "pattern", "alpha": 0, "levels": {"age": 1}}])
def test_same_rows_as_duckdb(pg, settings):
    data = adult_rows()
    pg.create_table_from_arrow("adult", data)
    report, rows = same_as_duckdb(pg, data, settings)
    assert report["anonymous"] and report["cells_suppressed"] > 0 and len(rows) == 3_000


def test_rows_of_a_split_combination_as_duckdb(pg):
    """The exact optimum on Adult's first 80 rows (sex, race, education; k = 5) gives rows of one
    combination different cells: both engines number them alike and write the same rows."""
    data = adult_rows(80)
    pg.create_table_from_arrow("adult", data)
    settings = {"qis": ["sex", "race", "education"], "solver": "exact"}
    report, rows = same_as_duckdb(pg, data, settings)
    assert report["optimal"] and report["anonymous"] and len(rows) == 80
    assert "ROW_NUMBER()" in api.compile_sql(spec_from_dict(spec(**settings)), engine=pg).upper()


def test_sql_printed_on_duckdb_runs_on_postgresql(pg):
    """Decisions read on DuckDB, printed for PostgreSQL: a DOUBLE quasi-identifier, which the two
    write as different text (39.0 and 39), still matches its decisions, so PostgreSQL writes the
    rows DuckDB writes."""
    import pyarrow as pa
    import pyarrow.compute as pc

    data = adult_rows(300)
    data = data.set_column(data.schema.get_field_index("age"), "age", pc.cast(data["age"], pa.float64()))
    settings = {"heuristic": "sdcmicro"}
    with DuckDBEngine() as duck:
        duck.create_table_from_arrow("adult", data)
        expected = run(duck, settings)
        duck.drop("out")
        sql = api.compile_sql(spec_from_dict(spec(**settings)), engine=duck, dialect="postgres")
    pg.create_table_from_arrow("adult", data)
    pg.execute_script(sql)
    got = pg.fetch(exp.select("*").from_(table("out")).order_by(col("id")))[1]
    assert expected[0]["cells_suppressed"] > 0
    assert [tuple(r) for r in got] == expected[1]


def test_rounds_as_sql_as_duckdb(pg, monkeypatch):
    """The rounds heuristic's SQL form (forced for 1,000 rows) writes on PostgreSQL what it writes on
    DuckDB."""
    from sqlanon.methods.local_suppression import in_engine

    monkeypatch.setattr(in_engine, "IN_MEMORY_MAX", 0)
    data = adult_rows(1_000)
    pg.create_table_from_arrow("adult", data)
    report, rows = same_as_duckdb(pg, data, {"heuristic": "rounds", "levels": {"age": 1}})
    assert report["anonymous"] and report["cells_suppressed"] > 0 and len(rows) == 1_000


def test_batch_cover_as_duckdb(pg):
    """The batch_cover heuristic's statements write on PostgreSQL what they write on DuckDB (Adult's
    first 300 rows, age in 10-year intervals)."""
    data = adult_rows(300)
    pg.create_table_from_arrow("adult", data)
    report, rows = same_as_duckdb(pg, data, {"heuristic": "batch_cover", "levels": {"age": 1}})
    assert report["anonymous"] and report["cells_suppressed"] > 0 and len(rows) == 300
