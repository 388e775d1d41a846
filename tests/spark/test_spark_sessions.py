"""The session a Spark engine runs on, and the refusal of what Spark cannot do (a small table)."""

from __future__ import annotations

import pyarrow as pa
import pytest
from sqlglot import exp

from sqlanon import api
from sqlanon.engines import connect
from sqlanon.errors import EngineError, SpecError, UnsupportedError
from sqlanon.methods.rng import ReproducibleNoiseWarning
from sqlanon.spec import spec_from_dict
from sqlanon.sql.nodes import alias, col, lit, table

pytestmark = pytest.mark.spark


def test_a_connection_string_uses_the_running_session_and_leaves_it_running(spark_session):
    with connect("spark://local[2]") as engine:
        assert engine.session is spark_session
        assert engine.fetch(exp.select(alias(lit(42), "x"))) == \
            (["x"], [(42,)])
    assert spark_session.sql("SELECT 1 AS y").collect()[0].y == 1


def test_individual_ranking_sorts_in_one_task_on_two_cores_unless_told_otherwise(spark_session):
    """The default asks the session its cores (2 here) for a large table; a given line or ``None``
    is kept."""
    from sqlanon.engines.spark import SparkEngine

    chosen, told, unlimited = (SparkEngine(session=spark_session, one_task_sort_rows=rows)
                               for rows in ("auto", 5, None))
    assert chosen._session_cores() == spark_session.sparkContext.defaultParallelism == 2
    assert chosen.sorts_in_one_task(10**9) and unlimited.sorts_in_one_task(10**9)
    assert told.sorts_in_one_task(5) and not told.sorts_in_one_task(6)


def test_noise_on_a_catalog_table_is_written_by_spark_and_refused_where_values_are_joined_back(spark):
    spark.create_table_from_arrow("people", pa.table({"age": [23, 27, 22, 43, 47], "zip": ["1"] * 5}))
    spec = {"source": {"table": "people"},
            "attributes": {"age": {"role": "quasi_identifier", "type": "integer"}},
            "transformation": {"method": "noise", "mechanism": "uncorrelated", "attributes": ["age"],
                               "alpha": 0.5, "seed": 1},
            "output": {"mode": "table", "name": "people_noisy"}}
    with pytest.warns(ReproducibleNoiseWarning):
        report = api.apply(spec_from_dict(spec), engine=spark)
    assert report.outputs["rows"] == 5
    noisy = spark.fetch(exp.select(col("age"), col("zip")).from_(table("people_noisy")))[1]
    assert len(noisy) == 5 and {z for _, z in noisy} == {"1"}
    assert sorted(a for a, _ in noisy) != [22.0, 23.0, 27.0, 43.0, 47.0]
    spec["transformation"] = {"method": "noise", "mechanism": "rank_swap", "attributes": ["age"], "p": 50}
    spec["output"] = {"mode": "table", "name": "people_swapped"}
    with pytest.raises(UnsupportedError, match="neither positional_join nor stable_row_key"):
        api.apply(spec_from_dict(spec), engine=spark)
    assert not spark.relation_exists("people_swapped")


def test_a_source_in_another_database_is_found_and_written_beside(spark, spark_session):
    from tests.outputs.people import KEPT, MASKED, canon, load_people, people_spec

    spark_session.sql("CREATE DATABASE IF NOT EXISTS clinic")
    try:
        load_people(spark, "clinic_people")
        spark.execute_script("CREATE TABLE clinic.people AS SELECT * FROM clinic_people")
        d = people_spec(transformation={"suppressed": "mask"})
        d["source"]["schema"] = "clinic"
        report = api.apply(spec_from_dict(d), engine=spark)
        assert report.outputs["relation"] == "people_anon"
        assert spark.relation_exists("people_anon", "clinic") and not spark.relation_exists("people_anon")
        released = spark.fetch(exp.select("id", "age", "zip", "sex", "disease").from_("clinic.people_anon"))
        assert canon(released[1]) == canon(KEPT + MASKED)
        d["source"]["schema"] = "nowhere"
        with pytest.raises(SpecError, match="no schema named 'nowhere'"):
            api.apply(spec_from_dict(d), engine=spark)
    finally:
        spark_session.sql("DROP DATABASE IF EXISTS clinic CASCADE")


def test_a_failed_create_table_as_leaves_no_table(spark):
    with pytest.raises(EngineError, match="boom"):
        spark.execute_script("CREATE TABLE half AS SELECT id, IF(id = 7, RAISE_ERROR('boom'), id) AS v "
                             "FROM RANGE(10)")
    assert not spark.relation_exists("half")
