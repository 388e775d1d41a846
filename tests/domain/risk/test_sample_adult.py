"""ARX's sample risk figures for the original Adult table (nine QIs at level 0), exactly."""

from __future__ import annotations

import pytest

from sqlanon.domain.risk.histogram import SizeHistogram
from sqlanon.domain.risk.sample import BAND_EDGES, sample_risks


def test_adult_sample_figures_are_arx(adult_histogram):
    r = sample_risks(adult_histogram, threshold=0.2)
    assert r.average_risk == 0.6465751607983555
    assert r.lowest_risk == 0.022222222222222223
    assert r.highest_risk == 1.0
    assert r.records_at_highest_risk == 15_512
    assert r.fraction_at_highest_risk == 0.5142895033485844
    assert r.fraction_at_risk == 0.7781314236456468
    assert r.sample_uniques == 15_512
    assert r.attackers()["prosecutor"]["success_rate"] == r.average_risk
    assert r.estimated() == {"prosecutor": 1.0, "journalist": 1.0, "marketer": 0.6465751607983555}


def test_figures_by_their_definition_on_a_small_release():
    class_sizes = [1, 1, 2, 2, 2, 3, 7, 7]
    r = sample_risks(SizeHistogram.of_class_sizes(class_sizes), threshold=1 / 3)
    records = sum(class_sizes)
    assert r.records == records and r.classes == len(class_sizes)
    assert r.average_risk == pytest.approx(sum(s * (1 / s) for s in class_sizes) / records)
    assert (r.highest_risk, r.lowest_risk) == (1.0, 1 / 7)
    assert (r.records_at_highest_risk, r.records_at_lowest_risk) == (2, 14)
    assert r.records_at_risk == 2 + 6  # risk 1 and 1/2 are above 1/3; 1/3 itself is not
    assert sum(r.bands) == pytest.approx(1.0)
    assert r.bands[BAND_EDGES.index(1.0)] == pytest.approx(2 / records)
    assert r.bands[BAND_EDGES.index(0.143)] == pytest.approx(14 / records)  # 0.125 < 1/7 ≤ 0.143


def test_an_empty_release_has_no_risk():
    r = sample_risks(SizeHistogram.of({}))
    assert (r.highest_risk, r.average_risk, r.fraction_at_risk, r.records) == (0.0, 0.0, 0.0, 0)
