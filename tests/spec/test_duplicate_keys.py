"""A key written twice in one YAML mapping is an error naming its key path and both lines.

YAML parsers keep the last value silently: ``k: 5`` then ``k: 1`` ran with k = 1.
"""

from __future__ import annotations

import re

import pytest

from sqlanon.errors import SpecError
from sqlanon.spec import load_spec


def write(tmp_path, text: str):
    p = tmp_path / "spec.yml"
    p.write_text(text)
    return p


def test_duplicate_model_parameter_is_refused_with_both_lines(tmp_path):
    """k: 5 followed by k: 1 in the same mapping ran with k = 1."""
    p = write(tmp_path, """\
source: {table: people}
attributes:
  age: {role: quasi_identifier, hierarchy: {intervals: {widths: [5, 10]}}}
privacy:
  - k_anonymity:
      k: 5
      k: 1
""")
    with pytest.raises(SpecError, match="^" + re.escape(f"{p}: privacy[0].k_anonymity.k: duplicate key "
                                                        "(lines 6 and 7)") + "$"):
        load_spec(p)


def test_duplicate_top_level_key(tmp_path):
    p = write(tmp_path, """\
source: {table: people}
attributes: {age: {role: quasi_identifier, hierarchy: {intervals: {widths: [5]}}}}
source: {table: other}
""")
    with pytest.raises(SpecError, match=re.escape(f"{p}: source: duplicate key (lines 1 and 3)")):
        load_spec(p)


def test_duplicate_attribute_in_flow_mapping(tmp_path):
    p = write(tmp_path, """\
source: {table: people}
attributes:
  age: {role: quasi_identifier, role: sensitive, hierarchy: {intervals: {widths: [5]}}}
""")
    message = f"{p}: attributes.age.role: duplicate key (lines 3 and 3)"
    with pytest.raises(SpecError, match=re.escape(message)):
        load_spec(p)


def test_duplicate_attribute_name(tmp_path):
    p = write(tmp_path, """\
source: {table: people}
attributes:
  age: {role: quasi_identifier, hierarchy: {intervals: {widths: [5]}}}
  zip: sensitive
  age: sensitive
""")
    with pytest.raises(SpecError, match=re.escape(f"{p}: attributes.age: duplicate key (lines 3 and 5)")):
        load_spec(p)


def test_quoted_and_plain_spellings_of_a_key_are_the_same_key(tmp_path):
    p = write(tmp_path, """\
source: {table: people}
attributes:
  age: {role: quasi_identifier, hierarchy: {intervals: {widths: [5]}}}
transformation:
  suppression_limit: 0.1
  'suppression_limit': 0
""")
    message = "transformation.suppression_limit: duplicate key (lines 5 and 6)"
    with pytest.raises(SpecError, match=re.escape(message)):
        load_spec(p)


def test_merge_keys_may_be_overridden(tmp_path):
    """``<<: *base`` followed by an explicit key is YAML's override, not a duplicate."""
    p = write(tmp_path, """\
source: {table: people}
attributes:
  age: &qi {role: quasi_identifier, hierarchy: {intervals: {widths: [5]}}, weight: 1}
  zip:
    <<: *qi
    weight: 2
""")
    spec = load_spec(p)
    assert spec.attributes["zip"].weight == 2.0 and spec.attributes["age"].weight == 1.0


def test_duplicate_key_in_a_hierarchy_builder_given_on_the_command_line():
    from sqlanon.cli.hierarchy import parse_builder

    message = "--builder.intervals.widths: duplicate key (lines 1 and 1)"
    with pytest.raises(SpecError, match=re.escape(message)):
        parse_builder("{intervals: {widths: [5], widths: [10]}}")


def test_duplicate_leaf_in_a_map_hierarchy(tmp_path):
    """A map hierarchy listing a value twice kept only the last generalization."""
    p = write(tmp_path, """\
source: {table: people}
attributes:
  sex:
    role: quasi_identifier
    hierarchy:
      map:
        Male: '*'
        Female: '*'
        Male: M
""")
    with pytest.raises(SpecError, match=re.escape(f"{p}: attributes.sex.hierarchy.map.Male: duplicate key "
                                                  "(lines 7 and 9)")):
        load_spec(p)
