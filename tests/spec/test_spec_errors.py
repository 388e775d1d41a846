"""One test per kind of spec mistake: the message names the file, the key path, the rule and, where it
fits, the closest valid name."""

from __future__ import annotations

import re
import textwrap

import pytest

from sqlanon import api
from sqlanon.errors import HierarchyError, SpecError

BASE = """\
source: {table: people}
attributes:
  age: {role: quasi_identifier, hierarchy: {intervals: {widths: [5, 10]}}}
  zip: {role: quasi_identifier, hierarchy: {csv: zip.csv}}
  disease: {role: sensitive}
privacy:
  - k_anonymity: {k: 2}
"""


@pytest.fixture()
def folder(tmp_path):
    (tmp_path / "zip.csv").write_text("47677;4767*;*\n47602;4760*;*\n")
    return tmp_path


def load(folder, text: str, *, base: bool = True):
    from sqlanon.spec import load_spec

    p = folder / "spec.yaml"
    p.write_text(BASE + text if base else textwrap.dedent(text))
    return load_spec(p), p


def fails(folder, text: str, pattern: str, *, base: bool = True, error=SpecError) -> None:
    p = folder / "spec.yaml"
    with pytest.raises(error, match="^" + re.escape(str(p)) + ": " + pattern):
        load(folder, text, base=base)


def test_valid_base_loads(folder):
    spec, p = load(folder, "")
    assert spec.quasi_identifiers == ["age", "zip"] and spec.path == str(p)
    assert spec.attributes["zip"].hierarchy.height == 2


def test_unknown_top_level_key(folder):
    fails(folder, "privcy: []\n", r"privcy: unknown key 'privcy'; allowed: source, attributes, .*"
                                 r"Did you mean 'privacy'\?$")


def test_unknown_attribute_key(folder):
    fails(folder, """\
        source: {table: people}
        attributes:
          age: {role: quasi_identifier, hierachy: {csv: zip.csv}}
        """, r"attributes\.age\.hierachy: unknown key 'hierachy'.*Did you mean 'hierarchy'\?$", base=False)


def test_unknown_role(folder):
    fails(folder, """\
        source: {table: people}
        attributes:
          age: {role: quasi-identifier, hierarchy: {csv: zip.csv}}
        """, r"attributes\.age\.role: unknown role 'quasi-identifier'; use one of quasi_identifier, "
             r"sensitive, identifier, insensitive\. Did you mean 'quasi_identifier'\?$", base=False)


def test_unknown_type(folder):
    fails(folder, """\
        source: {table: people}
        attributes:
          age: {role: quasi_identifier, type: integr, hierarchy: {csv: zip.csv}}
        """, r"attributes\.age\.type: unknown type 'integr'.*Did you mean 'integer'\?$", base=False)


def test_unknown_hierarchy_kind(folder):
    fails(folder, """\
        source: {table: people}
        attributes:
          age: {role: quasi_identifier, hierarchy: {interval: {widths: [5]}}}
        """, r"attributes\.age\.hierarchy\.interval: unknown key 'interval'.*Did you mean "
             r"'intervals'\?$", base=False)


def test_unknown_column_checked_against_the_table(folder, duck):
    duck.con.execute("CREATE TABLE people (age INT, zip VARCHAR, disease VARCHAR)")
    p = folder / "spec.yaml"
    p.write_text(BASE.replace("  disease:", "  diseases:").replace("privacy:\n  - k_anonymity: {k: 2}\n", ""))
    with pytest.raises(SpecError, match="^" + re.escape(str(p)) + r": attributes\.diseases: unknown "
                       r"column 'diseases' in 'people'; columns: age, zip, disease\. Did you mean "
                       r"'disease'\?$"):
        api.check(str(p), engine=duck)


def test_unknown_model(folder):
    fails(folder, "  - k_anonimity: {k: 2}\n",
          r"privacy\[1\]\.k_anonimity: unknown privacy model 'k_anonimity'.*Did you mean 'k_anonymity'\?$")


def test_unknown_model_parameter(folder):
    fails(folder, "  - l_diversity: {attribute: disease, l: 2, variant: distinct, kk: 3}\n",
          r"privacy\[1\]\.l_diversity\.kk: unknown parameter 'kk'")


def test_k_below_one(folder):
    fails(folder, "  - k_anonymity: {k: 0}\n",
          r"privacy\[1\]\.k_anonymity\.k: k must be an integer >= 1, got 0$")


def test_t_outside_zero_one(folder):
    fails(folder, "  - t_closeness: {attribute: disease, t: 1.5}\n",
          r"privacy\[1\]\.t_closeness\.t: t must be a number in \[0\.0, 1\.0\], got 1\.5$")


def test_model_on_an_attribute_that_is_not_sensitive(folder):
    fails(folder, "  - l_diversity: {attribute: age, l: 2}\n",
          r"privacy\[1\]\.l_diversity\.attribute: 'age' has role quasi_identifier; the model needs a "
          r"sensitive attribute$")


def test_model_on_an_unknown_attribute(folder):
    fails(folder, "  - l_diversity: {attribute: diseas, l: 2}\n",
          r"privacy\[1\]\.l_diversity\.attribute: unknown attribute 'diseas'\. Did you mean 'disease'\?$")


def test_level_above_height(folder):
    fails(folder, "transformation: {levels: {age: 4}}\n",
          r"transformation\.levels\.age: level 4 is above the hierarchy's height 3$")


def test_level_of_an_unknown_attribute(folder):
    fails(folder, "transformation: {levels: {ag: 1}}\n",
          r"transformation\.levels\.ag: unknown attribute 'ag'\. Did you mean 'age'\?$")


def test_negative_level(folder):
    fails(folder, "transformation: {levels: {age: -1}}\n",
          r"transformation\.levels\.age: a level must be an integer >= 0, got -1$")


def test_ragged_hierarchy_rows(folder):
    (folder / "zip.csv").write_text("47677;4767*;*\n47602;*\n")
    fails(folder, "", r"attributes\.zip\.hierarchy\.csv: " + re.escape(str(folder / "zip.csv")) +
          r": row 2 \(leaf '47602'\) has 2 columns but row 1 has 3", error=HierarchyError)


def test_missing_hierarchy_file(folder):
    (folder / "zip.csv").unlink()
    fails(folder, "", r"attributes\.zip\.hierarchy\.csv: " + re.escape(str(folder / "zip.csv")) +
          r": hierarchy file not found$", error=HierarchyError)


def test_bad_builder_parameter_names_its_key_path(folder):
    fails(folder, """\
        source: {table: people}
        attributes:
          age: {role: quasi_identifier, hierarchy: {intervals: {widths: [5, 12]}}}
        """, r"attributes\.age\.hierarchy\.intervals\.widths\[1\]: width 12 is not a multiple of the "
             r"previous width 5", base=False, error=HierarchyError)


def test_bad_date_unit_names_its_index(folder):
    fails(folder, """\
        source: {table: people}
        attributes:
          d: {role: quasi_identifier, hierarchy: {date: [month, yr]}}
        """, r"attributes\.d\.hierarchy\.date\[1\]: unknown date unit 'yr'", base=False,
          error=HierarchyError)


def test_malformed_yaml_gives_line_and_column(folder):
    fails(folder, "source: {table: people\nattributes: [\n", r"line \d+, column \d+: not valid YAML",
          base=False)
    p = folder / "spec.yaml"
    p.write_text("source: {table: people}\nattributes:\n  age: {role: x\n  zip: 1\n")
    with pytest.raises(SpecError, match=r"line 4, column 6: not valid YAML"):
        load(folder, p.read_text(), base=False)


def test_suppression_limit_outside_zero_one(folder):
    fails(folder, "transformation: {suppression_limit: 1.5}\n",
          r"transformation\.suppression_limit: must be in \[0, 1\], got 1\.5$")
    fails(folder, "transformation: {suppression_limit: '5%'}\n",
          r"transformation\.suppression_limit: must be a number, got '5%'$")


def test_unknown_dialect(folder):
    fails(folder, "output: {dialect: postgress}\n",
          r"output\.dialect: unknown dialect 'postgress'; use one of .*Did you mean 'postgres'\?$")


def test_unknown_metric(folder):
    fails(folder, "metrics: [loss, discernability]\n",
          r"metrics\[1\]: unknown metric 'discernability'; known: .*Did you mean 'discernibility'\?$")


def test_missing_source(folder):
    fails(folder, "attributes: {a: sensitive}\n", r"source: is required$", base=False)


def test_table_and_file_together(folder):
    fails(folder, "source: {table: t, file: data.csv}\nattributes: {a: sensitive}\n",
          r"source: give exactly one of `table`.*or `file`", base=False)


def test_no_quasi_identifier(folder):
    fails(folder, "source: {table: t}\nattributes: {a: sensitive}\n",
          r"attributes: declare at least one quasi_identifier$", base=False)


def test_quasi_identifier_without_hierarchy(folder):
    fails(folder, "source: {table: t}\nattributes: {a: quasi_identifier}\n",
          r"attributes\.a\.hierarchy: a quasi-identifier needs a hierarchy", base=False)


def test_spec_that_is_not_a_mapping(folder):
    fails(folder, "- just\n- a list\n", r"the spec must be a mapping", base=False)


def test_negative_weight(folder):
    fails(folder, """\
        source: {table: t}
        attributes:
          age: {role: quasi_identifier, weight: -1, hierarchy: {intervals: {widths: [5]}}}
        """, r"attributes\.age\.weight: must be in \[0, inf\], got -1$", base=False)


def test_action_on_a_non_identifier(folder):
    fails(folder, """\
        source: {table: t}
        attributes:
          age: {role: quasi_identifier, action: hash, hierarchy: {intervals: {widths: [5]}}}
        """, r"attributes\.age\.action: only identifiers take an action", base=False)


def test_missing_spec_file(tmp_path):
    from sqlanon.spec import load_spec

    with pytest.raises(SpecError, match=re.escape(str(tmp_path / "none.yaml")) + ": spec file not found"):
        load_spec(tmp_path / "none.yaml")


def test_an_in_place_output_with_a_name_says_the_name_is_not_used():
    """`output: {mode: in_place, name: foo}` (or `--output foo`) rewrote the source and dropped the
    name without a word."""
    from sqlanon.spec import spec_from_dict

    spec = {"source": {"table": "t"},
            "attributes": {"q": {"role": "quasi_identifier", "hierarchy": {"map": {"a": ["*"]}}}},
            "privacy": [{"k_anonymity": {"k": 2}}],
            "output": {"mode": "in_place", "name": "foo"}}
    with pytest.warns(UserWarning, match=r"output\.name: mode in_place replaces the source table itself"):
        spec_from_dict(spec)
