"""With δ-presence, ARX's quality models count the research subset's rows (as ARX measures the subset it
releases), not the table's: checked against plain Python over Adult's subset (adult_subset.csv)."""

from __future__ import annotations

import csv
import itertools
import math
from collections import Counter

import pytest

from sqlanon import api
from sqlanon.domain.metrics import MetricContext, get_metric
from sqlanon.methods.dataset import open_dataset
from sqlanon.methods.generalization.evaluator import Evaluator
from sqlanon.methods.generalization.problem import problem_for
from sqlanon.methods.generalization.search import SqlNodeEvaluator, lattice_of, search
from sqlanon.spec import spec_from_dict
from tests.conftest import ADULT_QIS, adult_spec_dict
from tests.domain.metrics import oracle

NODE_62 = [0, 3, 0, 2, 2, 1, 1, 2, 0]  # peer-semantics §6.2: k=5, 2 %
HEIGHTS = [1, 4, 1, 2, 3, 2, 2, 2, 1]
NAMES = ("loss", "loss_arithmetic", "precision", "discernibility", "discernibility_star", "aecs",
         "entropy", "suppressed_cells")


def trunc(x: float) -> float:
    return math.floor(x * 1e10) / 1e10


def subset_oracle(adult_dir, node, k, limit) -> dict[str, float]:
    """ARX's definitions (peer-semantics §3) with every count taken over the research subset: a class
    weighs its subset rows; which classes are kept is decided on the table (k-anonymity, the limit)."""
    rows, hiers = oracle.read_adult(adult_dir, ADULT_QIS)
    with open(adult_dir / "adult_subset.csv", encoding="utf-8") as f:
        sub = list(csv.DictReader(f, delimiter=";"))
    levels = dict(zip(ADULT_QIS, node))
    size = Counter(oracle.classes(rows, ADULT_QIS, hiers, levels))
    outliers = sum(c for c in size.values() if c < k)
    anonymous = outliers <= math.floor(limit * len(rows))
    keys = oracle.classes(sub, ADULT_QIS, hiers, levels)
    weight = Counter(keys)
    kept_row = [not anonymous or size[key] >= k for key in keys]
    n = len(sub)
    s = sum(1 for kept in kept_row if not kept)
    losses = []
    for i, q in enumerate(ADULT_QIS):
        d = len(hiers[q])
        label_rows = Counter(r[node[i]] for r in hiers[q])
        a = sum(label_rows[key[i]] for key, kept in zip(keys, kept_row) if kept) / d + s
        m = n / d
        losses.append(trunc(max(0.0, (a - m) / (n - m))))
    geometric = 1.0
    for x in losses:
        geometric *= pow(x + 1.0, 1.0 / len(losses))
    kept_classes = {key for key, kept in zip(keys, kept_row) if kept}
    entropy = 0.0
    for x in oracle.arx_entropy(sub, ADULT_QIS, hiers, levels, kept_row):
        entropy += x
    return {
        "loss": geometric - 1.0,
        "loss_arithmetic": sum(x / len(losses) for x in losses),
        "precision": sum(((n - s) * lv / h + s) / n for lv, h in zip(node, HEIGHTS)) / len(node),
        "discernibility": sum(weight[e] ** 2 for e in kept_classes) + n * s,
        "discernibility_star": sum(c * c for c in weight.values()),
        "aecs": n / (len(kept_classes) + (1 if s else 0)),
        "entropy": entropy,
        "suppressed_cells": s * len(node),
        "rows": n,
        "suppressed": s,
    }


def presence_spec(adult_dir, qis=ADULT_QIS, node=None, limit=0.02, **extra):
    d = adult_spec_dict(adult_dir, qis=qis, limit=limit, levels=dict(zip(qis, node or [0] * len(qis))),
                        privacy=[{"k_anonymity": {"k": 5}},
                                 {"delta_presence": {"subset": str(adult_dir / "adult_subset.csv"),
                                                     "delta_min": 0.0, "delta_max": 1.0}}])
    d.update(extra)
    return spec_from_dict(d)


def test_arx_models_count_the_research_subset(adult_engine, adult_dir):
    """Metrics with a research subset were measured over the whole table (30,162 rows), an order of
    magnitude off ARX's, which measures the subset's 3,016 rows."""
    spec = presence_spec(adult_dir, node=NODE_62, metrics=list(NAMES))
    report = api.check(spec, engine=adult_engine)
    want = subset_oracle(adult_dir, NODE_62, 5, 0.02)
    assert report.node.rows == 30162 and report.node.suppressed_rows == 506  # the release: the table
    assert want["rows"] == 3016 and 0 < want["suppressed"] < 506
    for name in NAMES:
        assert report.metrics[name] == pytest.approx(want[name], rel=1e-12, abs=1e-12), name
    details = report.as_dict()["metric_details"]
    assert details["loss"] == {"rows": 3016, "population": "research subset",
                               "subset": str(adult_dir / "adult_subset.csv")}
    assert details["entropy"]["variant"] == "non-monotonic non-uniform entropy"


def test_metrics_without_subset_say_they_count_the_table(adult_engine, adult_dir):
    d = adult_spec_dict(adult_dir, limit=0.02, levels=dict(zip(ADULT_QIS, NODE_62)))
    d["metrics"] = {"names": ["loss", "classification"], "options": {"target": "salary-class"}}
    report = api.check(spec_from_dict(d), engine=adult_engine)
    assert report.metrics["loss"] == 0.3137130352819242  # ARX's §6.2 figure, unchanged
    assert report.as_dict()["metric_details"] == {
        "loss": {"rows": 30162, "population": "table"},
        "classification": {"rows": 30162, "population": "table"}}


def test_classification_keeps_counting_the_table_under_presence(adult_engine, adult_dir):
    """Metrics outside ARX's quality models describe the released table and say so."""
    spec = presence_spec(adult_dir, node=NODE_62,
                         metrics={"names": ["classification"], "options": {"target": "salary-class"}})
    report = api.check(spec, engine=adult_engine)
    assert report.as_dict()["metric_details"]["classification"] == {"rows": 30162, "population": "table"}


def test_search_over_the_subset_finds_the_brute_force_optimum(adult_engine, adult_dir):
    """The SQL search's lower bounds stay valid when the metric counts the research subset."""
    qis = ["sex", "race", "marital-status"]
    spec = presence_spec(adult_dir, qis=qis)
    with Evaluator(problem_for(spec, open_dataset(spec, adult_engine))) as ev:
        for name in ("loss", "discernibility", "aecs"):
            metric = get_metric(name)
            values = {}
            for node in itertools.product(*[range(spec.attributes[q].hierarchy.height + 1) for q in qis]):
                check = ev.check(dict(zip(qis, node)), 0.02)
                if check.anonymous:
                    values[node] = metric.compute(MetricContext(ev, check))
            found = search(lattice_of(ev.p), SqlNodeEvaluator(ev, 0.02, name), "optimal")
            assert found.metric == min(values.values()), name
            assert values[found.node] == found.metric


def test_text_report_names_the_rows_counted(adult_engine, adult_dir):
    """The human report says beside a value that it counts the research subset (or is a monotonic
    variant), as the JSON report's metric_details does."""
    from sqlanon.report.text import format_report

    spec = presence_spec(adult_dir, node=NODE_62, metrics={"names": ["loss", "entropy"],
                                                           "options": {"monotonic": True}})
    text = format_report(api.check(spec, engine=adult_engine).as_dict())
    lines = {line.split()[0]: line for line in text.splitlines() if line.startswith("  ")}
    assert "over the research subset's 3016 rows" in lines["loss"]
    assert "monotonic non-uniform entropy" in lines["entropy"]


def test_empty_research_subset_counts_no_rows(duck):
    """An empty subset is a valid δ-presence input (every share is 0); its metrics count 0 rows."""
    duck.execute_script("CREATE TABLE t AS SELECT * FROM (VALUES ('a', 1), ('b', 2), ('a', 3)) AS v(q, x)")
    duck.execute_script("CREATE TABLE sub AS SELECT * FROM t WHERE false")
    spec = spec_from_dict({
        "source": {"table": "t"},
        "attributes": {"q": {"role": "quasi_identifier", "hierarchy": {"map": {"a": ["*"], "b": ["*"]}}},
                       "x": {"role": "insensitive"}},
        "privacy": [{"delta_presence": {"subset": "sub", "delta_min": 0.0, "delta_max": 0.5}}],
        "metrics": list(NAMES)})
    report = api.check(spec, engine=duck)
    assert report.anonymous
    assert all(v == 0.0 for v in report.metrics.values()), report.metrics
    assert {d["rows"] for d in report.metric_details.values()} == {0}
