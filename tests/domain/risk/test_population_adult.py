"""ARX's population-uniqueness figures for the original Adult table (nine QIs at level 0)."""

from __future__ import annotations

import pytest

from sqlanon.domain.risk.population import USA, PopulationModel, estimate

REL = 1e-7


def test_adult_histogram_has_arx_class_count(adult_histogram):
    assert adult_histogram.classes == 19_502
    assert adult_histogram.records == 30_162


def test_usa_population_pitman_zayatz_and_dankar(adult_histogram):
    e = estimate(adult_histogram, USA)
    assert e.pitman.uniques == pytest.approx(12_339_373.406325705, rel=REL)
    assert e.pitman.fraction == pytest.approx(0.038896188531360315, rel=REL)
    assert e.zayatz.uniques == pytest.approx(83_930_147.67411424, rel=REL)
    assert e.zayatz.fraction == pytest.approx(0.2645647181504129, rel=REL)
    assert e.dankar_model == "pitman"
    assert e.dankar.uniques == e.pitman.uniques


@pytest.mark.parametrize(("fraction", "pitman", "zayatz"), [
    (0.01, 0.1446083531167384, 0.2717127199363312),
    (0.1, 0.27684993883653597, 0.3207402393466189),
])
def test_sampling_fraction_populations(adult_histogram, fraction, pitman, zayatz):
    model = PopulationModel.of(adult_histogram.records, sampling_fraction=fraction)
    assert model.size == round(30_162 / fraction)
    e = estimate(adult_histogram, model.size)
    assert e.pitman.fraction == pytest.approx(pitman, rel=REL)
    assert e.zayatz.fraction == pytest.approx(zayatz, rel=REL)
    assert e.dankar_model == "pitman"  # f <= 0.1 and Pitman converged
