"""``sqlanon risk``: text and JSON, the population options, and one-line errors."""

from __future__ import annotations

import json
from pathlib import Path


def test_risk_json_has_the_original_and_the_release(workdir: Path, cli):
    r = cli("risk", "spec.yml", "--sampling-fraction", "0.1", "--threshold", "0.3", "--json")
    assert r.code == 0, r.err
    body = json.loads(r.out)
    original, release = body["original"], body["release"]
    assert original["sample"]["records"] == 30 and original["sample"]["threshold"] == 0.3
    assert original["population"]["population"] == 300
    assert release["levels"] == {"age": 2, "zip": 5}
    assert release["sample"]["records"] == 30 - release["suppressed_rows"]
    assert release["sample"]["highest_risk"] <= 0.5  # k = 2 holds for every kept class


def test_risk_text_names_the_estimators(workdir: Path, cli):
    r = cli("risk", "spec.yml", "--population", "usa")
    assert r.code == 0, r.err
    assert "risk of the original table" in r.out and "risk of the release" in r.out
    assert "population 317238626" in r.out and "dankar" in r.out


def test_population_and_sampling_fraction_exclude_each_other(workdir: Path, cli):
    r = cli("risk", "spec.yml", "--population", "1000", "--sampling-fraction", "0.1")
    assert r.code == 2 and "not allowed with argument" in r.err


def test_a_bad_sampling_fraction_is_one_line_naming_it(workdir: Path, cli):
    r = cli("risk", "spec.yml", "--sampling-fraction", "0")
    assert r.code == 2
    assert r.err.count("\n") == 1 and "sampling_fraction" in r.err
