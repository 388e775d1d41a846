"""The relaxed average risk (ARX's average, highest risk and records at risk): ARX's size threshold,
a hand-computed table, every node of random tables against the definition in both checks, and the
search against exhaustive search."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sqlanon.domain.models import build_model
from sqlanon.domain.models.average_risk import AverageRisk, size_threshold
from sqlanon.domain.models.k_anonymity import KAnonymity
from sqlanon.errors import SpecError
from sqlanon.methods.generalization.evaluator import Evaluator
from sqlanon.methods.generalization.search.fast import FastEvaluator
from tests.domain.models.risk_cases import (
    ROWS,
    class_sizes,
    every_node,
    per_size_oracle,
    problem,
    search_matches_exhaustive,
)


def test_size_threshold_is_arxs():
    """floor(1/h), plus one when 1/floor(1/h) exceeds h by 1 % of h or more (ParameterTranslation)."""
    assert [size_threshold(h) for h in (1.0, 0.5, 0.2, 0.1, 0.01)] == [1, 2, 5, 10, 100]
    assert size_threshold(0.3) == 4  # 1/3 exceeds 0.3 by 11 %
    assert size_threshold(0.334) == 3  # 1/3 is below 0.334
    assert size_threshold(0.33) == 4  # 1/3 − 0.33 = 0.00333 ≥ 0.0033
    assert size_threshold(0.3334) == 3


def test_hand_computed_records_at_risk(engine):
    """Classes of 1, 1, 2, 3 and 3 rows (n = 10), average bound 0.5, highest risk 0.4 (size threshold
    3: classes of 1 and 2 rows are at risk). Kept from size 1: 4 of 10 records at risk; from size 2:
    2 of the 8 released records (0.25), average (3 + 1) / 10. So with records_at_risk 0.25 the two
    single rows go; with 0.4 nothing does; with 0.2 the class of 2 goes too."""
    rows = [("a", "0"), ("b", "0"), ("c", "0"), ("c", "0"), ("d", "0"), ("d", "0"), ("d", "0"),
            ("e", "0"), ("e", "0"), ("e", "0")]
    for share, want in ((0.25, (True, 2, 3, 0.4)), (0.4, (True, 0, 5, 0.5)), (0.2, (True, 4, 2, 0.3))):
        p = problem(engine, rows, [AverageRisk(0.5, 0.4, share)])
        with Evaluator(p) as ev:
            check = ev.check({"q0": 0, "q1": 0}, 0.5)
            assert (check.anonymous, check.outlier_rows, check.classes, check.models[0].achieved) == want
            r = FastEvaluator(ev, p.models, None, 0.5).evaluate((0, 0))
            assert (r.anonymous, r.outlier_rows, r.classes) == want[:3]


def test_spec_keys_and_errors():
    path = "privacy[0].average_risk"
    m = build_model("average_risk", {"threshold": 0.1, "highest_risk": 0.2, "records_at_risk": 0.05}, path)
    assert m == AverageRisk(0.1, 0.2, 0.05) and m.smallest_size == 5
    assert build_model("average_risk", {"threshold": 0.1, "highest_risk": 0.2}, path).records_share == 0.0
    with pytest.raises(SpecError, match=r"privacy\[0\]\.average_risk\.highest_risk: highest_risk must be a "
                                        r"number in \(0\.0, 1\.0\], got 0"):
        build_model("average_risk", {"threshold": 0.1, "highest_risk": 0}, path)
    with pytest.raises(SpecError, match=r"average_risk\.records_at_risk: records_at_risk must be a number"):
        build_model("average_risk", {"threshold": 0.1, "highest_risk": 0.2, "records_at_risk": 1.5}, path)
    with pytest.raises(SpecError, match=r"average_risk\.records_at_risk: records_at_risk bounds the records "
                                        r"above highest_risk: give highest_risk too"):
        build_model("average_risk", {"threshold": 0.1, "records_at_risk": 0.1}, path)


def relaxed(threshold: float, highest: float, share: float):
    """The definition on the released classes: classes / n with the suppressed rows one class, and
    the released records in classes below ARX's size threshold a share of the released records."""
    smallest = size_threshold(highest)

    def holds(kept: list[int], n: int) -> bool:
        classes = len(kept) + (1 if sum(kept) < n else 0)
        released = sum(kept)
        at_risk = sum(x for x in kept if x < smallest)
        return 1.0 / (n / classes) <= threshold and float(at_risk) / float(released) <= share

    return holds


PARAMETERS = st.tuples(st.sampled_from([0.2, 1 / 3, 0.5, 1.0]), st.sampled_from([0.5, 0.3, 0.2]),
                       st.sampled_from([0.0, 0.1, 0.3]))


@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=ROWS, parameters=PARAMETERS, limit=st.sampled_from([0.0, 0.1, 0.3]))
def test_every_node_matches_the_definition(engine, rows, parameters, limit):
    holds = relaxed(*parameters)
    every_node(engine, rows, [AverageRisk(*parameters)],
               lambda node: per_size_oracle(class_sizes(rows, node), len(rows), holds, limit), limit)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=ROWS, parameters=PARAMETERS, limit=st.sampled_from([0.0, 0.2]), with_k=st.booleans())
def test_search_finds_the_exhaustive_optimum(engine, rows, parameters, limit, with_k):
    models = [AverageRisk(*parameters)] + ([KAnonymity(2)] if with_k else [])
    search_matches_exhaustive(engine, rows, models, limit)
