"""The metrics through the public API on Adult (occupation sensitive, 8 QIs), against brute force."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from sqlanon import api
from sqlanon.spec import spec_from_dict
from tests.conftest import ADULT_QIS, adult_spec_dict
from tests.domain.metrics import oracle

QIS = [q for q in ADULT_QIS if q != "occupation"]
NODE = [0, 3, 0, 2, 2, 1, 1, 0]
METRICS = ["entropy", "kl_divergence", "classification", "suppressed_cells", "prosecutor_risk_avg",
           "prosecutor_risk_max", "prosecutor_records_at_max", "marketer_risk", "journalist_risk_avg",
           "journalist_risk_max", "sample_uniques", "record_linkage"]


def test_report_metrics_match_brute_force(adult_engine, adult_dir):
    spec = spec_from_dict({**adult_spec_dict(adult_dir, qis=QIS, sensitive=["occupation"],
                                             levels=dict(zip(QIS, NODE)), limit=0.02),
                           "metrics": METRICS})
    report = api.check(spec, engine=adult_engine).as_dict()
    m = json.loads(json.dumps(report))["metrics"]
    assert list(m) == METRICS

    rows, hiers = oracle.read_adult(adult_dir, QIS)
    levels = dict(zip(QIS, NODE))
    keys, kept = oracle.released(rows, QIS, hiers, levels, 5, 0.02)
    n, s = len(rows), kept.count(False)
    assert report["suppressed_rows"] == s > 0
    size = Counter(k for k, r in zip(keys, kept) if r)
    risks = [1 / size[k] for k, r in zip(keys, kept) if r]

    assert m["suppressed_cells"] == s * len(QIS)
    assert m["classification"] == pytest.approx(oracle.classification(rows, keys, kept, "occupation"),
                                                rel=1e-12)
    assert m["entropy"] == pytest.approx(sum(oracle.arx_entropy(rows, QIS, hiers, levels, kept)),
                                         rel=1e-15)
    assert m["kl_divergence"] == pytest.approx(
        oracle.kl(rows, QIS, hiers, levels, kept, per_row=False), rel=1e-9)
    assert m["prosecutor_risk_avg"] == m["marketer_risk"] == pytest.approx(sum(risks) / len(risks), rel=1e-12)
    assert m["journalist_risk_avg"] == m["prosecutor_risk_avg"]
    assert m["prosecutor_risk_max"] == m["journalist_risk_max"] == max(risks) == 1 / 5
    assert m["prosecutor_records_at_max"] == pytest.approx(risks.count(max(risks)) / len(risks), rel=1e-12)
    assert m["sample_uniques"] == risks.count(1.0) / len(risks) == 0.0  # k = 5: no released unique
    assert m["record_linkage"] == pytest.approx(len(size) / n, rel=1e-15)
