"""The HTML report's figures on PostgreSQL equal DuckDB's, computed in the same test on the same rows."""

from __future__ import annotations

import pytest

from sqlanon import api
from sqlanon.engines.duckdb import DuckDBEngine
from sqlanon.spec import spec_from_dict
from tests.report import people

pytestmark = pytest.mark.filterwarnings("ignore::sqlanon.methods.rng.ReproducibleNoiseWarning")


def test_report_figures_agree_with_duckdb(pg):
    with DuckDBEngine() as duck:
        people.create(duck, rows=600)
        rows = people.rows(duck)
        pg.execute_script("CREATE TABLE people (id INTEGER, age INTEGER, income DOUBLE PRECISION, "
                          "zip TEXT, sex TEXT, disease TEXT)")
        pg.insert_rows("people", rows)
        figures = []
        for engine in (duck, pg):
            spec = people.generalization(levels={"age": 3, "zip": 2, "sex": 0}, suppression_limit=1.0)
            generalized = api.check(spec_from_dict(spec), engine=engine, html=True).figures
            micro = api.apply(spec_from_dict(people.microaggregation()), engine=engine, html=True).figures
            figures.append((generalized, micro))
    (g_duck, m_duck), (g_pg, m_pg) = figures
    assert g_pg["class_sizes"] == g_duck["class_sizes"] and g_duck["class_sizes"]["after"]
    assert g_pg["sensitive"] == g_duck["sensitive"]
    assert g_pg["loss_per_attribute"] == pytest.approx(g_duck["loss_per_attribute"])
    for phase in ("numeric_before", "numeric_after"):
        assert m_pg[phase]["histograms"] == m_duck[phase]["histograms"]
        assert [c["r"] for c in m_pg[phase]["correlations"]] == pytest.approx(
            [c["r"] for c in m_duck[phase]["correlations"]])
