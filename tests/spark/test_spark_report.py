"""The HTML report's figures on Spark equal DuckDB's, computed in the same test on the same rows."""

from __future__ import annotations

import pytest

from sqlanon import api
from sqlanon.engines.duckdb import DuckDBEngine
from sqlanon.spec import spec_from_dict
from tests.report import people

pytestmark = pytest.mark.spark


def test_generalization_figures_agree_with_duckdb(spark, spark_session):
    spec = people.generalization(levels={"age": 3, "zip": 2, "sex": 0}, suppression_limit=1.0)
    spec["attributes"] = {**spec["attributes"], "income": {"role": "sensitive"}}
    with DuckDBEngine() as duck:
        people.create(duck, rows=600)
        spark_session.createDataFrame(people.rows(duck), "id INT, age INT, income DOUBLE, zip STRING, "
                                      "sex STRING, disease STRING").write.saveAsTable("people")
        expected = api.check(spec_from_dict(spec), engine=duck, html=True).figures
    found = api.check(spec_from_dict(spec), engine=spark, html=True).figures
    assert found["class_sizes"] == expected["class_sizes"] and expected["class_sizes"]["after"]
    assert found["sensitive"] == expected["sensitive"]
    assert found["loss_per_attribute"] == pytest.approx(expected["loss_per_attribute"])
    assert found["levels"] == expected["levels"]
