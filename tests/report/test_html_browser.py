"""The HTML report in real headless Chromium: no network request, no console error, every chart drawn
with a visible size; a screenshot of each report is stored ($SQLANON_REPORT_ARTIFACTS)."""

from __future__ import annotations

import pytest

from sqlanon import api
from sqlanon.spec.load import spec_from_dict
from tests.report import people
from tests.report.browser import open_report

pytestmark = pytest.mark.filterwarnings("ignore::sqlanon.methods.rng.ReproducibleNoiseWarning")


@pytest.fixture()
def engine(duck):
    people.create(duck)
    return duck


def check_in_browser(chromium, artifacts, page, name: str, expected: set[str]) -> None:
    shot = artifacts / f"{name}.png"
    opened = open_report(chromium, page, shot)
    assert opened.errors == []
    assert opened.requests == [page.resolve().as_uri()]  # nothing but the page itself
    assert {c["name"] for c in opened.charts} >= expected
    for c in opened.charts:
        assert c["visible"] and c["width"] > 50 and c["height"] > 50 and c["elements"] > 5, c
    assert shot.stat().st_size > 10_000


def test_generalization_report_with_search_suppression_and_a_sensitive_attribute(
        engine, chromium, artifacts, tmp_path):
    page = tmp_path / "generalization.html"
    spec = spec_from_dict(people.generalization(search="optimal", suppression_limit=0.05))
    report = api.anonymize(spec, engine=engine, html=page)
    assert report.node.suppressed_rows > 0
    check_in_browser(chromium, artifacts, page, "generalization", {
        "class-sizes", "risk-distribution", "loss-per-attribute", "lattice", "sensitive-disease",
        "sensitive-classes-disease"})


@pytest.mark.parametrize("verb", [api.apply, api.check])
def test_microaggregation_report(engine, chromium, artifacts, tmp_path, verb):
    """Written (apply) or not (check, as ``sqlanon report``): the charts after are drawn alike."""
    page = tmp_path / "microaggregation.html"
    verb(spec_from_dict(people.microaggregation()), engine=engine, html=page)
    name = "microaggregation" if verb is api.apply else "microaggregation-check"
    check_in_browser(chromium, artifacts, page, name, {
        "histogram-age", "histogram-income", "correlations", "il1s-per-attribute"})


def test_dp_noise_report_with_its_ledger(engine, chromium, artifacts, tmp_path):
    page = tmp_path / "noise.html"
    api.apply(spec_from_dict(people.laplace()), engine=engine)
    api.apply(spec_from_dict(people.laplace()), engine=engine, html=page)
    check_in_browser(chromium, artifacts, page, "noise", {
        "histogram-age", "histogram-income", "correlations", "ledger", "il1s-per-attribute"})
