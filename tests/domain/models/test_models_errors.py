"""Bad parameters of the privacy models: clear errors naming the spec path, the rule and the value."""

from __future__ import annotations

import pytest

from sqlanon import api
from sqlanon.domain.hierarchy import TableHierarchy
from sqlanon.domain.models.t_closeness import TCloseness
from sqlanon.errors import HierarchyError, SpecError
from sqlanon.methods.generalization.evaluator import Evaluator, Problem
from sqlanon.spec import spec_from_dict
from sqlanon.sql.nodes import table
from tests.conftest import adult_spec_dict

QIS = ["sex", "race"]


def spec(adult_dir, model, sensitive=("occupation",), attrs=None):
    d = adult_spec_dict(adult_dir, qis=QIS, sensitive=sensitive, privacy=[{"k_anonymity": {"k": 2}}, model])
    for name, extra in (attrs or {}).items():
        d["attributes"][name].update(extra)
    return spec_from_dict(d, source="spec.yaml")


@pytest.mark.parametrize("t", [1.5, -0.1, "0.2", True])
def test_t_outside_unit_interval(adult_dir, t):
    with pytest.raises(SpecError, match=r"^spec\.yaml: privacy\[1\]\.t_closeness\.t: t must be a number "
                                        r"in \[0\.0, 1\.0\], got " + repr(t).replace(".", r"\.")):
        spec(adult_dir, {"t_closeness": {"attribute": "occupation", "t": t}})


def test_unknown_distance_suggests_the_closest(adult_dir):
    with pytest.raises(SpecError, match=r"privacy\[1\]\.t_closeness\.distance: unknown ground distance "
                                        r"'hierarchial'; use one of equal, ordered, hierarchical\. "
                                        r"Did you mean 'hierarchical'\?"):
        spec(adult_dir, {"t_closeness": {"attribute": "occupation", "t": 0.2, "distance": "hierarchial"}})


def test_hierarchical_distance_needs_a_hierarchy(adult_dir):
    with pytest.raises(SpecError, match=r"privacy\[1\]\.t_closeness\.distance: the hierarchical distance "
                                        r"needs a `hierarchy:` on attribute 'occupation'"):
        spec(adult_dir, {"t_closeness": {"attribute": "occupation", "t": 0.2, "distance": "hierarchical"}})


def test_ordered_distance_on_a_text_column(adult_engine, adult_dir):
    s = spec(adult_dir, {"t_closeness": {"attribute": "occupation", "t": 0.2, "distance": "ordered"}})
    with pytest.raises(SpecError, match=r"attributes\.occupation: the ordered distance of 'occupation' "
                                        r"needs an ordered attribute, but 'occupation' is a text column "
                                        r"without an order: declare `type: integer` or `decimal`"):
        api.check(s, engine=adult_engine)


def test_ordered_distance_on_a_declared_string(adult_dir):
    with pytest.raises(SpecError, match=r"privacy\[1\]\.t_closeness\.distance: the ordered distance needs "
                                        r"an order for string attribute 'occupation'"):
        spec(adult_dir, {"t_closeness": {"attribute": "occupation", "t": 0.2, "distance": "ordered"}},
             attrs={"occupation": {"type": "string"}})


def test_order_missing_values(adult_engine, adult_dir):
    s = spec(adult_dir, {"t_closeness": {"attribute": "occupation", "t": 0.2, "distance": "ordered"}},
             attrs={"occupation": {"order": ["Sales", "Tech-support"]}})
    with pytest.raises(SpecError, match=r"attributes\.occupation\.order: 12 value\(s\) of 'occupation' are "
                                        r"missing from its `order:` list"):
        api.check(s, engine=adult_engine)


def test_ordered_distance_with_declared_integer_reads_numbers(adult_engine, adult_dir):
    s = spec(adult_dir, {"t_closeness": {"attribute": "occupation", "t": 0.2, "distance": "ordered"}},
             attrs={"occupation": {"type": "integer"}})
    with pytest.raises(SpecError, match=r"attributes\.occupation: the ordered distance of 'occupation' "
                                        r"reads 'occupation' as numbers, but 14 of its distinct values are "
                                        r"not numbers"):
        api.check(s, engine=adult_engine)


@pytest.mark.parametrize("model", [
    {"t_closeness": {"attribute": "race", "t": 0.2}},
    {"delta_disclosure": {"attribute": "sex", "delta": 1.0}},
    {"beta_likeness": {"attribute": "race", "beta": 1.0}},
    {"k_e_anonymity": {"attribute": "race", "k": 2, "e": 1}},
])
def test_model_on_a_quasi_identifier(adult_dir, model):
    (key, params), = model.items()
    name = params["attribute"]
    with pytest.raises(SpecError, match=rf"privacy\[1\]\.{key}\.attribute: '{name}' has role "
                                        r"quasi_identifier; the model needs a sensitive attribute"):
        spec(adult_dir, model)


def test_model_on_an_unknown_attribute(adult_dir):
    with pytest.raises(SpecError, match=r"privacy\[1\]\.t_closeness\.attribute: unknown attribute "
                                        r"'ocupation'\. Did you mean 'occupation'\?"):
        spec(adult_dir, {"t_closeness": {"attribute": "ocupation", "t": 0.2}})


def test_delta_min_above_delta_max(adult_dir):
    with pytest.raises(SpecError, match=r"privacy\[1\]\.delta_presence\.delta_min: delta_min \(0\.5\) must "
                                        r"not exceed delta_max \(0\.2\)"):
        spec(adult_dir, {"delta_presence": {"subset": "s.csv", "delta_min": 0.5, "delta_max": 0.2}})


@pytest.mark.parametrize("model, message", [
    ({"delta_disclosure": {"attribute": "occupation", "delta": 0}},
     r"delta_disclosure\.delta: delta must be a number in \(0\.0, inf\), got 0"),
    ({"beta_likeness": {"attribute": "occupation", "beta": -1}},
     r"beta_likeness\.beta: beta must be a number in \(0\.0, inf\), got -1"),
    ({"beta_likeness": {"attribute": "occupation", "beta": 1, "variant": "enhancd"}},
     r"beta_likeness\.variant: unknown β-likeness variant 'enhancd'; use one of basic, enhanced\. "
     r"Did you mean 'enhanced'\?"),
    ({"kpqr_anonymity": {"attribute": "occupation", "k": 2, "p": 3, "q": 0.1, "r": 0.5}},
     r"kpqr_anonymity\.p: p \(3\) must not exceed k \(2\)"),
    ({"kpqr_anonymity": {"attribute": "occupation", "k": 3, "p": 2, "q": 0, "r": 0.5}},
     r"kpqr_anonymity\.q: q must be a number in \(0\.0, 1\.0\], got 0"),
    ({"k_e_anonymity": {"attribute": "occupation", "k": 3, "e": -1}},
     r"k_e_anonymity\.e: e must be a number in \[0\.0, inf\), got -1"),
    ({"delta_presence": {"subset": "s.csv", "delta_min": 0, "delta_max": 1.5}},
     r"delta_presence\.delta_max: delta_max must be a number in \[0\.0, 1\.0\], got 1\.5"),
    ({"t_closeness": {"attribute": "occupation"}}, r"t_closeness: t_closeness needs parameter 't'"),
])
def test_bad_parameters(adult_dir, model, message):
    with pytest.raises(SpecError, match=r"privacy\[1\]\." + message):
        spec(adult_dir, model)


def test_numeric_model_on_declared_text(adult_dir):
    with pytest.raises(SpecError, match=r"privacy\[1\]\.k_e_anonymity\.attribute: \(k,e\)-anonymity needs "
                                        r"a numeric sensitive attribute, but 'occupation' has type string"):
        spec(adult_dir, {"k_e_anonymity": {"attribute": "occupation", "k": 2, "e": 1}},
             attrs={"occupation": {"type": "string"}})


def test_numeric_model_on_text_values(adult_engine, adult_dir):
    s = spec(adult_dir, {"kpqr_anonymity": {"attribute": "occupation", "k": 2, "p": 2, "q": 0.1, "r": 0.5}})
    with pytest.raises(SpecError, match=r"attributes\.occupation: the variance ratio reads 'occupation' as "
                                        r"numbers, but 14 of its distinct values are not numbers"):
        api.check(s, engine=adult_engine)


def test_subset_errors(adult_engine, adult_dir, tmp_path):
    missing = tmp_path / "nope.csv"
    s = spec(adult_dir, {"delta_presence": {"subset": str(missing), "delta_min": 0, "delta_max": 1}})
    with pytest.raises(SpecError,
                       match=r"delta_presence\.subset: research subset file not found: .*nope\.csv"):
        api.check(s, engine=adult_engine)
    s = spec(adult_dir, {"delta_presence": {"subset": "reserch", "delta_min": 0, "delta_max": 1}})
    with pytest.raises(SpecError, match=r"delta_presence\.subset: no table or view named 'reserch'"):
        api.check(s, engine=adult_engine)
    adult_engine.con.execute("CREATE TABLE narrow AS SELECT sex, race FROM adult LIMIT 3")
    s = spec(adult_dir, {"delta_presence": {"subset": "narrow", "delta_min": 0, "delta_max": 1}})
    with pytest.raises(SpecError, match=r"the research subset 'narrow' lacks column\(s\) 'age', "):
        api.check(s, engine=adult_engine)
    adult_engine.con.execute("CREATE TABLE stranger AS SELECT * REPLACE ('Nobody' AS occupation) "
                             "FROM adult LIMIT 3")
    s = spec(adult_dir, {"delta_presence": {"subset": "stranger", "delta_min": 0, "delta_max": 1}})
    with pytest.raises(SpecError, match=r"delta_presence\.subset: 3 of the 3 rows of the research subset "
                                        r"'stranger' match no row of the table"):
        api.check(s, engine=adult_engine)


def test_sensitive_hierarchy_must_cover_the_values(duck):
    duck.con.execute("CREATE TABLE t (q VARCHAR, s VARCHAR)")
    duck.con.execute("INSERT INTO t VALUES ('a', 'x'), ('a', 'y'), ('b', NULL)")
    p = Problem(duck, table("t"), ["q"], {"q": TableHierarchy([["a", "*"], ["b", "*"]])}, ["s"],
                [TCloseness("s", 0.5, "hierarchical")],
                sensitive_hierarchies={"s": TableHierarchy([["x", "g", "*"]], source="s.csv")})
    with pytest.raises(HierarchyError, match=r"^s\.csv: 2 value\(s\) of sensitive attribute 's' are "
                                             r"missing from its hierarchy \(NULL needs a hierarchy row"):
        Evaluator(p)
    p.sensitive_hierarchies = {"s": TableHierarchy([["x", "*"], ["y", "*"], ["?", "*"]], null_leaf="?")}
    with Evaluator(p) as ev:  # NULL is covered through its leaf label; height 1: EMD = ½Σ|p − q|
        assert ev.check({"q": 0}).models[0].achieved == pytest.approx(0.5 * (1 / 3 + 1 / 3 + 2 / 3))


def test_hierarchical_distance_needs_height(duck):
    duck.con.execute("CREATE TABLE t (q VARCHAR, s VARCHAR)")
    duck.con.execute("INSERT INTO t VALUES ('a', 'x')")
    p = Problem(duck, table("t"), ["q"], {"q": TableHierarchy([["a", "*"]])}, ["s"],
                [TCloseness("s", 0.5, "hierarchical")],
                sensitive_hierarchies={"s": TableHierarchy([["x"]])})
    with pytest.raises(HierarchyError,
                       match=r"attributes\.s\.hierarchy: the hierarchy of 's' has height 0"):
        Evaluator(p)
