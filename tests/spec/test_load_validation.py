"""Every key is checked when the spec is loaded, whatever the verb: types, ranges and names.

Before, ``search``, ``time_limit``, ``metric`` and the metric options were read (and checked) only by
the verb or metric that used them, so ``check`` and ``apply`` accepted ``search: best``; a null or a
list where a name belongs reached the engine as ``KeyError: ''`` or ``TypeError: unhashable``.
"""

from __future__ import annotations

import re

import pytest

from sqlanon.errors import SpecError
from sqlanon.spec import load_spec

BASE = """\
source: {table: people}
attributes:
  age: {role: quasi_identifier, hierarchy: {intervals: {widths: [5, 10]}}}
  zip: {role: quasi_identifier, hierarchy: {mask: {levels: 3}}}
  disease: sensitive
"""


def fails(tmp_path, text: str, pattern: str, *, base: str = BASE) -> SpecError:
    p = tmp_path / "spec.yaml"
    p.write_text(base + text)
    with pytest.raises(SpecError, match="^" + re.escape(str(p)) + ": " + pattern) as e:
        load_spec(p)
    assert "\n" not in str(e.value)
    return e.value


def loads(tmp_path, text: str, *, base: str = BASE):
    p = tmp_path / "spec.yaml"
    p.write_text(base + text)
    return load_spec(p)


# --- transformation keys read by anonymize, checked for every verb -------------------------------------

def test_unknown_search_strategy_is_refused_at_load(tmp_path):
    """search: best was accepted by check and apply."""
    fails(tmp_path, "transformation: {search: best}\n",
          r"transformation\.search: unknown search strategy 'best'; use one of .*optimal.*")


def test_misspelt_search_strategy_gets_did_you_mean(tmp_path):
    fails(tmp_path, "transformation: {search: heuristc}\n",
          r"transformation\.search: .*Did you mean 'heuristic'\?$")


@pytest.mark.parametrize("value", ["-5", "0", "'60'", "true", ".nan", ".inf"])
def test_time_limit_must_be_positive_seconds_at_load(tmp_path, value):
    """time_limit: -5 was accepted by check and apply."""
    fails(tmp_path, f"transformation: {{time_limit: {value}}}\n",
          r"transformation\.time_limit: must be a number of seconds > 0, got .*$")


def test_unknown_search_metric_is_refused_at_load(tmp_path):
    fails(tmp_path, "transformation: {metric: discernability}\n",
          r"transformation\.metric: unknown metric 'discernability'.*Did you mean 'discernibility'\?$")


def test_search_metric_must_be_a_name(tmp_path):
    fails(tmp_path, "transformation: {metric: [loss]}\n",
          r"transformation\.metric: must be a metric name, got \['loss'\]$")


METHOD = "(noise|microaggregation|local_suppression|mondrian|anatomy)"


@pytest.mark.parametrize("key,value", [("epsilon", "1"), ("mechanism", "laplace"), ("algorithm", "mdav"),
                                       ("k", "5"), ("bounds", "{age: [0, 1]}")])
def test_keys_of_other_methods_are_refused_under_generalization(tmp_path, key, value):
    fails(tmp_path, f"transformation: {{{key}: {value}}}\n",
          rf"transformation\.{key}: applies to method {METHOD}( or {METHOD})*, not generalization$")


def test_valid_search_keys_still_load(tmp_path):
    spec = loads(tmp_path, "transformation: {search: heuristic, time_limit: 5, metric: discernibility}\n")
    assert spec.transformation.options == {"search": "heuristic", "time_limit": 5, "metric": "discernibility"}


# --- metric options ------------------------------------------------------------------------------------

def test_unknown_metric_option_is_refused_with_did_you_mean(tmp_path):
    """An option typo such as targte was accepted and silently ignored."""
    fails(tmp_path, "metrics: {names: [classification], options: {targte: disease}}\n",
          r"metrics\.options\.targte: unknown metric option 'targte'; known: .*Did you mean 'target'\?$")


@pytest.mark.parametrize("options,pattern", [
    ("{target: [disease]}", r"metrics\.options\.target: must be an attribute name, got \['disease'\]$"),
    ("{target: null}", r"metrics\.options\.target: must be an attribute name, got None$"),
    ("{target: diseas}", r"metrics\.options\.target: unknown attribute 'diseas'.*Did you mean 'disease'\?$"),
    ("{suppressed_penalty: 2}",
     r"metrics\.options\.suppressed_penalty: must be a number in \[0, 1\], got 2$"),
    ("{suppressed_penalty: 'half'}", r"metrics\.options\.suppressed_penalty: must be a number in \[0, 1\]"),
    ("{population: [census]}", r"metrics\.options\.population: must be a table name, got \['census'\]$"),
    ("{population: ''}", r"metrics\.options\.population: must be a table name, got ''$"),
    ("{numeric: age}", r"metrics\.options\.numeric: must be a non-empty list of quasi-identifiers, "
                       r"got 'age'$"),
    ("{numeric: [disease]}", r"metrics\.options\.numeric\[0\]: 'disease' is not a quasi-identifier"),
    ("{numeric: [[age]]}", r"metrics\.options\.numeric\[0\]: must be an attribute name, got \['age'\]$"),
])
def test_metric_option_values_are_checked_at_load(tmp_path, options, pattern):
    fails(tmp_path, f"metrics: {{names: [loss], options: {options}}}\n", pattern)


def test_valid_metric_options_still_load(tmp_path):
    spec = loads(tmp_path, "metrics: {names: [classification, sse], options: {target: disease, "
                           "suppressed_penalty: 0.5, numeric: [age], population: census}}\n")
    assert spec.metric_options["numeric"] == ["age"]


# --- names where a name belongs ------------------------------------------------------------------------

@pytest.mark.parametrize("value,shown", [("null", "None"), ("''", "''"), ("[disease]", r"\['disease'\]"),
                                         ("{a: 1}", r"\{'a': 1\}"), ("5", "5")])
def test_model_attribute_must_be_a_name(tmp_path, value, shown):
    """l_diversity: {attribute: null} crashed with KeyError: ''."""
    fails(tmp_path, f"privacy:\n  - l_diversity: {{attribute: {value}, l: 2}}\n",
          rf"privacy\[0\]\.l_diversity\.attribute: must be an attribute name \(text\), got {shown}$")


def test_presence_subset_must_be_a_name(tmp_path):
    fails(tmp_path, "privacy:\n  - delta_presence: {subset: [t], delta_min: 0, delta_max: 1}\n",
          r"privacy\[0\]\.delta_presence\.subset: must be .*got \['t'\]$")


def test_metric_name_must_be_text(tmp_path):
    """metrics: [[loss]] crashed with TypeError: unhashable type: 'list'."""
    fails(tmp_path, "metrics: [[loss]]\n", r"metrics\[0\]: must be a metric name, got \['loss'\]$")
    fails(tmp_path, "metrics: {names: [loss, {a: 1}]}\n",
          r"metrics\.names\[1\]: must be a metric name, got \{'a': 1\}$")


@pytest.mark.parametrize("key,shown", [("~", "None"), ("on", "True"), ("1.5", "1.5")])
def test_attribute_name_must_be_text(tmp_path, key, shown):
    """A null, boolean or float key (YAML reads `on` as true) became the column 'None' or 'True'."""
    base = ("source: {table: people}\nattributes:\n"
            "  age: {role: quasi_identifier, hierarchy: {mask: {levels: 1}}}\n")
    fails(tmp_path, f"  {key}: sensitive\n",
          rf"attributes: an attribute name must be text \(quote it\), got {shown}$", base=base)


def test_integer_attribute_name_is_the_column_of_that_name(tmp_path):
    spec = loads(tmp_path, "  2019: sensitive\n")
    assert "2019" in spec.attributes


def test_level_key_must_be_a_name(tmp_path):
    fails(tmp_path, "transformation: {levels: {~: 1}}\n",
          r"transformation\.levels: a quasi-identifier name must be text \(quote it\), got None$")


# --- source and output keys ----------------------------------------------------------------------------

def test_header_is_checked_for_a_table_source(tmp_path):
    fails(tmp_path, "", r"source\.header: must be true or false, got 5$",
          base=BASE.replace("{table: people}", "{table: people, header: 5}"))


@pytest.mark.parametrize("key", ["header: false", "all_text: true"])
def test_csv_options_are_refused_for_a_table_source(tmp_path, key):
    fails(tmp_path, "", rf"source\.{key.split(':')[0]}: applies to file sources only$",
          base=BASE.replace("{table: people}", f"{{table: people, {key}}}"))


def test_database_and_connection_together_are_refused(tmp_path):
    fails(tmp_path, "", r"source: give one of `database` and `connection` \(the same setting\), not both$",
          base=BASE.replace("{table: people}", "{table: people, database: a.duckdb, connection: b.duckdb}"))


def test_empty_schema_is_refused(tmp_path):
    fails(tmp_path, "", r"source\.schema: must be a schema name, got ''$",
          base=BASE.replace("{table: people}", "{table: people, schema: ''}"))


def test_output_path_applies_to_mode_sql_only(tmp_path):
    fails(tmp_path, "output: {mode: table, path: out.sql}\n",
          r"output\.path: applies to mode sql \(the file the SQL is written to\), not table$")


# --- every verb loads the same way ---------------------------------------------------------------------

@pytest.mark.parametrize("verb", ["check", "apply", "compile", "anonymize"])
def test_every_verb_refuses_a_bad_key_before_opening_the_database(tmp_path, verb, capsys):
    from sqlanon.cli.main import main

    p = tmp_path / "spec.yaml"
    p.write_text(BASE + "transformation: {search: best}\n")
    missing = tmp_path / "never.duckdb"
    assert main([verb, str(p), "--database", str(missing)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "transformation.search: unknown search strategy 'best'" in err[0]
    assert not missing.exists()


# --- method-specific keys ------------------------------------------------------------------------------

MICRO = """\
source: {table: people}
attributes: {age: quasi_identifier, income: quasi_identifier, disease: sensitive}
transformation: {method: microaggregation, k: 3, algorithm: tcloseness_kfirst, t: 0.5, attribute: %s}
"""


@pytest.mark.parametrize("value,pattern", [
    ("[disease]", r"must be a sensitive attribute's name, got \['disease'\]$"),
    ("null", r"must be a sensitive attribute's name, got None$"),
    ("diseas", r"'diseas' is not a declared sensitive attribute\. Did you mean 'disease'\?$"),
    ("age", r"'age' is not a declared sensitive attribute"),
])
def test_microaggregation_attribute_must_name_a_sensitive_attribute(tmp_path, value, pattern):
    """attribute: [disease] crashed with TypeError: unhashable type: 'list' once the data was read."""
    fails(tmp_path, "", r"transformation\.attribute: " + pattern, base=MICRO % value)


def test_weights_is_not_a_transformation_setting(tmp_path):
    fails(tmp_path, "transformation: {weights: {age: 2}}\n",
          r"transformation\.weights: attribute weights are set per attribute \(attributes\.<name>\.weight\)")


@pytest.mark.parametrize("algorithm,key,value,rule", [
    ("vmdav", "gamma", "x", r"a number >= 0"),
    ("vmdav", "gamma", "-1", r"a number >= 0"),
    ("tcloseness_merge", "t", "5", r"a number in \(0, 1\]"),
    ("tcloseness_merge", "distance", "zz", r"one of ordered, equal, hierarchical"),
    ("tcloseness_merge", "order", "x", r"a non-empty list of distinct values, lowest first"),
    ("kpqr", "seed", "-3", r"an integer >= 0"),
    ("kpqr", "q", "0", r"a number in \(0, 1\]"),
    ("kpqr", "p", "1.5", r"an integer >= 1"),
])
def test_microaggregation_options_are_checked_at_load(tmp_path, algorithm, key, value, rule):
    """These were checked only by the algorithm, after the data was read, and without the file's name
    (a negative seed crashed numpy's generator with ValueError)."""
    required = {"tcloseness_merge": {"t": "0.5"},
                "kpqr": {"p": "2", "q": "0.5", "r": "0.5"}}.get(algorithm, {})
    options = ", ".join(f"{k}: {v}" for k, v in {**required, key: value}.items())
    base = ("source: {table: people}\n"
            "attributes: {age: quasi_identifier, income: quasi_identifier, disease: sensitive}\n"
            f"transformation: {{method: microaggregation, k: 3, algorithm: {algorithm}, {options}}}\n")
    fails(tmp_path, "", rf"transformation\.{key}: must be {rule}, got ", base=base)
