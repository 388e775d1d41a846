"""Models on several sensitive attributes in one check, against per-class values computed in Python."""

from __future__ import annotations

import csv
import math
from collections import Counter

import pandas as pd
import pytest

from sqlanon.methods.dataset import open_dataset
from sqlanon.methods.generalization.evaluator import Evaluator
from sqlanon.methods.generalization.problem import problem_for
from sqlanon.spec import spec_from_dict
from tests.conftest import adult_spec_dict
from tests.domain.models import oracle as O
from tests.domain.models.conftest import class_rows

QIS = ["sex", "race", "marital-status", "education"]
NODE = (0, 1, 1, 2)
SENSITIVE = ["age", "workclass", "occupation", "salary-class"]
MODELS = [
    ("l_diversity", {"attribute": "occupation", "l": 13}),
    ("t_closeness", {"attribute": "occupation", "t": 0.2, "distance": "hierarchical"}),
    ("t_closeness", {"attribute": "occupation", "t": 0.3}),
    ("t_closeness", {"attribute": "age", "t": 0.06, "distance": "ordered"}),
    ("k_e_anonymity", {"attribute": "age", "k": 100, "e": 65}),
    ("kpqr_anonymity", {"attribute": "age", "k": 50, "p": 50, "q": 0.001, "r": 0.8}),
    ("delta_disclosure", {"attribute": "salary-class", "delta": 1.0}),
    ("beta_likeness", {"attribute": "workclass", "beta": 1.2}),
]


def _groups(adult_dir):
    df = pd.read_csv(adult_dir / "adult.csv", sep=";", dtype=str)
    for q, level in zip(QIS, NODE):
        with open(adult_dir / f"adult_hierarchy_{q}.csv", newline="") as f:
            mapping = {row[0]: row[level] for row in csv.reader(f, delimiter=";")}
        df[q] = df[q].map(mapping)
    df["age"] = df["age"].astype(int)
    return df


def _expected(adult_dir):
    df = _groups(adult_dir)
    with open(adult_dir / "adult_hierarchy_occupation.csv", newline="") as f:
        occ_tree = {row[0]: row[1:] for row in csv.reader(f, delimiter=";")}
    table = {a: Counter(df[a]) for a in SENSITIVE}
    out = {}
    for key, g in df.groupby(QIS):
        c = {a: Counter(g[a]) for a in SENSITIVE}
        size = len(g)
        rare = O.rare_values(c["age"], table["age"], 0.001)
        ratio = O.variance_ratio(c["age"], table["age"])
        salary_absent = O.absent_rows(c["salary-class"], table["salary-class"])
        ok = [
            len(c["occupation"]) >= 13,
            O.hierarchical_emd(c["occupation"], table["occupation"], occ_tree.__getitem__) <= 0.2,
            O.equal_emd(c["occupation"], table["occupation"]) <= 0.3,
            O.ordered_emd(c["age"], table["age"], lambda v: v) <= 0.06,
            size >= 100 and O.value_range(c["age"]) >= 65,
            size >= 50 and (rare == 0 or (len(c["age"]) >= 50 and ratio >= 0.8)),
            salary_absent == 0 and O.max_log_ratio(c["salary-class"], table["salary-class"]) < 1.0,
            O.max_relative_gain(c["workclass"], table["workclass"]) <= 1.2,
        ]
        out[key] = (size, ok, c)
    return out, table


def test_models_on_four_sensitive_attributes(adult_engine, adult_dir):
    expected, table = _expected(adult_dir)
    d = adult_spec_dict(adult_dir, qis=QIS, sensitive=SENSITIVE, levels=dict(zip(QIS, NODE)),
                        privacy=[{k: v} for k, v in MODELS], limit=0.5)
    d["attributes"]["occupation"]["hierarchy"] = {"csv": str(adult_dir / "adult_hierarchy_occupation.csv")}
    d["attributes"]["age"]["type"] = "integer"
    spec = spec_from_dict(d)
    with Evaluator(problem_for(spec, open_dataset(spec, adult_engine))) as ev:
        node = ev.check(dict(zip(QIS, NODE)), 0.5)
        rows = class_rows(adult_engine, node, QIS)
    assert set(rows) == set(expected)
    for key, (size, ok, _) in expected.items():
        assert rows[key]["__sa_size"] == size
        assert [rows[key][f"__sa_ok{i}"] for i in range(len(MODELS))] == ok, key
        assert rows[key]["__sa_keep"] == all(ok)
    per_model_failures = [sum(1 for _, ok, _ in expected.values() if not ok[i]) for i in range(len(MODELS))]
    assert [m.violating_classes for m in node.models] == per_model_failures
    assert all(0 < f < len(expected) for f in per_model_failures)  # every model decides something
    outliers = sum(size for size, ok, _ in expected.values() if not all(ok))
    assert node.outlier_rows == outliers and node.anonymous == (outliers <= 30162 // 2)
    kept = [c for _, ok, c in expected.values() if all(ok) or not node.anonymous]
    labels = [m.model for m in node.models]
    assert labels == ["l_diversity[occupation]", "t_closeness[occupation]", "t_closeness[occupation]",
                      "t_closeness[age]", "k_e_anonymity[age]", "kpqr_anonymity[age]",
                      "delta_disclosure[salary-class]", "beta_likeness[workclass]"]
    achieved = [m.achieved for m in node.models]
    assert achieved[0] == min(len(c["occupation"]) for c in kept)
    assert achieved[2] == pytest.approx(max(float(O.equal_emd(c["occupation"], table["occupation"]))
                                            for c in kept), abs=1e-12)
    assert achieved[3] == pytest.approx(max(float(O.ordered_emd(c["age"], table["age"], lambda v: v))
                                            for c in kept), abs=1e-12)
    assert achieved[4] == min(O.value_range(c["age"]) for c in kept)
    assert achieved[5] is None
    want_delta = max(math.inf if O.absent_rows(c["salary-class"], table["salary-class"])
                     else O.max_log_ratio(c["salary-class"], table["salary-class"]) for c in kept)
    assert achieved[6] == pytest.approx(want_delta, rel=1e-12)
    assert achieved[7] == pytest.approx(max(float(O.max_relative_gain(c["workclass"], table["workclass"]))
                                            for c in kept), rel=1e-12)
