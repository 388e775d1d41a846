"""A verb that does not apply to a spec's method says so in one line.

``compile`` and ``anonymize`` of a noise spec treated it as a generalization and crashed with
``AttributeError: 'NoneType' object has no attribute 'height'`` (its quasi-identifiers have no
hierarchy).
"""

from __future__ import annotations

import pytest

from tests.spec import fuzz


@pytest.fixture()
def folder(tmp_path):
    return fuzz.make_fixture(tmp_path / "base")


@pytest.mark.parametrize("verb,pattern", [
    ("compile", "transformation.method: compile prints the SQL of a fixed transformation; noise is drawn"),
    ("anonymize", "transformation.method: anonymize searches generalization levels"),
])
def test_noise_spec_through_a_verb_without_noise(folder, verb, pattern):
    import yaml

    outcome = fuzz.run_example(folder, verb, yaml.safe_dump(fuzz.NOISE))
    assert outcome.code == 2 and pattern in outcome.stderr


def test_numeric_metric_option_on_a_date_column(folder):
    """metrics.options.numeric naming a DATE quasi-identifier dumped the failing SQL over many lines."""
    import copy

    import yaml

    spec = copy.deepcopy(fuzz.MODELS)
    spec["metrics"]["options"]["numeric"] = ["visit"]
    outcome = fuzz.run_example(folder, "check", yaml.safe_dump(spec))
    assert outcome.code == 2
    assert "metrics.options.numeric[0]: 'visit' is not numeric (column type DATE)" in outcome.stderr
