"""Anatomy releases the same two tables on DuckDB, PostgreSQL and Spark from the same rows and seed:
Adult's first 2,000 rows with a unique id, an integer, a double and a date (each hashed into the
rows' order by its canonical text) and occupation as the sensitive attribute (NULL in every
eleventh row). The SELECTs that ``compile`` prints for Spark, run through Spark Connect (a server
in the test session's JVM), give the same rows again."""

from __future__ import annotations

import warnings

import pyarrow as pa
import pytest
from sqlglot import exp

from sqlanon import api
from sqlanon.engines.duckdb import DuckDBEngine
from sqlanon.methods.rng import ReproducibleNoiseWarning
from sqlanon.spec import spec_from_dict
from sqlanon.sql.nodes import table
from tests.conftest import ADULT, require_data
from tests.methods.anatomy.checks import check_release

pytestmark = [pytest.mark.spark, pytest.mark.postgres]

L = 5


def adult_rows() -> pa.Table:
    with DuckDBEngine() as duck:
        return duck.con.sql("""
            WITH a AS (SELECT row_number() OVER () AS rn, * FROM read_csv(?, delim=';', header=true,
                                                                          all_varchar=true))
            SELECT CAST((rn * 7919) % 2000 AS BIGINT) AS id, sex, CAST(age AS BIGINT) AS age,
                   CAST(age AS DOUBLE) / 4 AS quarter_age, DATE '2000-01-01' + CAST(rn % 400 AS INTEGER)
                   AS day, education, CASE WHEN rn % 11 = 0 THEN NULL ELSE occupation END AS occupation
            FROM a WHERE rn <= 2000 ORDER BY rn""",
                            params=[str(require_data(ADULT / "adult.csv"))]).to_arrow_table()


@pytest.fixture()
def connect_server(spark_session):
    """A Spark Connect server in the test session's own JVM, on a free port."""
    from tests.ports import free_port

    context = spark_session._jsc.sc()
    context.conf().set("spark.connect.grpc.binding.port", str(port := free_port()))
    service = spark_session._jvm.org.apache.spark.sql.connect.service.SparkConnectService
    service.start(context)
    yield f"sc://127.0.0.1:{port}"
    service.stop(getattr(service, "stop$default$1")(), getattr(service, "stop$default$2")())


@pytest.fixture(scope="module")
def engines(spark_session, pg_server):
    from sqlanon.engines.postgres import PostgresEngine
    from sqlanon.engines.spark import SparkEngine
    from tests.spark_session import drop_database, fresh_database

    database = fresh_database(spark_session)
    data = adult_rows()
    out = {"duckdb": DuckDBEngine(), "postgres": PostgresEngine(pg_server.create_schema("cross_anatomy")),
           "spark": SparkEngine(session=spark_session)}
    try:
        for engine in out.values():
            engine.create_table_from_arrow("adult", data)
        yield out
    finally:
        for engine in out.values():
            engine.close()
        drop_database(spark_session, database)


def spec(name: str) -> dict:
    return {"source": {"table": "adult"},
            "attributes": {"id": "insensitive", "sex": "quasi_identifier", "age": "quasi_identifier",
                           "quarter_age": "quasi_identifier", "day": "quasi_identifier",
                           "education": "quasi_identifier", "occupation": "sensitive"},
            "transformation": {"method": "anatomy", "l": L, "seed": 2006},
            "output": {"mode": "table", "name": name}}


def sorted_rows(got) -> list[tuple]:
    return sorted((tuple(r) for r in got), key=lambda r: tuple((v is None, str(v)) for v in r))


def rows(engine, name: str) -> list[tuple]:
    return sorted_rows(engine.fetch(exp.select("*").from_(table(name)))[1])


def test_the_same_groups_on_every_engine_and_from_compiled_sql(engines, spark_session, connect_server):
    from sqlanon.engines.spark import SparkEngine

    written = {}
    for name, engine in engines.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ReproducibleNoiseWarning)
            report = api.apply(spec_from_dict(spec("released")), engine=engine, metrics=()).as_dict()
        written[name] = (rows(engine, "released"), rows(engine, "released__sensitive"),
                         {k: v for k, v in report.items() if k != "outputs"})
    source = [tuple(r.values()) for r in adult_rows().to_pylist()]
    check_release(sorted(source), sorted(written["duckdb"][0]), written["duckdb"][1], L)
    for name in ("postgres", "spark"):
        assert written[name] == written["duckdb"], name
    printed = spec("compiled") | {"output": {"mode": "sql", "dialect": "spark"}}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ReproducibleNoiseWarning)
        sql = api.compile_sql(spec_from_dict(printed), engine=engines["duckdb"])
    statements = [s.strip() for s in sql.split(";\n") if s.strip()]
    remote = SparkEngine(remote=connect_server)
    try:
        remote.execute_script(f"USE {spark_session.catalog.currentDatabase()}")
        st, qit = (remote.fetch_script(s)[1] for s in statements)
    finally:
        remote.close()
    assert sorted_rows(qit) == written["duckdb"][0]
    assert sorted_rows(st) == written["duckdb"][1]

