"""Individual ranking, blocked MDAV and seeded noise write the same table on DuckDB, PostgreSQL and
Spark, from the same rows and settings: Adult's rows (30,162, ids in another order than the rows)
with numbers of many ties and a column of NULLs (MDAV, whose cost grows with the square of a
block's rows, on the first 3,000). Spark ranks with windows in each attribute's order, or, on an
engine told to number larger tables across tasks, on four range partitions (the test session's other
work uses one), so a value's tied rows fall in several partitions; noise reads a Parquet file Spark
splits into several partitions, and the other engines the same rows in the same order."""

from __future__ import annotations

import math
import warnings

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from sqlglot import exp

from sqlanon import api
from sqlanon.engines.duckdb import DuckDBEngine
from sqlanon.methods.rng import ReproducibleNoiseWarning
from sqlanon.spec import spec_from_dict
from sqlanon.sql.nodes import col, table
from tests.conftest import ADULT, require_data

pytestmark = [pytest.mark.spark, pytest.mark.postgres]

ENGINES = ("duckdb", "postgres", "spark")
ROW_GROUP = 4_096
NUMBERS = ["age", "age_or_null", "years"]
PART = 3_000
"""The rows blocked MDAV groups (its cost grows with the square of a block's rows)."""


def adult_numbers() -> pa.Table:
    """Adult's rows with a unique ``id`` (a permutation of the row numbers), ``age`` (74 values),
    ``age_or_null`` (every ninth row NULL), ``years`` (the length of the education's name: 10
    values) and four text columns."""
    with DuckDBEngine() as duck:
        return duck.con.sql("""
            WITH a AS (SELECT row_number() OVER () AS rn, * FROM read_csv(?, delim=';', header=true,
                                                                          all_varchar=true))
            SELECT CAST((rn * 7919) % 30162 AS BIGINT) AS id, sex, race, education, workclass,
                   CAST(age AS BIGINT) AS age,
                   CASE WHEN rn % 9 = 0 THEN NULL ELSE CAST(age AS DOUBLE) END AS age_or_null,
                   CAST(length(education) AS BIGINT) AS years
            FROM a ORDER BY rn""", params=[str(require_data(ADULT / "adult.csv"))]).to_arrow_table()


@pytest.fixture(scope="module")
def data() -> pa.Table:
    return adult_numbers()


@pytest.fixture(scope="module")
def parquet(engines, data, tmp_path_factory):
    """For noise, whose row numbers follow the scan order: PostgreSQL's table ``adult_ordered`` of
    the rows (PostgreSQL reads no files), and the rows in the order it scans them (its ``COPY`` may
    store a few rows out of the order they came in) as one Parquet file of several row groups."""
    engines["postgres"].create_table_from_arrow("adult_ordered", data)
    scanned = engines["postgres"].fetch_arrow(exp.select("*").from_(table("adult_ordered")))
    path = tmp_path_factory.mktemp("cross") / "adult.parquet"
    pq.write_table(scanned, path, row_group_size=ROW_GROUP)
    return path


@pytest.fixture(scope="module")
def engines(spark_session, pg_server, data):
    """Table ``adult`` in DuckDB, in a PostgreSQL schema of the module's own and in a Spark database;
    Spark's shuffles cut four partitions while the module runs."""
    from sqlanon.engines.postgres import PostgresEngine
    from sqlanon.engines.spark import SparkEngine
    from tests.spark_session import drop_database, fresh_database

    database = fresh_database(spark_session)
    partitions = spark_session.conf.get("spark.sql.shuffle.partitions")
    spark_session.conf.set("spark.sql.shuffle.partitions", "4")
    out = {"duckdb": DuckDBEngine(), "postgres": PostgresEngine(pg_server.create_schema("cross_micro_noise")),
           "spark": SparkEngine(session=spark_session)}
    try:
        for engine in out.values():
            engine.create_table_from_arrow("adult", data)
            engine.create_table_from_arrow("adult_part", data.slice(0, PART))
        out["spark_numbering"] = SparkEngine(session=spark_session, one_task_sort_rows=0)
        yield out
    finally:
        for engine in out.values():
            engine.close()
        spark_session.conf.set("spark.sql.shuffle.partitions", partitions)
        drop_database(spark_session, database)


def written(engine, name: str) -> list[tuple]:
    """The output's rows by id (unique); numbers as floats (PostgreSQL returns some as Decimal)."""
    rows = engine.fetch(exp.select("*").from_(table(name)).order_by(col("id")))[1]
    return [tuple(float(v) if isinstance(v, (int, float)) or type(v).__name__ == "Decimal" else v
                  for v in r) for r in rows]


def same(a: list[tuple], b: list[tuple]) -> bool:
    """Equal rows; floats to 12 significant digits (a group's mean is a sum in no fixed order)."""
    return len(a) == len(b) and all(
        len(r) == len(s) and all(x == y or (isinstance(x, float) and isinstance(y, float)
                                            and math.isclose(x, y, rel_tol=1e-12, abs_tol=1e-12))
                                 for x, y in zip(r, s)) for r, s in zip(a, b))


def on_each(engines, spec: dict) -> dict[str, tuple[dict, list[tuple]]]:
    """The report (without metrics) and the written rows of each engine."""
    out = {}
    for name in ENGINES:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ReproducibleNoiseWarning)
            report = api.apply(spec_from_dict(spec), engine=engines[name], metrics=()).as_dict()
        out[name] = ({k: v for k, v in report.items() if k != "outputs"},
                     written(engines[name], spec["output"]["name"]))
    return out


def assert_same_everywhere(results: dict[str, tuple[dict, list[tuple]]], rows: int = 30_162) -> None:
    duck_report, duck_rows = results["duckdb"]
    assert len(duck_rows) == rows
    for name in ("postgres", "spark"):
        report, rows = results[name]
        assert report == duck_report, name
        assert same(rows, duck_rows), name


def micro(name: str, source: str = "adult", **transformation) -> dict:
    return {"source": {"table": source},
            "attributes": {c: "insensitive" for c in ("id", "sex", "race", "education", "workclass")}
            | {a: "quasi_identifier" for a in NUMBERS},
            "transformation": {"method": "microaggregation", **transformation},
            "output": {"mode": "table", "name": name}}


@pytest.mark.parametrize("key, statistic, spark", [("id", "mean", "spark_numbering"),
                                                  (None, "median", "spark")])
def test_individual_ranking_gives_the_same_table(engines, key, statistic, spark):
    """Ties are broken by the key, or without one by every other column; NULLs stay NULL. Spark
    numbers the rows across tasks first (``one_task_sort_rows=0``), or ranks with windows."""
    engines = {**engines, "spark": engines[spark]}
    name = f"ranked_{statistic}"
    results = on_each(engines, micro(name, algorithm="individual_ranking", k=5, statistic=statistic,
                                     **({"key": key} if key else {})))
    assert_same_everywhere(results)
    rows = results["spark"][1]
    nulls = [r for r in rows if r[6] is None]
    assert len(nulls) == 30_162 // 9 and all(r[5] is not None for r in nulls)
    if statistic == "mean":  # groups of tied years that span two values average them
        assert len({r[7] for r in rows}) > 10


def test_blocked_mdav_gives_the_same_table(engines):
    results = on_each(engines, micro("blocked", "adult_part", algorithm="mdav", k=5, key="id",
                                     block_by=["race", "sex"], attributes=["age", "years"]))
    assert_same_everywhere(results, PART)
    assert results["spark"][0]["groups"] >= PART // 10


def test_seeded_noise_gives_the_same_table(engines, data, parquet):
    spec = {"attributes": {a: {"role": "sensitive"} for a in ("age", "years")},
            "transformation": {"method": "noise", "mechanism": "laplace", "epsilon": 1.0,
                               "sensitivity": 10, "bounds": {"age": [17, 90], "years": [3, 12]},
                               "attributes": ["age", "years"], "seed": 3},
            "output": {"mode": "table", "name": "noisy"}}
    results = {}
    for name in ENGINES:
        source = {"table": "adult_ordered"} if name == "postgres" else {"file": str(parquet),
                                                                      "format": "parquet"}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ReproducibleNoiseWarning)
            api.apply(spec_from_dict({**spec, "source": source}), engine=engines[name], metrics=())
        results[name] = written(engines[name], "noisy")
    assert len(results["duckdb"]) == 30_162
    assert results["postgres"] == results["duckdb"] and results["spark"] == results["duckdb"]
    ages = dict(zip(data.column("id").to_pylist(), data.column("age").to_pylist()))
    assert sum(r[5] != ages[r[0]] for r in results["spark"]) > 30_162 // 2
