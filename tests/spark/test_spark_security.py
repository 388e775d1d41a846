"""Hostile column names, labels, values and salts (quotes, semicolons, comments, unicode) on Spark:
the outputs are right and nothing else is touched. Table names stay plain: Spark's session catalog
refuses any other (tests/engines/test_spark_conformance.py)."""

from __future__ import annotations

import pytest
from sqlglot import exp

from sqlanon import api
from sqlanon.spec import spec_from_dict
from sqlanon.sql.nodes import table
from tests.outputs.people import (
    WEIRD_COLUMNS,
    WEIRD_KEPT,
    WEIRD_MASKED,
    WEIRD_ROWS,
    canon,
    load_people,
    sorted_rows,
    weird_spec,
)

pytestmark = pytest.mark.spark


@pytest.fixture()
def weird(spark):
    load_people(spark, "hostile", WEIRD_ROWS, WEIRD_COLUMNS)
    load_people(spark, "x", [(42,)], [("v", "int")])
    return spark


def hostile_spec(**output) -> dict:
    d = weird_spec(transformation={"suppressed": "mask"}, output={"name": "released", **output})
    d["source"]["table"] = "hostile"
    return d


@pytest.mark.parametrize("mode", ["table", "view"])
def test_hostile_names_and_labels_are_quoted(weird, mode):
    report = api.apply(spec_from_dict(hostile_spec(mode=mode)), engine=weird)
    assert report.outputs["relation"] == "released"
    assert sorted_rows(weird, "released") == canon(WEIRD_KEPT + WEIRD_MASKED)
    assert sorted_rows(weird, "hostile") == canon(WEIRD_ROWS)
    assert weird.fetch(exp.select("*").from_(table("x")))[1] == [(42,)]


def test_printed_spark_sql_runs_and_touches_nothing_else(weird):
    report = api.apply(spec_from_dict(hostile_spec(mode="sql", dialect="spark")), engine=weird)
    assert canon(weird.fetch_script(report.outputs["sql"].rstrip().rstrip(";"))[1]) == \
        canon(WEIRD_KEPT + WEIRD_MASKED)
    assert not weird.relation_exists("released")
    assert weird.fetch(exp.select("*").from_(table("x")))[1] == [(42,)]
