"""Re-identification risk metrics against brute force over the released records."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sqlanon.domain.metrics import MetricContext, get_metric
from sqlanon.errors import SpecError
from tests.domain.metrics import oracle
from tests.domain.metrics.cases import Case, cases, checked, metric

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
NAMES = ("prosecutor_risk_avg", "prosecutor_risk_max", "prosecutor_records_at_max", "marketer_risk",
         "journalist_risk_avg", "journalist_risk_max", "sample_uniques", "record_linkage")


def brute_force(case: Case, population: list[dict] | None = None) -> dict[str, float]:
    keys, kept = case.released()
    n = len(case.rows)
    size = Counter(k for k, r in zip(keys, kept) if r)
    risks = [1 / size[k] for k, r in zip(keys, kept) if r]
    if population is None:
        journalist = risks
    else:
        pop = Counter(oracle.classes(population, case.qis, case.hiers, case.levels))
        journalist = [1 / pop[k] for k, r in zip(keys, kept) if r]
    top = max(risks, default=0.0)
    return {
        "prosecutor_risk_avg": sum(risks) / len(risks) if risks else 0.0,
        "prosecutor_risk_max": top,
        "prosecutor_records_at_max": sum(1 for r in risks if r == top) / len(risks) if risks else 0.0,
        "marketer_risk": len(size) / len(risks) if risks else 0.0,
        "journalist_risk_avg": sum(journalist) / len(journalist) if journalist else 0.0,
        "journalist_risk_max": max(journalist, default=0.0),
        "sample_uniques": risks.count(1.0) / len(risks) if risks else 0.0,
        "record_linkage": sum(risks) / n,
    }


def _values(ctx: MetricContext) -> dict[str, float]:
    return {name: get_metric(name).compute(ctx) for name in NAMES}


@SETTINGS
@given(cases())
def test_risks_match_brute_force_without_population(shared_duck, case: Case):
    with checked(shared_duck, case) as ctx:
        assert _values(ctx) == pytest.approx(brute_force(case), rel=1e-12)
        assert all(get_metric(name).kind == "risk" for name in NAMES)


@SETTINGS
@given(cases(), st.data())
def test_journalist_risk_against_a_population(shared_duck, case: Case, data):
    """The population holds the table plus other people drawn from the same domains."""
    extra = [{q: data.draw(st.sampled_from([h[0] for h in case.hiers[q]])) for q in case.qis}
             for _ in range(data.draw(st.integers(0, 15)))]
    population = [{q: r[q] for q in case.qis} for r in case.rows] + extra
    cols = ", ".join(f"{q} VARCHAR" for q in case.qis)
    shared_duck.con.execute(f"CREATE OR REPLACE TABLE pop ({cols})")
    try:
        if population:
            shared_duck.con.executemany(f"INSERT INTO pop VALUES ({', '.join('?' * len(case.qis))})",
                                        [[r[q] for q in case.qis] for r in population])
        with checked(shared_duck, case, {"population": "pop"}) as ctx:
            assert _values(ctx) == pytest.approx(brute_force(case, population), rel=1e-12)
    finally:
        shared_duck.con.execute("DROP TABLE pop")


def _hand_case() -> Case:
    rows = [{"q0": v, "label": "p"} for v in ["a", "a", "a", "b", "b", "c"]]
    return Case(["q0"], {"q0": [["a", "ab", "*"], ["b", "ab", "*"], ["c", "c", "*"]]}, rows,
                {"q0": 0}, 2, 0.2)


def test_risks_by_hand(shared_duck):
    # classes a (3), b (2) released; c (1) suppressed: U = 5, two released classes
    with checked(shared_duck, _hand_case()) as ctx:
        v = _values(ctx)
    assert v["prosecutor_risk_avg"] == v["marketer_risk"] == v["journalist_risk_avg"] == 2 / 5
    assert v["prosecutor_risk_max"] == v["journalist_risk_max"] == 1 / 2
    assert v["prosecutor_records_at_max"] == 2 / 5
    assert v["sample_uniques"] == 0.0  # the unique record c is suppressed
    assert v["record_linkage"] == 2 / 6


def test_nothing_released_means_no_risk(shared_duck):
    case = _hand_case()
    case.k, case.limit = 7, 1.0  # every class is too small and everything may be suppressed
    with checked(shared_duck, case) as ctx:
        v = _values(ctx)
    assert v == {name: 0.0 for name in NAMES}


def test_population_errors(shared_duck):
    with checked(shared_duck, _hand_case(), {"population": "nope"}) as ctx:
        with pytest.raises(SpecError, match=r"metrics\.options\.population: no table or view named 'nope'"):
            metric(ctx, "journalist_risk_avg")
    shared_duck.con.execute("CREATE OR REPLACE TABLE pop AS SELECT 'a' AS q0")
    try:
        with checked(shared_duck, _hand_case(), {"population": "pop"}) as ctx:
            with pytest.raises(SpecError, match=r"the population does not contain the sample: 2 released "
                                                 r"class\(es\) have fewer records"):
                metric(ctx, "journalist_risk_max")
    finally:
        shared_duck.con.execute("DROP TABLE pop")


RELEASED_TABLE_RISKS = ("prosecutor_risk_avg", "prosecutor_risk_max", "prosecutor_records_at_max",
                        "marketer_risk", "journalist_risk_avg", "journalist_risk_max", "sample_uniques")


def test_risk_figures_describe_the_released_table_after_suppression(duck):
    """Defect guarded: sample_uniques counted the unique records before suppression (0.00484 on a
    k = 5 release of Adult, whose released table has no unique record). Every risk figure except
    record_linkage (named for the intruder's n original records) is recomputed from the rows the
    release actually wrote."""
    from sqlanon import api
    from sqlanon.spec import spec_from_dict
    from tests.outputs.people import load_people, people_spec

    load_people(duck)
    spec = spec_from_dict(people_spec(output={"mode": "table", "name": "people_release"}))
    report = api.apply(spec, engine=duck, metrics=NAMES)
    assert report.node.suppressed_rows == 3  # three singleton classes, all suppressed

    _, rows = duck.fetch_script("SELECT age, zip, sex FROM people_release")
    size = Counter(rows)
    risks = [1 / size[r] for r in rows]
    top = max(risks)
    released = {
        "prosecutor_risk_avg": sum(risks) / len(risks),
        "prosecutor_risk_max": top,
        "prosecutor_records_at_max": risks.count(top) / len(risks),
        "marketer_risk": len(size) / len(rows),
        "journalist_risk_avg": sum(risks) / len(risks),
        "journalist_risk_max": top,
        "sample_uniques": sum(1 for r in rows if size[r] == 1) / len(rows),
    }
    assert released["sample_uniques"] == 0.0
    assert {name: report.metrics[name] for name in RELEASED_TABLE_RISKS} == pytest.approx(released, rel=1e-12)
    assert report.metrics["record_linkage"] == pytest.approx(len(size) / 10, rel=1e-12)


def test_risk_details_name_the_released_rows_they_count(duck):
    """Defect guarded: metric_details said the risk figures count every row of the table
    (`rows: 100000, population: table` on the demo's release) while they are computed over the
    released records, after suppression. record_linkage is named for the n original records."""
    from sqlanon import api
    from sqlanon.spec import spec_from_dict
    from tests.outputs.people import load_people, people_spec

    load_people(duck)
    spec = spec_from_dict(people_spec(output={"mode": "table", "name": "people_release"}))
    report = api.check(spec, engine=duck, metrics=NAMES)
    n, suppressed = report.node.rows, report.node.suppressed_rows
    assert suppressed == 3
    details = report.as_dict()["metric_details"]
    for name in RELEASED_TABLE_RISKS:
        assert details[name] == {"rows": n - suppressed, "population": "released table"}, name
    assert details["record_linkage"] == {"rows": n, "population": "table"}
