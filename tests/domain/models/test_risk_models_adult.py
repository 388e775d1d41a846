"""The risk-based models on Adult at one node each, against class sizes computed with pandas from
the CSV files and the models' definitions applied in plain Python."""

from __future__ import annotations

import csv
import math

import pandas as pd

from sqlanon.domain.models.average_risk import size_threshold
from sqlanon.domain.models.k_map import poisson_k
from sqlanon.methods.dataset import open_dataset
from sqlanon.methods.generalization.evaluator import Evaluator
from sqlanon.methods.generalization.problem import problem_for
from sqlanon.methods.generalization.search.fast import FastEvaluator
from sqlanon.spec import spec_from_dict
from tests.conftest import adult_spec_dict

QIS = ["sex", "age", "race", "marital-status", "education"]
NODE = (0, 1, 0, 1, 1)
USA = 317_238_626


def generalized(adult_dir, file: str) -> pd.DataFrame:
    frame = pd.read_csv(adult_dir / file, sep=";", dtype=str)
    for q, level in zip(QIS, NODE):
        with open(adult_dir / f"adult_hierarchy_{q}.csv", newline="") as f:
            mapping = {row[0]: row[level] for row in csv.reader(f, delimiter=";")}
        frame[q] = frame[q].map(mapping)
    return frame


def class_sizes(adult_dir, file: str = "adult.csv") -> pd.Series:
    return generalized(adult_dir, file).groupby(QIS, dropna=False).size()


def kept_from_size(sizes: list[int], n: int, holds) -> tuple[int, int]:
    """(outlier rows, kept classes) when a class of size x is kept if the classes of at least x
    records meet the definition."""
    kept = [x for x in sizes if holds([y for y in sizes if y >= x], n)]
    return n - sum(kept), len(kept)


def check(engine, adult_dir, privacy, limit, table="adult"):
    d = adult_spec_dict(adult_dir, qis=QIS, levels=dict(zip(QIS, NODE)), limit=limit, privacy=privacy)
    d["source"] = {"table": table}
    spec = spec_from_dict(d)
    with Evaluator(problem_for(spec, open_dataset(spec, engine))) as ev:
        checked = ev.check(dict(zip(QIS, NODE)), limit)
        sql = (checked.anonymous, checked.outlier_rows, checked.classes)
        try:
            fast = FastEvaluator(ev, ev.p.models, None, limit)
        except Exception:  # noqa: BLE001 - a model checked in SQL only
            return sql, None
        node = tuple(dict(zip(QIS, NODE))[q] for q in ev.p.qis)
        r = fast.evaluate(node)
        return sql, (r.anonymous, r.outlier_rows, r.classes)


def expected(sizes: list[int], n: int, holds, limit: float) -> tuple[bool, int, int]:
    outliers, kept = kept_from_size(sizes, n, holds)
    anonymous = outliers <= math.floor(limit * n)
    return anonymous, outliers, kept if anonymous else len(sizes)


def test_average_risk_with_records_at_risk(adult_engine, adult_dir):
    sizes = class_sizes(adult_dir).tolist()
    n = sum(sizes)
    smallest = size_threshold(0.1)

    def holds(kept, n):
        classes = len(kept) + (1 if sum(kept) < n else 0)
        at_risk = sum(x for x in kept if x < smallest)
        return 1.0 / (n / classes) <= 0.05 and at_risk / sum(kept) <= 0.02

    want = expected(sizes, n, holds, 0.1)
    assert 0 < want[1] <= 0.1 * n  # the node needs suppression and gets it
    sql, memory = check(adult_engine, adult_dir, [{"average_risk": {"threshold": 0.05, "highest_risk": 0.1,
                                                                      "records_at_risk": 0.02}}], 0.1)
    assert sql == memory == want


def test_sample_uniqueness(adult_engine, adult_dir):
    sizes = class_sizes(adult_dir).tolist()
    n = sum(sizes)
    uniques = sizes.count(1)
    assert 0 < uniques / n
    threshold = uniques / n / 2

    def holds(kept, n):
        return sum(1 for x in kept if x == 1) / sum(kept) <= threshold

    want = expected(sizes, n, holds, 0.05)
    assert want == (True, uniques, len(sizes) - uniques)
    sql, memory = check(adult_engine, adult_dir, [{"sample_uniqueness": {"threshold": threshold}}], 0.05)
    assert sql == memory == want


def test_k_map_of_the_research_subset_in_adult(adult_engine, adult_dir):
    """The research subset is the table, Adult its population (ARX's research-subset setting)."""
    adult_engine.con.execute(
        "CREATE TABLE sample AS SELECT * FROM read_csv(?, delim=';', header=true, all_varchar=true)",
        [str(adult_dir / "adult_subset.csv")])
    population = class_sizes(adult_dir)
    sample = class_sizes(adult_dir, "adult_subset.csv")
    k = 20
    matched = population.reindex(sample.index).fillna(0)
    outliers = int(sample[matched < k].sum())
    want = (True, outliers, int((matched >= k).sum()))
    assert 0 < outliers
    sql, memory = check(adult_engine, adult_dir, [{"k_map": {"k": k, "population": "adult"}}], 0.5,
                        table="sample")
    assert sql == memory == want


def test_k_map_estimated_for_the_usa(adult_engine, adult_dir):
    sizes = class_sizes(adult_dir).tolist()
    n = sum(sizes)
    derived = min(50, poisson_k(50, 0.01, n / USA * 50), n)
    want = expected(sizes, n, lambda kept, n: min(kept) >= derived, 0.2)
    privacy = [{"k_map": {"k": 50, "estimator": "poisson", "significance": 0.01, "population_size": USA}}]
    sql, memory = check(adult_engine, adult_dir, privacy, 0.2)
    assert sql == memory == want
