"""t-closeness on Adult with occupation sensitive: ARX 3.9.2's figures (peer-semantics.md §6.3)."""

from __future__ import annotations

import pytest

from sqlanon import api
from sqlanon.domain.models.distance_statistics import HierarchicalDistance
from sqlanon.domain.models.statistics import EqualDistance
from sqlanon.methods.dataset import open_dataset
from sqlanon.methods.generalization.evaluator import Evaluator
from sqlanon.methods.generalization.problem import problem_for
from sqlanon.spec import spec_from_dict
from tests.conftest import ADULT_QIS, adult_spec_dict
from tests.domain.models.conftest import class_rows

QIS = [q for q in ADULT_QIS if q != "occupation"]


def _check(engine, adult_dir, node, distance, limit, t=0.2, extra_models=()):
    """The report and the per-class rows (keyed by race, marital-status, native-country) of a node."""
    privacy = [{"k_anonymity": {"k": 5}},
               {"t_closeness": {"attribute": "occupation", "t": t, "distance": distance}}, *extra_models]
    d = adult_spec_dict(adult_dir, qis=QIS, privacy=privacy, levels=dict(zip(QIS, node)), limit=limit)
    d["attributes"]["occupation"] = {
        "role": "sensitive", "hierarchy": {"csv": str(adult_dir / "adult_hierarchy_occupation.csv")}}
    spec = spec_from_dict(d)
    ds = open_dataset(spec, engine)
    with Evaluator(problem_for(spec, ds)) as ev:
        checked = ev.check(dict(zip(QIS, node)), limit)
        metrics = api.evaluate_metrics(("loss", "discernibility", "aecs"), ev, checked, spec)
        report = api.Report(checked, metrics, ev.p.qis).as_dict()
        rows = class_rows(engine, checked, ["race", "marital-status", "native-country"])
    return report, checked, rows


HIER = HierarchicalDistance("occupation").column
EQUAL = EqualDistance("occupation").column


def test_hierarchical_two_percent(adult_engine, adult_dir):
    r, node, rows = _check(adult_engine, adult_dir, [1, 4, 0, 2, 3, 1, 2, 1], "hierarchical", 0.02,
                           extra_models=[{"t_closeness": {"attribute": "occupation", "t": 1.0}}])
    assert node.classes + node.outlier_classes == 23
    assert node.outlier_classes == 14
    assert r["suppressed_rows"] == 151 and r["anonymous"]
    assert r["classes"] == 9 and r["min_class_size"] == 78
    m = r["metrics"]
    assert m["loss"] == 0.7351403745214613
    assert m["discernibility"] == 651_130_781
    assert m["aecs"] == 3016.2
    kept = rows[("White", "*", "Asia")]
    assert kept["__sa_size"] == 78 and kept["__sa_keep"]
    # (½·(71,706 + 44,976 + 146,718) + 108,894) / (30162·78)
    assert kept[HIER] == pytest.approx(240_594 / 2_352_636, abs=1e-15)
    assert kept[HIER] == pytest.approx(0.10227, abs=5e-6)
    assert kept[EQUAL] == pytest.approx(0.158, abs=5e-4)
    outlier = rows[("Asian-Pac-Islander", "*", "Africa")]
    assert outlier["__sa_size"] == 68 and not outlier["__sa_keep"]
    # level-1 minima 113,366 + 31,476 + 57,198 at ½, root minimum 388,378 at 1
    assert outlier[HIER] == pytest.approx(
        (0.5 * (113_366 + 31_476 + 57_198) + 388_378) / (30162 * 68), abs=1e-15)
    assert outlier[HIER] == pytest.approx(0.23861, abs=5e-6)


def test_equal_distance_no_suppression(adult_engine, adult_dir):
    r, _, rows = _check(adult_engine, adult_dir, [1, 4, 1, 1, 3, 2, 2, 1], "equal", 0.0)
    assert r["anonymous"] and r["classes"] == 2
    assert rows[("*", "spouse not present", "*")]["__sa_size"] == 16_076
    assert rows[("*", "spouse present", "*")]["__sa_size"] == 14_086
    d = {k[1]: v[EQUAL] for k, v in rows.items()}
    assert d == pytest.approx({"spouse not present": 0.11526, "spouse present": 0.13154}, abs=5e-6)
    assert r["privacy"]["t_closeness[occupation]"]["achieved"] == pytest.approx(0.13154, abs=5e-6)
    m = r["metrics"]
    assert m["loss"] == 0.9183953641009659
    assert m["discernibility"] == 456_853_172
    assert m["aecs"] == 15081


def test_equal_distance_specialization_fails(adult_engine, adult_dir):
    r, node, rows = _check(adult_engine, adult_dir, [1, 4, 1, 0, 3, 2, 2, 1], "equal", 0.0)
    assert not r["anonymous"]
    assert node.outlier_rows == 848
    outliers = {k[1]: (v["__sa_size"], v[EQUAL]) for k, v in rows.items()
                if not v["__sa_keep"]}
    assert set(outliers) == {"Married-AF-spouse", "Widowed"}
    assert outliers["Married-AF-spouse"][0] == 21
    assert outliers["Married-AF-spouse"][1] == pytest.approx(0.258, abs=5e-4)
    assert outliers["Widowed"][0] == 827
    assert outliers["Widowed"][1] == pytest.approx(0.203, abs=5e-4)
    assert r["privacy"]["t_closeness[occupation]"]["violating_rows"] == 848


def test_hierarchical_distance_is_exact_on_adult_times_ten(adult_engine, adult_dir):
    """Scaled extras c(v)·|E| exceed 2³¹ here (asserted), where ARX's 32-bit ints wrap (peer-semantics
    §2.4); the EMD is scale-invariant, so the node keeps its Adult verdict and EMD values."""
    adult_engine.con.execute("ALTER TABLE adult RENAME TO adult1")
    adult_engine.con.execute("CREATE TABLE adult AS SELECT a.* FROM adult1 a, range(10)")
    r, node, rows = _check(adult_engine, adult_dir, [1, 4, 0, 2, 3, 1, 2, 1], "hierarchical", 0.02)
    assert r["rows"] == 301_620
    assert node.outlier_classes == 14 and r["suppressed_rows"] == 1510
    assert r["classes"] == 9 and r["min_class_size"] == 780
    assert rows[("White", "*", "Asia")][HIER] == pytest.approx(240_594 / 2_352_636, abs=1e-15)
    assert max(v["__sa_size"] for v in rows.values()) * 4038 * 10 > 2**31
