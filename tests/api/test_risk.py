"""``api.risk``: the original table's figures (ARX's, on Adult) and the release's (kept classes only)."""

from __future__ import annotations

import pytest

from sqlanon import api
from sqlanon.domain.risk.histogram import SizeHistogram
from sqlanon.domain.risk.population import USA, estimate
from sqlanon.domain.risk.sample import sample_risks
from sqlanon.errors import SpecError
from tests.conftest import adult_spec_dict

LEVELS = {"age": 2, "education": 2, "marital-status": 2, "native-country": 1, "workclass": 1,
          "occupation": 1, "race": 1}


def test_original_adult_figures_with_the_usa_population(adult_dir, adult_engine):
    report = api.risk(adult_spec_dict(adult_dir), engine=adult_engine, population="usa")
    o = report.original
    assert o.histogram.classes == 19_502
    assert o.sample.average_risk == 0.6465751607983555
    assert o.sample.fraction_at_risk == 0.7781314236456468
    assert o.population is not None and o.population.population == USA
    assert o.population.zayatz.fraction == pytest.approx(0.2645647181504129, rel=1e-7)
    assert report.release is None  # the spec fixes no levels
    assert "pitman" in report.text()


def test_release_excludes_the_suppressed_rows_and_agrees_with_the_check(adult_dir, adult_engine):
    spec = adult_spec_dict(adult_dir, levels=LEVELS, limit=0.05,
                           privacy=[{"k_anonymity": {"k": 3}}])
    spec["metrics"] = {"names": ["prosecutor_risk_avg", "prosecutor_risk_max", "sample_uniques",
                                 "population_uniques"],
                       "options": {"sampling_fraction": 0.01}}
    report = api.risk(spec, engine=adult_engine)
    check = api.check(spec, engine=adult_engine)
    release = report.release
    assert release is not None and check.anonymous
    assert report.suppressed_rows == check.node.suppressed_rows > 0
    assert release.histogram.records == 30_162 - report.suppressed_rows
    assert release.histogram.sizes.min() >= 3
    assert release.sample.average_risk == pytest.approx(check.metrics["prosecutor_risk_avg"], rel=1e-12)
    assert release.sample.highest_risk == pytest.approx(check.metrics["prosecutor_risk_max"], rel=1e-12)
    assert release.sample.fraction_unique == check.metrics["sample_uniques"] == 0.0
    # N comes from the table's rows, the estimates from the released histogram
    assert release.population is not None and release.population.population == 3_016_200
    expected = estimate(release.histogram, 3_016_200)
    assert release.population.dankar.fraction == expected.dankar.fraction
    assert check.metrics["population_uniques"] == expected.dankar.fraction


def test_release_of_a_node_with_uniques_estimates_them(adult_dir, adult_engine):
    levels = {"age": 1, "education": 0}
    report = api.risk(adult_spec_dict(adult_dir, levels=levels), engine=adult_engine,
                      sampling_fraction=0.1, threshold=0.5)
    release = report.release
    assert release is not None
    assert release.sample.records == 30_162 - report.suppressed_rows
    assert release.sample == sample_risks(SizeHistogram.of(release.histogram.as_dict()), 0.5)
    assert release.population is not None and release.population.pitman.available


@pytest.mark.parametrize(("kwargs", "options", "path"), [
    ({"sampling_fraction": 2.0}, {}, "sampling_fraction"),
    ({"population": 10}, {}, "population"),
    ({}, {"population_size": "mars"}, "metrics.options.population_size"),
    ({}, {"population_size": 100_000, "sampling_fraction": 0.1}, "metrics.options.sampling_fraction"),
    ({"threshold": 3}, {}, "risk_threshold"),
])
def test_bad_population_models_name_the_key(adult_dir, adult_engine, kwargs, options, path):
    spec = adult_spec_dict(adult_dir)
    spec["metrics"] = {"names": [], "options": options}
    with pytest.raises(SpecError) as err:
        api.risk(spec, engine=adult_engine, **kwargs)
    assert err.value.path == path
    assert "\n" not in str(err.value)


def test_population_uniqueness_model_in_check_apply_and_compile(adult_dir, adult_engine):
    """The SQL form runs in the check (node tables) and in the output statement (the plan's steps):
    the node's Zayatz estimate is above the bound, so its size-1 classes are suppressed."""
    levels = {"age": 2, "education": 1, "marital-status": 1, "native-country": 1, "workclass": 1,
              "occupation": 1, "race": 1}
    plain = api.risk(adult_spec_dict(adult_dir, levels=levels, privacy=[{"k_anonymity": {"k": 1}}]),
                     engine=adult_engine, sampling_fraction=0.1)
    assert plain.release is not None and plain.suppressed_rows == 0
    node = plain.release.histogram
    assert estimate(node, 301_620).zayatz.fraction > 0.001
    spec = adult_spec_dict(adult_dir, levels=levels, limit=0.1, privacy=[
        {"population_uniqueness": {"threshold": 0.001, "sampling_fraction": 0.1, "estimator": "zayatz"}}])
    spec["output"] = {"mode": "table", "name": "adult_pu"}
    report = api.apply(spec, engine=adult_engine)
    assert report.anonymous and report.node.suppressed_rows == node.classes_of_size(1)
    written = adult_engine.con.execute('SELECT count(*) FROM "adult_pu"').fetchone()[0]
    assert written == 30_162 - node.classes_of_size(1)
    release = api.risk(spec, engine=adult_engine).release
    assert release is not None and release.sample.sample_uniques == 0
    with pytest.raises(Exception, match="needs a connection"):
        api.compile_spec(spec, offline=True)


def test_search_analyses_the_chosen_release(adult_dir, adult_engine):
    qis = ["sex", "age", "race"]
    spec = adult_spec_dict(adult_dir, qis=qis, privacy=[{"k_anonymity": {"k": 10}}], limit=0.02)
    report = api.risk(spec, engine=adult_engine, search=True)
    chosen = api.anonymize(spec, engine=adult_engine, dry_run=True).node
    assert report.release is not None and report.levels == chosen.levels
    assert report.suppressed_rows == chosen.suppressed_rows
    assert report.release.sample.highest_risk <= 0.1


def test_sdcmicro_measures_of_the_table_and_of_the_written_release(duck, tmp_path):
    """``sdcmicro``/``suda2``: sdcMicro's measures of the source and of the release equal those
    measured directly on the source and on the rows ``apply`` writes; the weight is the spec's."""
    import numpy as np
    import pyarrow as pa

    from sqlanon.domain.risk.individual import individual_risk
    from sqlanon.domain.risk.suda2 import suda2

    rng = np.random.default_rng(5)
    n = 600
    duck.create_table_from_arrow("people", pa.table({
        "age": rng.integers(20, 70, n), "sex": rng.choice(["F", "M"], n),
        "zip": rng.choice([f"130{i:02d}" for i in range(12)], n), "w": rng.uniform(5, 50, n)}))
    spec = {"source": {"table": "people"},
            "attributes": {"age": {"role": "quasi_identifier",
                                   "hierarchy": {"intervals": {"widths": [10, 20]}}},
                           "sex": {"role": "quasi_identifier", "hierarchy": {"mask": {"levels": 1}}},
                           "zip": {"role": "quasi_identifier", "hierarchy": {"mask": {"levels": 2}}},
                           "w": "insensitive"},
            "privacy": [{"k_anonymity": {"k": 3}}],
            "transformation": {"levels": {"age": 1, "sex": 0, "zip": 0}, "suppression_limit": 0.5},
            "metrics": {"options": {"sampling_weight": "w", "sampling_fraction": 0.05}},
            "output": {"mode": "table", "name": "released", "replace": True}}
    qis = ["age", "sex", "zip"]
    plain = api.risk(spec, engine=duck)
    assert plain.sdc_original is None and "sdcmicro" not in plain.as_dict()["original"]
    report = api.risk(spec, engine=duck, suda2=True, suda2_max_size=2)
    api.apply(spec, engine=duck)
    assert report.suppressed_rows > 0
    for measured, relation in [(report.sdc_original, "people"), (report.sdc_release, "released")]:
        assert measured is not None and measured.suda2 is not None
        direct = individual_risk(duck, relation, qis, "w")
        assert measured.individual.as_dict() == pytest.approx(direct.as_dict(), rel=1e-12)  # sum order
        assert measured.suda2.as_dict() == suda2(duck, relation, qis, max_size=2, dis_fraction=0.05).as_dict()
    assert report.sdc_release is not None
    assert report.sdc_release.individual.records == n - report.suppressed_rows
    d = report.as_dict()
    assert d["release"]["sdcmicro"]["suda2"]["max_size"] == 2
    assert "sdcMicro individual risk (weights w)" in report.text()


def test_a_privacy_unit_makes_the_classes_count_persons(duck):
    """With ``privacy_unit``, the risk figures (ARX's and sdcMicro's) are those of one record per
    person, before and after, checked against counts of persons in plain Python."""
    from collections import Counter

    import numpy as np
    import pyarrow as pa

    rng = np.random.default_rng(11)
    persons = 300
    ages, zips = rng.integers(20, 60, persons), rng.choice([f"130{i:02d}" for i in range(8)], persons)
    visits = rng.integers(1, 5, persons)
    pid = np.repeat(np.arange(persons), visits)
    duck.create_table_from_arrow("visits", pa.table({
        "pid": pid, "age": ages[pid], "zip": zips[pid], "ward": rng.choice(["a", "b"], len(pid))}))
    spec = {"source": {"table": "visits"}, "privacy_unit": "pid",
            "attributes": {"pid": "insensitive", "ward": "insensitive",
                           "age": {"role": "quasi_identifier",
                                   "hierarchy": {"intervals": {"widths": [10, 20]}}},
                           "zip": {"role": "quasi_identifier", "hierarchy": {"mask": {"levels": 2}}}},
            "privacy": [{"k_anonymity": {"k": 8}}],
            "transformation": {"levels": {"age": 1, "zip": 0}, "suppression_limit": 0.5}}
    report = api.risk(spec, engine=duck, sdcmicro=True)
    before = Counter(Counter(zip(ages.tolist(), zips.tolist())).values())
    assert report.original.histogram.records == persons < len(pid)
    assert dict(zip(report.original.histogram.sizes.tolist(), report.original.histogram.counts.tolist())) \
        == dict(before)
    decade = Counter(zip((ages // 10).tolist(), zips.tolist()))
    kept = {c: n for c, n in decade.items() if n >= 8}
    assert report.release is not None
    assert report.suppressed_rows == persons - sum(kept.values()) > 0  # persons
    assert report.release.histogram.records == sum(kept.values())
    assert report.release.sample.average_risk == pytest.approx(len(kept) / sum(kept.values()))
    assert report.sdc_original is not None and report.sdc_original.individual.records == persons
    assert report.sdc_release is not None and report.sdc_release.individual.records == sum(kept.values())
    assert report.sdc_release.individual.classes == len(kept)
    rows = dict(spec)
    del rows["privacy_unit"]
    assert api.risk(rows, engine=duck).original.histogram.records == len(pid)
