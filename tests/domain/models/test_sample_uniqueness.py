"""Sample uniqueness (ARX's SampleUniqueness): a hand-computed table, every node of random tables
against the definition in both checks, and the search against exhaustive search."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sqlanon.domain.models import build_model
from sqlanon.domain.models.k_anonymity import KAnonymity
from sqlanon.domain.models.sample_uniqueness import SampleUniqueness
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


def test_hand_computed_uniques(engine):
    """Classes of 1, 1, 2, 3 and 3 rows (n = 10): 2 of 10 records are unique. Within 0.2 nothing is
    suppressed (achieved 0.2); within 0.1 the two single rows go (budget permitting) and none of the
    8 released records is unique (over a budget of one row, nothing is suppressed: 0.2); a node with
    one class of 10 has no unique record."""
    rows = [("a", "0"), ("b", "0"), ("c", "0"), ("c", "0"), ("d", "0"), ("d", "0"), ("d", "0"),
            ("e", "0"), ("e", "0"), ("e", "0")]
    cases = [(0.2, (0, 0), 0.0, (True, 0, 5, 0.2)), (0.1, (0, 0), 0.2, (True, 2, 3, 0.0)),
             (0.1, (0, 0), 0.1, (False, 2, 5, 0.2)), (0.0, (2, 0), 0.0, (True, 0, 1, 0.0))]
    for threshold, node, limit, want in cases:
        p = problem(engine, rows, [SampleUniqueness(threshold)])
        with Evaluator(p) as ev:
            check = ev.check({"q0": node[0], "q1": node[1]}, limit)
            assert (check.anonymous, check.outlier_rows, check.classes, check.models[0].achieved) == want
            r = FastEvaluator(ev, p.models, None, limit).evaluate(node)
            assert (r.anonymous, r.outlier_rows, r.classes) == want[:3]


def test_spec_key_and_errors():
    path = "privacy[0].sample_uniqueness"
    assert build_model("sample_uniqueness", {"threshold": 0.01}, path) == SampleUniqueness(0.01)
    declared = SampleUniqueness.monotonicity
    assert declared.suppression and declared.generalization
    with pytest.raises(SpecError, match=r"privacy\[0\]\.sample_uniqueness\.threshold: threshold must be a "
                                        r"number in \[0\.0, 1\.0\], got -0\.1"):
        build_model("sample_uniqueness", {"threshold": -0.1}, path)
    with pytest.raises(SpecError, match="sample_uniqueness needs parameter 'threshold'"):
        build_model("sample_uniqueness", {}, path)


def uniques_within(threshold: float):
    def holds(kept: list[int], n: int) -> bool:
        return float(sum(1 for x in kept if x == 1)) / float(sum(kept)) <= threshold

    return holds


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=ROWS, threshold=st.sampled_from([0.0, 0.05, 0.1, 0.3]), limit=st.sampled_from([0.0, 0.1, 0.3]))
def test_every_node_matches_the_definition(engine, rows, threshold, limit):
    holds = uniques_within(threshold)
    every_node(engine, rows, [SampleUniqueness(threshold)],
               lambda node: per_size_oracle(class_sizes(rows, node), len(rows), holds, limit), limit)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=ROWS, threshold=st.sampled_from([0.0, 0.1, 0.3]), limit=st.sampled_from([0.0, 0.2]),
       with_k=st.booleans())
def test_search_finds_the_exhaustive_optimum(engine, rows, threshold, limit, with_k):
    models = [SampleUniqueness(threshold)] + ([KAnonymity(3)] if with_k else [])
    search_matches_exhaustive(engine, rows, models, limit)
