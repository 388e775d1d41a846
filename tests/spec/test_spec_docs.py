"""docs/spec.md documents every key the loader accepts, every model and every metric."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from sqlanon.domain.metrics import METRICS
from sqlanon.domain.models import MODELS
from sqlanon.spec import load as L
from sqlanon.spec.hierarchies import HIERARCHY_BUILDERS

DOC = Path(__file__).resolve().parents[2] / "docs" / "spec.md"


def documented() -> set[str]:
    return set(re.findall(r"`([A-Za-z_][\w-]*)", DOC.read_text(encoding="utf-8")))


@pytest.mark.parametrize("group", [
    L.TOP_KEYS, L.SOURCE_KEYS, L.ATTRIBUTE_KEYS, HIERARCHY_BUILDERS.names(), L.OUTPUT_KEYS,
    L.TRANSFORMATION_KEYS, ("widths", "origin", "bottom", "top", "levels", "from", "char", "values",
                            "sizes", "null", "delimiter", "names", "options")])
def test_every_spec_key_is_documented(group):
    assert sorted(set(group) - documented()) == []


def test_every_model_and_its_parameters_are_documented():
    import dataclasses

    words = documented()
    for name, cls in MODELS.items():
        assert name in words, name
        for f in dataclasses.fields(cls):
            if f.init:
                assert f.name in words, f"{name}.{f.name}"


def test_every_metric_is_documented():
    assert sorted(set(METRICS) - documented()) == []


def test_every_metric_option_is_documented():
    from sqlanon.spec.metric_options import METRIC_OPTIONS

    assert sorted(set(METRIC_OPTIONS) - documented()) == []
