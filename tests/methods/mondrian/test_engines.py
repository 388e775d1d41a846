"""Mondrian gives the same partitions and rows on PostgreSQL and Spark as on DuckDB (a sample of
UCI Adult with a categorical quasi-identifier as text; strict everywhere, relaxed on PostgreSQL,
whose row key keeps the stored order; Spark, local and over Connect, refuses relaxed cuts)."""

from __future__ import annotations

import dataclasses

import pyarrow as pa
import pytest

from sqlanon import api
from sqlanon.engines.duckdb import DuckDBEngine
from sqlanon.errors import SpecError
from sqlanon.spec import spec_from_dict
from tests.compare import same
from tests.conftest import DATA, require_data
from tests.methods.mondrian.adult_uci import QIS, load
from tests.ports import free_port


def sample(rows: int) -> pa.Table:
    data = load(require_data(DATA / "adult-uci" / "adult.data")).slice(0, rows)
    text = pa.array([f"w{v}" for v in data.column("workclass").to_pylist()])
    return data.set_column(data.schema.get_field_index("workclass"), "workclass", text)


def spec(mode: str, name: str, k: int = 10, output: str = "table", path: str = "auto") -> object:
    return spec_from_dict({
        "source": {"table": "adult_sample"},
        "attributes": {**{q: {"role": "quasi_identifier"} for q in QIS}, "income": {"role": "sensitive"}},
        "privacy": [{"k_anonymity": {"k": k}}, {"l_diversity": {"attribute": "income", "l": 2}}]
        if mode == "strict" else [{"k_anonymity": {"k": k}}],
        "transformation": {"method": "mondrian", "mode": mode, "path": path},
        "output": {"mode": output, "name": name}})


def released(engine, name: str, schema: str | None = None, columns: list[str] | None = None) -> list[tuple]:
    from sqlglot import exp

    from sqlanon.sql.nodes import col, table

    rows = engine.fetch(exp.select(*[col(c) for c in columns or [*QIS, "income"]])
                        .from_(table(name, schema)))[1]
    return sorted(tuple(str(v) for v in r) for r in rows)


def figures(report) -> dict:
    d = report.as_dict()
    return {k: d[k] for k in ("partitions", "classes", "smallest_partition", "rounds", "metrics")}


def _compare(other, modes: list[str], rows: int, k: int, loader=None, schema: str | None = None) -> None:
    data = sample(rows)
    duck = DuckDBEngine()
    try:
        for engine in (duck, loader or other):
            engine.create_table_from_arrow("adult_sample", data)
        for mode in modes:
            expected = api.apply(spec(mode, f"out_{mode}", k), engine=duck)
            d = spec(mode, f"out_{mode}", k)
            if schema is not None:
                d = dataclasses.replace(d, source=dataclasses.replace(d.source, schema=schema))
            got = api.apply(d, engine=other)
            assert same(figures(got), figures(expected))
            assert released(other, f"out_{mode}", schema) == released(duck, f"out_{mode}")
    finally:
        duck.close()


@pytest.mark.postgres
def test_postgres_as_duckdb(pg_server):
    from sqlanon.engines.postgres import PostgresEngine

    engine = PostgresEngine(pg_server.create_schema("mondrian_cross"))
    try:
        _compare(engine, ["strict", "relaxed"], 1500, 10)
        # a relaxed view (in memory) and printed SQL (database path) release the table's rows
        table = released(engine, "out_relaxed")
        api.apply(spec("relaxed", "view_relaxed", output="view"), engine=engine)
        assert released(engine, "view_relaxed") == table
        printed = api.apply(spec("relaxed", "sql_relaxed", output="sql", path="database"),
                            engine=engine).outputs["sql"]
        rows = engine.fetch_script(printed.rstrip().rstrip(";"))[1]
        names = list(engine.fetch_script(printed.rstrip().rstrip(";") + " LIMIT 0")[0])
        positions = [names.index(c) for c in [*QIS, "income"]]
        assert sorted(tuple(str(r[i]) for i in positions) for r in rows) == table
    finally:
        engine.close()


@pytest.mark.spark
def test_spark_as_duckdb(spark):
    _compare(spark, ["strict"], 200, 40)
    with pytest.raises(SpecError, match="relaxed cut"):
        api.check(spec("relaxed", "unused"), engine=spark)


@pytest.mark.spark
def test_spark_connect_as_duckdb(spark, spark_session):
    """Over Spark Connect (a server in the test session's JVM): each round's work table is made from
    the last one, which is dropped before it."""
    from sqlanon.engines.spark import SparkEngine

    context = spark_session._jsc.sc()
    port = free_port()
    context.conf().set("spark.connect.grpc.binding.port", str(port))
    service = spark_session._jvm.org.apache.spark.sql.connect.service.SparkConnectService
    service.start(context)
    remote = SparkEngine(remote=f"sc://127.0.0.1:{port}")
    try:
        database = spark_session.catalog.currentDatabase()
        _compare(remote, ["strict"], 120, 30, loader=spark, schema=database)
    finally:
        remote.close()
        service.stop(getattr(service, "stop$default$1")(), getattr(service, "stop$default$2")())
