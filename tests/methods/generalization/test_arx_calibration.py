"""ARX 3.9.2's figures on Adult (peer-semantics.md §6), reproduced exactly through the public API."""

from __future__ import annotations

import pytest

from sqlanon import api
from sqlanon.spec import spec_from_dict
from tests.conftest import ADULT_QIS, adult_spec_dict


def _check(adult_engine, adult_dir, node, limit=0.0, metrics=None):
    levels = dict(zip(ADULT_QIS, node))
    spec = spec_from_dict(adult_spec_dict(adult_dir, levels=levels, limit=limit))
    return api.check(spec, engine=adult_engine, metrics=metrics).as_dict()


def test_node_0_4_1_1_3_2_2_1_0_no_suppression(adult_engine, adult_dir):
    r = _check(adult_engine, adult_dir, [0, 4, 1, 1, 3, 2, 2, 1, 0])
    assert r["classes"] == 24
    assert r["min_class_size"] == 69
    assert r["suppressed_rows"] == 0
    m = r["metrics"]
    assert m["loss"] == 0.5731509655590044
    assert m["loss_arithmetic"] == 0.6355438466888889
    assert m["precision"] == 0.6666666666666667
    assert m["height"] == 14
    assert m["discernibility"] == m["discernibility_star"] == 70_009_068
    assert m["aecs"] == 1256.75
    assert r["privacy"]["k_anonymity"] == {"holds": True, "achieved": 69, "violating_classes": 0,
                                           "violating_rows": 0}


def test_node_1_1_1_2_3_2_2_1_1_discernibility(adult_engine, adult_dir):
    r = _check(adult_engine, adult_dir, [1, 1, 1, 2, 3, 2, 2, 1, 1])
    assert r["metrics"]["discernibility"] == 33_627_534
    assert r["metrics"]["discernibility_star"] == 33_627_534


def test_node_0_3_0_2_2_1_1_2_0_two_percent(adult_engine, adult_dir):
    r = _check(adult_engine, adult_dir, [0, 3, 0, 2, 2, 1, 1, 2, 0], limit=0.02)
    assert r["transformation"]["max_suppressed_rows"] == 603
    assert r["suppressed_rows"] == 506
    assert r["classes"] == 222
    assert r["min_class_size"] == 5
    m = r["metrics"]
    assert m["discernibility"] == 52_454_192
    assert m["discernibility_star"] == 37_193_410
    assert m["aecs"] == 135.2556053811659
    assert m["loss"] == 0.3137130352819242
    assert m["loss_arithmetic"] == 0.35748248986666664
    assert m["precision"] == 0.49928411270497336
    assert r["privacy"]["k_anonymity"]["violating_classes"] == 280


def test_same_node_without_suppression_is_not_anonymous(adult_engine, adult_dir):
    r = _check(adult_engine, adult_dir, [0, 3, 0, 2, 2, 1, 1, 2, 0], limit=0.0)
    assert r["anonymous"] is False
    assert r["outlier_rows"] == 506
    assert r["privacy"]["k_anonymity"]["holds"] is False


@pytest.mark.parametrize("limit, n, expected", [(0.29, 100, 28), (0.02, 30162, 603), (0.0, 10, 0),
                                                (1.0, 7, 7)])
def test_suppression_budget_is_floor_of_double_product(limit, n, expected):
    from sqlanon.methods.generalization.evaluator import suppression_budget

    assert suppression_budget(limit, n) == expected
