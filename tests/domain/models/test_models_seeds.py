"""l-diversity and t-closeness on the seeds' worked examples (seed 000 §4.2–4.5, seed 001 §7)."""

from __future__ import annotations

import math

import pytest

from sqlanon.domain.hierarchy import TableHierarchy
from sqlanon.domain.models.distance_statistics import OrderedDistance
from sqlanon.domain.models.k_anonymity import KAnonymity
from sqlanon.domain.models.l_diversity import LDiversity
from sqlanon.domain.models.statistics import Entropy, EqualDistance
from sqlanon.domain.models.t_closeness import TCloseness
from sqlanon.methods.generalization.evaluator import Evaluator, Problem
from sqlanon.sql.nodes import table
from tests.domain.models.conftest import class_rows

# Seed 000, Table 5.2: Age -> [20-30] / [30-40] / [40-50], ZIP -> 230**.
AGE_BAND = {21: "[20-30]", 24: "[20-30]", 26: "[20-30]", 27: "[20-30]", 32: "[30-40]", 34: "[30-40]",
            35: "[30-40]", 38: "[30-40]", 43: "[40-50]", 47: "[40-50]", 49: "[40-50]"}
ZIPS = (23058, 23059, 23060, 23061)


@pytest.fixture()
def table_5_1(duck, load_csv):
    load_csv("seed000_table_5_1.csv", "t51")
    age = TableHierarchy([[str(a), band, "*"] for a, band in AGE_BAND.items()])
    zip_ = TableHierarchy([[str(z), "230**", "*"] for z in ZIPS])

    def check(models):
        p = Problem(duck, table("t51"), ["age", "zip"], {"age": age, "zip": zip_}, ["condition"], models)
        with Evaluator(p) as ev:
            node = ev.check({"age": 1, "zip": 1})
            return node, class_rows(duck, node, ["age", "zip"])

    return check


def test_table_5_2_diversity(table_5_1):
    node, rows = table_5_1([KAnonymity(4), LDiversity("condition", 2),
                            LDiversity("condition", 2, variant="entropy")])
    assert node.anonymous and node.classes == 3
    k, distinct, entropy = node.models
    assert (k.achieved, distinct.achieved) == (4, 2)
    assert entropy.achieved == pytest.approx(2.0, abs=1e-12)
    exp_h = {key[0]: math.exp(r[Entropy("condition").column]) for key, r in rows.items()}
    # digest §4.4: exp(H) = 2.0 / 2.8284 / 2.0
    assert exp_h == pytest.approx({"[20-30]": 2.0, "[40-50]": 2 * math.sqrt(2), "[30-40]": 2.0},
                                  abs=1e-12)


@pytest.mark.parametrize("c, holds", [(1, False), (1.0001, True), (2, True)])
def test_table_5_2_recursive_c2_needs_c_above_1(table_5_1, c, holds):
    node, _ = table_5_1([LDiversity("condition", 2, variant="recursive", c=c)])
    assert node.anonymous is holds


def test_table_5_2_nominal_emd(table_5_1):
    node, rows = table_5_1([TCloseness("condition", 7 / 12)])
    emd = {key[0]: r[EqualDistance("condition").column] for key, r in rows.items()}
    # digest §4.4: 0.41667 / 0.16667 / 0.58333 = 5/12, 2/12, 7/12
    assert emd == pytest.approx({"[20-30]": 5 / 12, "[40-50]": 2 / 12, "[30-40]": 7 / 12}, abs=1e-12)
    assert node.anonymous
    assert node.models[0].achieved == pytest.approx(0.58333, abs=5e-6)


@pytest.mark.parametrize("t, holds", [(0.58, False), (0.5833, False), (0.58334, True), (1.0, True)])
def test_table_5_2_t_closeness_threshold(table_5_1, t, holds):
    node, _ = table_5_1([TCloseness("condition", t, "equal")])
    assert node.anonymous is holds
    assert node.models[0].violating_rows == (0 if holds else 4)  # the [30-40] class


@pytest.fixture()
def table_1_3(duck, load_csv):
    """Seed 001 Table 1.3 (= Table 2.2): the QIs are already generalized, checked at level 0."""
    load_csv("seed001_table_1_3.csv", "t13")
    qis = ["gender", "age", "zip", "nationality"]
    values = {q: [r[0] for r in duck.con.execute(f'SELECT DISTINCT "{q}" FROM t13').fetchall()]
              for q in qis}
    hierarchies = {q: TableHierarchy([[v, "*"] for v in values[q]]) for q in qis}

    def check(models):
        p = Problem(duck, table("t13"), qis, hierarchies, ["condition"], models)
        with Evaluator(p) as ev:
            node = ev.check({q: 0 for q in qis})
            return node, {key[3]: r for key, r in class_rows(duck, node, qis).items()}

    return check


def test_table_1_3_diversity_and_closeness(table_1_3):
    node, rows = table_1_3([KAnonymity(4), LDiversity("condition", 2),
                            LDiversity("condition", 1.5, variant="entropy"), TCloseness("condition", 0.5)])
    assert node.anonymous and node.classes == 3
    assert [m.achieved for m in node.models[:2]] == [4, 2]
    exp_h = {n: math.exp(r[Entropy("condition").column]) for n, r in rows.items()}
    # digest §7: exp(H) = 4 / 2.83 / 1.755 (the American block is Cancer ×3, VI ×1)
    assert exp_h["Any"] == pytest.approx(4.0, abs=1e-12)
    assert exp_h["Asian"] == pytest.approx(2.83, abs=5e-3)
    assert exp_h["American"] == pytest.approx(1.755, abs=5e-4)
    assert exp_h["American"] == pytest.approx(1 / (0.75 ** 0.75 * 0.25 ** 0.25), abs=1e-12)
    tv = {n: r[EqualDistance("condition").column] for n, r in rows.items()}
    # TV = .167 / .333 / .417 = 2/12, 4/12, 5/12
    assert tv == pytest.approx({"Any": 2 / 12, "Asian": 4 / 12, "American": 5 / 12}, abs=1e-12)


@pytest.mark.parametrize("c, l, holds", [(3, 2, False), (3.01, 2, True), (100, 3, False)])
def test_table_1_3_recursive(table_1_3, c, l, holds):
    node, _ = table_1_3([LDiversity("condition", l, variant="recursive", c=c)])
    assert node.anonymous is holds


# Seed 000 Prop 7.1/7.2 (digest §4.5): n distinct values 1..n in k subsets of n/k consecutive values;
# cluster j takes the j-th value of every subset. Median picks give the smallest ordered EMD,
# subset minima the largest.
PROP_7 = [(12, 4, 0.060606, 0.090909), (15, 3, 0.085714, 0.142857), (20, 4, 0.063158, 0.105263),
          (12, 3, 0.090909, 0.136364), (100, 5, 0.050505, 0.095960), (1080, 10, 0.025023, 0.049583)]


@pytest.mark.parametrize("n, k, smallest, largest", PROP_7)
def test_prop_7_ordered_emd(duck, n, k, smallest, largest):
    per = n // k
    duck.con.execute("CREATE TABLE p7 (cluster INTEGER, v INTEGER)")
    duck.con.executemany("INSERT INTO p7 VALUES (?, ?)", [((v - 1) % per, v) for v in range(1, n + 1)])
    h = TableHierarchy([[str(j), "*"] for j in range(per)])
    p = Problem(duck, table("p7"), ["cluster"], {"cluster": h}, ["v"], [TCloseness("v", 1.0, "ordered")],
                column_types={"cluster": "INTEGER", "v": "INTEGER"})
    with Evaluator(p) as ev:
        node = ev.check({"cluster": 0})
        rows = class_rows(duck, node, ["cluster"])
        emd = {key[0]: r[OrderedDistance("v").column] for key, r in rows.items()}
    assert len(emd) == per and node.min_class_size == k
    assert min(emd.values()) == pytest.approx(smallest, abs=5e-7)
    assert emd[0] == pytest.approx(largest, abs=5e-7)
    assert max(emd.values()) == pytest.approx(largest, abs=5e-7)
    if per % 2:  # odd n/k: the median pick is the middle cluster, and Prop 7.1 is exact
        assert emd[per // 2] == pytest.approx(smallest, abs=5e-7)
    else:  # even n/k: the exact minimum is n/(4(n−1)k) (digest erratum E6)
        assert min(emd.values()) == pytest.approx(n / (4 * (n - 1) * k), abs=1e-12)
