"""Working tables on Spark are cached temporary views: dropping one releases it, so that its name
can be taken again."""

from __future__ import annotations

import pytest
from sqlglot import exp

from sqlanon.sql.nodes import alias, lit, table

pytestmark = pytest.mark.spark


def temporary(name: str, value: int) -> exp.Create:
    return exp.Create(this=table(name), kind="TABLE", expression=exp.select(alias(lit(value), "x")),
                      properties=exp.Properties(expressions=[exp.TemporaryProperty()]))


def test_a_dropped_working_table_is_released_and_its_name_free_again(spark):
    spark.execute(temporary("work", 1))
    spark.drop("work")
    assert not spark.relation_exists("work")
    spark.execute(temporary("work", 2))  # refused while the engine still held the first one
    assert spark.fetch(exp.select("x").from_(table("work")))[1] == [(2,)]
