"""ARX 3.9.2's quality figures on Adult (peer-semantics.md §6): the calibration table, asserted exactly.

Every number below is ARX's published value. Per-attribute Loss and entropy are truncated to 10
decimals by ARX, so they compare exactly; the totals are IEEE sums in ARX's attribute order.
"""

from __future__ import annotations

import pytest

from sqlanon.domain.metrics import MetricContext, get_metric
from sqlanon.domain.metrics.arx import per_attribute_loss
from sqlanon.domain.metrics.entropy import per_attribute_entropy
from sqlanon.domain.models.k_anonymity import KAnonymity
from sqlanon.methods.generalization.evaluator import Evaluator, Problem
from sqlanon.sql.nodes import table
from tests.conftest import ADULT_QIS
from tests.domain.metrics import oracle

# §6.1: k=5, 0 %, node [0,4,1,1,3,2,2,1,0]
NODE_61 = [0, 4, 1, 1, 3, 2, 2, 1, 0]
ENTROPY_61 = [0.0, 170257.8596997991, 23375.0352725208, 24819.8943972959, 87870.4227341272,
              25086.8680139638, 42571.8694091557, 54796.8190652296, 0.0]
LOSS_61 = [0.0, 1.0, 1.0, 0.4331609309, 1.0, 1.0, 1.0, 0.2867336893, 0.0]

# §6.2: k=5, 2 %, node [0,3,0,2,2,1,1,2,0] (S = 506)
NODE_62 = [0, 3, 0, 2, 2, 1, 1, 2, 0]
ENTROPY_62 = [503.4823671945, 124943.5058910126, 1094.6463601357, 54887.1167171445, 55655.4343773286,
              15901.8209400194, 25148.2941997067, 102448.1135856797, 465.9796355982]
LOSS_62 = [0.0167760758, 0.2054756168, 0.0167760758, 1.0, 0.3779899652, 0.2858514024, 0.2976971970,
           1.0, 0.0167760758]


@pytest.fixture()
def adult_problem(adult_engine, adult_hierarchies):
    return Problem(adult_engine, table("adult"), list(ADULT_QIS), dict(adult_hierarchies), [],
                   [KAnonymity(5)])


def _metrics(ev, node, limit, names):
    check = ev.check(dict(zip(ADULT_QIS, node)), limit)
    ctx = MetricContext(ev, check)
    return check, ctx, {name: get_metric(name).compute(ctx) for name in names}


NAMES = ("entropy", "loss", "loss_arithmetic", "precision", "height", "discernibility",
         "discernibility_star", "aecs", "suppressed_cells")


def test_section_6_1_no_suppression(adult_problem):
    with Evaluator(adult_problem) as ev:
        check, ctx, m = _metrics(ev, NODE_61, 0.0, NAMES)
        assert (check.classes, check.min_class_size, check.suppressed_rows) == (24, 69, 0)
        assert per_attribute_entropy(ctx) == ENTROPY_61
        assert per_attribute_loss(ctx) == LOSS_61
    assert m["entropy"] == 428778.7685920921
    assert m["loss"] == 0.5731509655590044
    assert m["loss_arithmetic"] == 0.6355438466888889
    assert m["precision"] == 0.6666666666666667
    assert m["height"] == 14
    assert m["discernibility"] == m["discernibility_star"] == 70_009_068
    assert m["aecs"] == 1256.75
    assert m["suppressed_cells"] == 0


def test_section_6_2_two_percent(adult_problem):
    with Evaluator(adult_problem) as ev:
        check, ctx, m = _metrics(ev, NODE_62, 0.02, NAMES)
        assert (check.classes, check.min_class_size, check.suppressed_rows) == (222, 5, 506)
        assert per_attribute_entropy(ctx) == ENTROPY_62
        assert per_attribute_loss(ctx) == LOSS_62
    assert m["entropy"] == 381048.3940738199
    assert m["loss"] == 0.3137130352819242
    assert m["loss_arithmetic"] == 0.35748248986666664
    assert m["precision"] == 0.49928411270497336
    assert m["discernibility"] == 52_454_192
    assert m["discernibility_star"] == 37_193_410
    assert m["aecs"] == 135.2556053811659
    assert m["suppressed_cells"] == 506 * 9


def test_plain_python_entropy_reproduces_the_table(adult_dir):
    """The brute-force oracle used on random tables gives ARX's per-attribute figures on Adult."""
    rows, hiers = oracle.read_adult(adult_dir, ADULT_QIS)
    for node, limit, expected in [(NODE_61, 0.0, ENTROPY_61), (NODE_62, 0.02, ENTROPY_62)]:
        levels = dict(zip(ADULT_QIS, node))
        _, kept = oracle.released(rows, ADULT_QIS, hiers, levels, 5, limit)
        assert oracle.arx_entropy(rows, ADULT_QIS, hiers, levels, kept) == expected


def test_entropy_of_the_bottom_node_is_zero(adult_problem):
    with Evaluator(adult_problem) as ev:
        _, _, m = _metrics(ev, [0] * 9, 0.0, ("entropy",))
    assert m["entropy"] == 0.0


def test_entropy_lower_bound_is_the_generalization_part(adult_problem, adult_dir):
    """The bound drops the suppression terms T_i: brute force with nothing suppressed gives Σ trunc(G_i)."""
    with Evaluator(adult_problem) as ev:
        check = ev.check(dict(zip(ADULT_QIS, NODE_62)), 0.02)
        bound = get_metric("entropy").lower_bound(MetricContext(ev, check))
    rows, hiers = oracle.read_adult(adult_dir, ADULT_QIS)
    g = oracle.arx_entropy(rows, ADULT_QIS, hiers, dict(zip(ADULT_QIS, NODE_62)), [True] * len(rows))
    assert g[0] == 0.0  # sex at level 0: its 503.48 in the table is all suppression
    assert bound == pytest.approx(sum(g), rel=1e-15)
    assert bound < 381048.3940738199
