"""The HTML report's figures against plain-Python counts of the same small table, and the ways a
report is asked for (API, command line) or refused."""

from __future__ import annotations

import math
import re
import sys
from collections import Counter

import pytest

from sqlanon import api
from sqlanon.domain.hierarchy.intervals import IntervalHierarchy
from sqlanon.domain.hierarchy.masks import MaskHierarchy
from sqlanon.domain.hierarchy.table import TableHierarchy
from sqlanon.errors import SpecError, UnsupportedError
from sqlanon.report.html import document_of, risk
from sqlanon.report.html.levels import meaning
from sqlanon.spec.load import spec_from_dict
from tests.compare import same
from tests.report import people

pytestmark = pytest.mark.filterwarnings("ignore::sqlanon.methods.rng.ReproducibleNoiseWarning")

LEVELS = {"age": 3, "zip": 1, "sex": 0}


@pytest.fixture()
def engine(duck):
    people.create(duck)
    return duck


def released_classes(rows) -> tuple[Counter, list[tuple[int, list[str]]]]:
    """The classes at LEVELS (age in 20-year intervals, the zip's last digit masked) that are 5-anonymous
    and hold two diseases; every other class is suppressed (the suppression limit is 1)."""
    classes: dict[tuple, list[str]] = {}
    for _, age, _, zip_, sex, disease in rows:
        classes.setdefault((age // 20, zip_[:4], sex), []).append(disease)
    kept = [(len(d), d) for d in classes.values() if len(d) >= 5 and len(set(d)) >= 2]
    return Counter(size for size, _ in kept), kept


def test_generalization_figures_match_plain_counts(engine):
    report = api.check(spec_from_dict(people.generalization(levels=LEVELS, suppression_limit=1.0)),
                       engine=engine, html=True)
    rows = people.rows(engine)
    before = Counter(Counter((age, zip_, sex) for _, age, _, zip_, sex, _ in rows).values())
    after, kept = released_classes(rows)
    f = report.figures
    assert {h["size"]: h["classes"] for h in f["class_sizes"]["before"]} == dict(before)
    assert {h["size"]: h["classes"] for h in f["class_sizes"]["after"]} == dict(after)
    assert sum(s * c for s, c in after.items()) == report.node.rows - report.node.suppressed_rows
    assert report.node.suppressed_rows > 0  # the figures exclude suppressed rows
    diseases = Counter(d for _, d in kept for d in d)
    assert dict(f["sensitive"]["disease"]["after"]) == dict(diseases)
    assert dict(f["sensitive"]["disease"]["before"]) == dict(Counter(r[5] for r in rows))
    shown = f["sensitive"]["disease"]["classes"]
    assert [c["size"] for c in shown] == sorted(size for size, _ in kept)[:len(shown)]
    assert all(sum(n for _, n in c["values"]) == c["size"] for c in shown)
    losses = f["loss_per_attribute"]
    assert math.isclose(sum(losses.values()) / len(losses), report.metrics["loss_arithmetic"])
    assert f["levels"]["age"]["meaning"] == "intervals of width 20"
    assert f["levels"]["zip"]["meaning"] == "1 last character masked with *"


def test_a_run_without_html_computes_no_figures(engine):
    report = api.check(spec_from_dict(people.generalization(levels=LEVELS, suppression_limit=1.0)),
                       engine=engine)
    assert not hasattr(report, "figures")
    assert "<svg" not in document_of(report) and "Privacy models" in document_of(report)


def test_risk_distribution_bins_records_as_arx():
    sizes = [{"size": 1, "classes": 3}, {"size": 5, "classes": 2}, {"size": 8, "classes": 1},
             {"size": 200, "classes": 1}]
    n = 3 + 10 + 8 + 200
    shares = dict(zip(risk.LABELS, risk.distribution(sizes)))
    # a risk on an interval's upper bound belongs to it: 1/5 = 0.2 is in ]0.167, 0.2]
    assert shares["]0.5, 1]"] == pytest.approx(3 / n)
    assert shares["]0.167, 0.2]"] == pytest.approx(10 / n)
    assert shares["]0.125, 0.143]"] == 0 and shares["]0.1, 0.125]"] == pytest.approx(8 / n)
    assert shares["]0.001, 0.01]"] == pytest.approx(200 / n)
    assert sum(shares.values()) == pytest.approx(1.0)
    s = risk.summary(sizes)
    assert s["highest risk"] == 1 and s["records at highest risk"] == 3 and s["sample uniques"] == 3
    assert s["average risk"] == pytest.approx(7 / n) and s["lowest risk"] == 1 / 200


def test_level_meanings_from_the_hierarchies():
    assert meaning(IntervalHierarchy((5, 20)), 2) == "intervals of width 20"
    assert meaning(IntervalHierarchy((5, 20)), 3) == "fully generalized (*)"
    assert meaning(MaskHierarchy(5), 3) == "3 last characters masked with *"
    table = TableHierarchy([("Paris", "France", "*"), ("Lyon", "France", "*")], source="cities")
    assert meaning(table, 0) == "original values"
    assert meaning(table, 1) == "level 1 of 2 (e.g. Paris → France)"


def test_the_search_records_the_lattice_it_explored(engine):
    spec = spec_from_dict(people.generalization(search="exhaustive", suppression_limit=0.05))
    report = api.anonymize(spec, engine=engine, dry_run=True, html=True)
    explored = report.search["explored"]
    assert explored["attributes"] == ["age", "zip", "sex"] and explored["heights"] == [4, 5, 1]
    nodes = explored["nodes"]
    assert len(nodes) == report.search["nodes_checked"] == report.search["lattice_size"]
    chosen = [report.node.levels[a] for a in explored["attributes"]]
    assert [chosen, True] in [n[:2] for n in nodes]
    anonymous = {tuple(n[0]) for n in nodes if n[1]}
    assert all(tuple(n[0]) in anonymous for n in nodes  # every generalization of an anonymous node is
               if any(all(x >= y for x, y in zip(n[0], a)) for a in anonymous))  # (k-anonymity, ℓ distinct)
    page = document_of(report)
    assert page.count('data-chart="lattice"') == 1 and "optimum" in page


def test_microaggregation_figures(engine):
    report = api.apply(spec_from_dict(people.microaggregation()), engine=engine, html=True)
    f = report.figures
    for a in ("age", "income"):
        assert sum(b["count"] for b in f["numeric_before"]["histograms"][a]) == people.ROWS
        assert sum(b["count"] for b in f["numeric_after"]["histograms"][a]) == people.ROWS
        assert f["numeric_after"]["histograms"][a][0]["lo"] == f["numeric_before"]["histograms"][a][0]["lo"]
    per = report.metrics["per_attribute"]
    assert math.isclose(math.fsum(v["sse"] for v in per.values()), report.metrics["sse"])
    assert math.isclose(sum(v["il1s"] for v in per.values()) / 2, report.metrics["il1s"])
    r = {(c["a"], c["b"]): c["r"] for c in f["numeric_before"]["correlations"]}
    expected = engine.con.execute("SELECT corr(age, income) FROM people").fetchone()[0]
    assert r[("age", "income")] == pytest.approx(expected, abs=1e-6) and r[("age", "age")] == 1


def test_microaggregation_figures_after_without_writing_are_the_applied_ones(engine):
    """check (and ``sqlanon report``) writes nothing: the released rows go to a temporary table for
    the figures after, which equal those of the written output, and the table is dropped."""
    spec = spec_from_dict(people.microaggregation())
    tables = engine.con.execute("SELECT count(*) FROM duckdb_tables()").fetchone()[0]
    checked = api.check(spec, engine=engine, html=True)
    assert engine.con.execute("SELECT count(*) FROM duckdb_tables()").fetchone()[0] == tables
    applied = api.apply(spec, engine=engine, html=True)
    assert same(checked.figures["numeric_after"], applied.figures["numeric_after"])
    assert checked.figures["numeric_after"] != checked.figures["numeric_before"]
    assert same(checked.metrics["per_attribute"], applied.metrics["per_attribute"])
    assert "was not written here" not in document_of(checked)


def test_noise_figures_after_without_writing_are_the_applied_ones(engine):
    """A seeded noise release reported without writing it: the rows are drawn into a scratch table
    that is dropped; its figures and metrics are those of the release apply writes. A DP release is
    refused (a draw only for the report would spend budget on nothing published)."""
    spec = people.laplace()
    spec["transformation"] = {"method": "noise", "mechanism": "correlated", "alpha": 0.5,
                              "attributes": ["income", "age"], "seed": 7}
    tables = engine.con.execute("SELECT count(*) FROM duckdb_tables()").fetchone()[0]
    checked = api.check(spec_from_dict(spec), engine=engine, html=True)
    assert engine.con.execute("SELECT count(*) FROM duckdb_tables()").fetchone()[0] == tables
    assert checked.outputs == {}
    applied = api.apply(spec_from_dict(spec), engine=engine, html=True)
    assert same(checked.figures["numeric_after"], applied.figures["numeric_after"])
    assert checked.figures["numeric_after"] != checked.figures["numeric_before"]
    assert same(checked.metrics["per_attribute"], applied.metrics["per_attribute"])
    with pytest.raises(SpecError, match=r"transformation\.mechanism: a DP release's report shows the draw"):
        api.check(spec_from_dict(people.laplace()), engine=engine, html=True)
    with pytest.raises(SpecError, match="check has nothing to measure before the noise is drawn"):
        api.check(spec_from_dict(spec), engine=engine)


def test_a_dp_release_shows_its_ledger(engine):
    for _ in range(2):
        report = api.apply(spec_from_dict(people.laplace()), engine=engine, html=True)
    ledger = report.figures["ledger"]
    assert [e["cumulative"] for e in ledger["entries"]] == [1.0, 2.0] and ledger["total"] == 5.0
    assert report.guarantee["ledger"]["spent"]["epsilon"] == 2.0
    assert 'data-chart="ledger"' in document_of(report)


def test_population_estimates_are_drawn_when_given(engine):
    report = api.check(spec_from_dict(people.generalization(levels=LEVELS, suppression_limit=1.0)),
                       engine=engine)
    estimates = {"model": {"population_size": 300000},
                 "before": {"zayatz": 0.26, "pitman": {"fraction": 0.04, "uniques": 120}},
                 "after": {"dankar": {"fraction": 0.001, "estimator": "pitman", "converged": True}}}
    page = document_of(report, population=estimates)
    assert 'data-chart="population-uniqueness"' in page and "dankar" in page and "300,000" in page


def test_command_line_report_and_html_options(tmp_path):
    from sqlanon.cli.main import main
    from sqlanon.engines.duckdb import DuckDBEngine

    database = tmp_path / "people.duckdb"
    with DuckDBEngine(str(database)) as e:
        people.create(e)
    import yaml

    spec = tmp_path / "spec.yml"
    spec.write_text(yaml.safe_dump({**people.generalization(search="optimal", suppression_limit=0.05),
                                    "source": {"table": "people", "database": str(database)}}))
    assert main(["report", str(spec), "-o", str(tmp_path / "report.html")]) == 0
    page = (tmp_path / "report.html").read_text()
    assert page.startswith("<!DOCTYPE html>") and 'data-chart="lattice"' in page
    assert "http://" not in page.replace("http://www.w3.org/", "") and "https://" not in page
    assert main(["check", str(spec), "--html", str(tmp_path / "check.html")]) in (0, 1)
    assert 'data-chart="class-sizes"' in (tmp_path / "check.html").read_text()


def test_refusals(engine, monkeypatch):
    spec = people.generalization(levels=LEVELS, suppression_limit=1.0)
    spec["output"] = {"mode": "in_place"}
    with pytest.raises(UnsupportedError, match="in_place"):
        api.apply(spec_from_dict(spec), engine=engine, html=True)
    monkeypatch.setitem(sys.modules, "vl_convert", None)
    with pytest.raises(UnsupportedError, match=r"sqlanon\[report\]"):
        api.check(spec_from_dict(spec), engine=engine, html=True)


def charts_of(page: str) -> list[str]:
    return re.findall(r'data-chart="([^"]+)"', page)


def test_a_notebook_shows_the_same_charts_as_the_page(engine):
    report = api.check(spec_from_dict(people.generalization(levels=LEVELS, suppression_limit=1.0)),
                       engine=engine, html=True)
    cell = report._repr_html_()
    assert cell.startswith('<div class="sqlanon-report">')
    assert charts_of(cell) == charts_of(document_of(report)) and "class-sizes" in charts_of(cell)
    frame = engine.con.execute("SELECT * FROM people").df()
    spec = people.microaggregation()
    spec["output"] = {"mode": "table"}
    result = api.apply(spec_from_dict({**spec, "source": {"table": "people"}}), data=frame, html=True)
    assert "histogram-income" in charts_of(result._repr_html_())


def test_a_numeric_sensitive_attribute_is_shown_in_bins(engine):
    spec = people.generalization(levels=LEVELS, suppression_limit=1.0)
    spec["attributes"] = {**spec["attributes"], "income": {"role": "sensitive"}}
    report = api.check(spec_from_dict(spec), engine=engine, html=True)
    income = report.figures["sensitive"]["income"]
    lo, hi = engine.con.execute("SELECT min(income), max(income) FROM people").fetchone()
    assert [label for label, _ in income["before"]] == [label for label, _ in income["after"]]
    assert len(income["after"]) == 10 and income["after"][0][0].startswith(f"[{lo:.6g}, ")
    assert sum(n for _, n in income["before"]) == people.ROWS
    assert sum(n for _, n in income["after"]) == report.node.rows - report.node.suppressed_rows
    top = engine.con.execute("SELECT count(*) FROM people WHERE income >= ?",
                             [lo + 9 * (hi - lo) / 10]).fetchone()[0]
    assert income["before"][-1][1] == top  # the maximum falls in the last bin
    assert all(sum(n for _, n in c["values"]) == c["size"] for c in income["classes"])


def test_other_methods_show_their_figures_and_text(engine, tmp_path):
    attributes = {"id": {"role": "identifier"}, "age": {"role": "quasi_identifier", "type": "integer"},
                  "income": {"role": "quasi_identifier"}, "zip": {"role": "insensitive"},
                  "sex": {"role": "insensitive"}, "disease": {"role": "sensitive"}}
    spec = {"source": {"table": "people"}, "attributes": attributes,
            "transformation": {"method": "mondrian", "k": 5}, "output": {"mode": "table", "name": "boxes"}}
    page = tmp_path / "mondrian.html"
    report = api.apply(spec_from_dict(spec), engine=engine, html=page)
    text = page.read_text()
    assert "Transformation" in text and "Metrics" in text and "transformation: mondrian" in text
    assert report._repr_html_().startswith('<div class="sqlanon-report">')


def test_population_estimates_from_risk_analyses(engine):
    report = api.check(spec_from_dict(people.generalization(levels=LEVELS, suppression_limit=1.0)),
                       engine=engine)

    def analysis(pitman: float) -> dict:
        return {"sample": {"average_risk": 0.5}, "class_sizes": {"1": 3},
                "population": {"population": 3_016_200, "sampling_fraction": 0.01,
                               "zayatz": {"uniques": 8e5, "fraction": 0.27, "converged": True},
                               "pitman": {"uniques": 4e5, "fraction": pitman, "converged": True},
                               "snb": {"uniques": 0.0, "fraction": 0.0, "converged": False},
                               "dankar": {"uniques": 4e5, "fraction": pitman, "converged": True},
                               "dankar_model": "pitman"}}

    page = document_of(report, population={"before": analysis(0.1446), "after": analysis(0.0021)})
    assert "3,016,200" in page and "0.1446" in page and "0.0021" in page
    assert page.count(">pitman<") >= 3  # the estimator rows of both phases and Dankar's choice


def test_a_small_lattice_is_drawn_whole():
    from sqlanon.report.html.generalization import lattice_points

    search = {"explored": {"attributes": ["a", "b"], "heights": [1, 2],
                           "nodes": [[[0, 0], False, None], [[1, 1], True, 0.5], [[0, 2], True, 0.5]]},
              "chosen": [1, 1], "alternatives": [{"a": 0, "b": 2}], "value": 0.5}
    points, top = lattice_points(search)
    states = {p["node"]: p["state"] for p in points}
    assert top == 3 and len(points) == 6
    assert states == {"a=0, b=0": "not anonymous", "a=1, b=1": "optimum", "a=0, b=2": "tie",
                      "a=1, b=0": "not checked", "a=0, b=1": "not checked", "a=1, b=2": "not checked"}
    by_height = {}
    for p in points:
        by_height.setdefault(p["height"], []).append(p["position"])
    assert all(sorted(v) == list(range(len(v))) for v in by_height.values())


def test_a_population_model_in_the_spec_draws_the_risk_analysis_before_and_after(engine):
    """``metrics.options.sampling_fraction``: the page's population estimates are the risk analysis's
    (``api.risk``) of the source and of the release, read from the class sizes already collected."""
    spec = people.generalization(levels=LEVELS, suppression_limit=1.0)
    spec["metrics"] = {"options": {"sampling_fraction": 0.05}}
    report = api.check(spec_from_dict(spec), engine=engine, html=True)
    risk_report = api.risk(spec, engine=engine)
    population = report.figures["population"]
    assert risk_report.release is not None and population["before"]["population"]["population"] > 0
    assert population["before"] == risk_report.original.as_dict()
    assert population["after"] == risk_report.release.as_dict()
    page = document_of(report)
    assert 'data-chart="population-uniqueness"' in page and "zayatz" in page
