"""The noise settings: defaults, and every refusal naming its key."""

from __future__ import annotations

import pytest

from sqlanon.errors import SpecError
from sqlanon.methods.perturbation.options import MECHANISMS, parse


def test_defaults():
    assert parse({"mechanism": "correlated", "attributes": ["a", "b"]}).params == {"alpha": 0.5}
    assert parse({"mechanism": "rank_swap", "attributes": "a"}).params == {"p": 5.0}
    assert parse({"mechanism": "invariant_pram", "attributes": ["c"]}).params == {"pd": 0.8, "alpha": 0.5}
    opts = parse({"mechanism": "laplace", "attributes": ["a", "b"], "epsilon": 1,
                  "sensitivity": {"a": 1, "b": 2}, "bounds": {"a": [0, 1], "b": [-1, 1]}})
    assert opts.sensitivity("b") == 2 and opts.params["bounds"]["b"] == (-1.0, 1.0)
    assert opts.seed is None and opts.linkage


@pytest.mark.parametrize(("options", "path", "message"), [
    ({"attributes": ["a"]}, "transformation.mechanism", "must be one of"),
    ({"mechanism": "uncorrelated"}, "transformation.attributes", "must list the attributes"),
    ({"mechanism": "uncorrelated", "attributes": ["a", "a"]}, "transformation.attributes", "twice"),
    ({"mechanism": "sampling", "fraction": 0.5, "attributes": ["a"]}, "transformation.attributes",
     "whole rows"),
    ({"mechanism": "sampling", "fraction": 0}, "transformation.fraction", "> 0"),
    ({"mechanism": "laplace", "attributes": ["a", "b"], "epsilon": 1, "sensitivity": {"a": 1},
      "bounds": {"a": [0, 1], "b": [0, 1]}}, "transformation.sensitivity", "no entry for attribute 'b'"),
    ({"mechanism": "laplace", "attributes": ["a"], "epsilon": 1, "sensitivity": 1,
      "bounds": {"a": [1, 1]}}, "transformation.bounds.a", "low must be below high"),
    ({"mechanism": "laplace", "attributes": ["a"], "epsilon": 1, "sensitivity": 1,
      "bounds": {"a": [0, 1], "z": [0, 1]}}, "transformation.bounds", "'z', which is not in"),
    ({"mechanism": "discrete_laplace", "attributes": ["a"], "epsilon": 1, "sensitivity": 0.5},
     "transformation.sensitivity", "an integer"),
    ({"mechanism": "gaussian", "attributes": ["a"], "epsilon": 1, "sensitivity": 1},
     "transformation.delta", "is required"),
    ({"mechanism": "invariant_pram", "attributes": ["a"], "theta": 0.5, "pd": 0.7},
     "transformation.theta", "not both"),
    ({"mechanism": "randomized_response", "attributes": ["a"], "epsilon": 1,
      "categories": {"a": ["x"]}}, "transformation.categories.a", "at least 2"),
    ({"mechanism": "pram", "attributes": ["a"], "matrix": {"a": {"x": {"y": 1}, "z": {"z": 1}}}},
     "transformation.matrix.a.x", "'y', which has no row"),
    ({"mechanism": "condensation", "attributes": ["a"], "k": 2.5}, "transformation.k", "an integer"),
    ({"mechanism": "uncorrelated", "attributes": ["a"], "seed": -1}, "transformation.seed", ">= 0"),
    ({"mechanism": "uncorrelated", "attributes": ["a"], "linkage": "no"}, "transformation.linkage",
     "true or false"),
    ({"mechanism": "staircase", "attributes": ["a"], "epsilon": 1, "sensitivity": 1, "p": 3},
     "transformation.p", "does not apply to mechanism staircase"),
])
def test_refusals_name_the_key(options, path, message):
    with pytest.raises(SpecError) as err:
        parse(options)
    assert err.value.path == path
    assert message in str(err.value)


def test_every_mechanism_is_documented():
    import re
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[3] / "docs" / "spec.md").read_text(encoding="utf-8")
    words = set(re.findall(r"`([a-z_]+)`", doc))
    assert sorted(set(MECHANISMS) - words) == []
