"""A node checked by the generalizing scan equals the same node checked from the raw frequency table."""

from __future__ import annotations

import random

from sqlglot import exp

from sqlanon.domain.models.k_anonymity import KAnonymity
from sqlanon.domain.models.l_diversity import LDiversity
from sqlanon.domain.models.t_closeness import TCloseness
from sqlanon.methods.generalization.evaluator import Evaluator, Problem
from sqlanon.sql.nodes import table
from tests.conftest import ADULT_QIS

QIS = [q for q in ADULT_QIS if q != "occupation"]


def _rows(ev: Evaluator, relation: exp.Table) -> list[tuple]:
    return sorted(ev.engine.fetch(exp.select(exp.Star()).from_(relation.copy()))[1], key=repr)


def test_generalizing_scan_matches_raw_frequency_table(adult_engine, adult_hierarchies):
    models = [KAnonymity(5), LDiversity("occupation", 3, "recursive", 4),
              TCloseness("occupation", 0.3, "equal")]
    problem = Problem(adult_engine, table("adult"), QIS, {q: adult_hierarchies[q] for q in QIS},
                      ["occupation"], models)
    rng = random.Random(20261122)
    nodes = [{q: rng.randint(0, adult_hierarchies[q].height) for q in QIS} for _ in range(6)]
    nodes.append({q: 0 for q in QIS})
    with Evaluator(problem) as raw:
        for levels in nodes:
            expected = raw.check(levels, 0.02)
            expected_rows = _rows(raw, expected.verdict)
            with Evaluator(problem, scan_levels=levels) as scan:
                got = scan.check(levels, 0.02)
                assert scan.scans.raw is None  # the raw table was never built
                assert _rows(scan, got.verdict) == expected_rows
            for field in ("rows", "classes", "outlier_rows", "min_class_size", "dm_star", "dm_kept",
                          "models"):
                assert getattr(got, field) == getattr(expected, field), (levels, field)
