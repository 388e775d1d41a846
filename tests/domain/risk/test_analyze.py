"""The analysis reads the histogram with one query on the engine and matches ARX's Adult figures."""

from __future__ import annotations

import pytest

from sqlanon.domain.metrics.risk_analysis import analyze, class_histogram
from sqlanon.domain.risk.population import USA
from sqlanon.sql.nodes import table
from tests.conftest import ADULT_QIS


def test_adult_on_duckdb_is_the_histogram_analysis(adult_engine, adult_histogram):
    a = analyze(adult_engine, table("adult"), ADULT_QIS, population=USA, threshold=0.2)
    assert a.histogram.as_dict() == adult_histogram.as_dict()
    assert a.sample.average_risk == 0.6465751607983555
    assert a.sample.fraction_at_risk == 0.7781314236456468
    assert a.population is not None
    assert a.population.pitman.fraction == pytest.approx(0.038896188531360315, rel=1e-7)
    d = a.as_dict()
    assert d["population"]["dankar_model"] == "pitman"
    assert d["class_sizes"]["1"] == 15_512
    assert any("pitman" in line for line in a.lines())


def test_one_query_reads_the_histogram(duck):
    duck.con.execute("CREATE TABLE t AS SELECT * FROM (VALUES ('a', 1), ('a', 1), ('b', 1), "
                     "('b', 2), ('b', 2), ('b', 2)) v(x, y)")
    assert class_histogram(duck, table("t"), ["x", "y"]).as_dict() == {1: 1, 2: 1, 3: 1}
    assert class_histogram(duck, table("t"), ["x"]).as_dict() == {2: 1, 4: 1}
