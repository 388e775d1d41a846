"""Spec features beyond the basics: file sources, ordinal orders, weights, and the Python-object form."""

from __future__ import annotations

import re

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from sqlanon import api
from sqlanon.domain.hierarchy import IntervalHierarchy, MaskHierarchy, read_arx_csv
from sqlanon.domain.models.k_anonymity import KAnonymity
from sqlanon.domain.models.l_diversity import LDiversity
from sqlanon.errors import HierarchyError, SpecError
from sqlanon.spec import Attribute, Output, Source, Spec, Transformation, spec_from_dict

# Seed 000 Table 5.1 (Age, ZIP, Condition).
ROWS = [(21, "23058", "Heart Disease"), (24, "23059", "Heart Disease"), (26, "23060", "Viral Infection"),
        (27, "23061", "Viral Infection"), (43, "23058", "Kidney Stone"), (43, "23059", "Heart Disease"),
        (47, "23060", "Viral Infection"), (49, "23061", "Viral Infection"), (32, "23058", "Kidney Stone"),
        (34, "23059", "Kidney Stone"), (35, "23060", "AIDS"), (38, "23061", "AIDS")]


def write_csv(path, rows, delimiter=",", header=("age", "zip", "condition")):
    lines = ([delimiter.join(header)] if header else []) + [delimiter.join(map(str, r)) for r in rows]
    path.write_text("\n".join(lines) + "\n")
    return path


def medical_spec(source: dict, levels=None, **extra) -> dict:
    return {"source": source,
            "attributes": {"age": {"role": "quasi_identifier",
                                   "hierarchy": {"intervals": {"widths": [10, 50]}}},
                           "zip": {"role": "quasi_identifier", "hierarchy": {"mask": {"levels": 5}}},
                           "condition": {"role": "sensitive"}},
            "privacy": [{"k_anonymity": {"k": 4}}],
            "transformation": {"levels": levels or {"age": 1, "zip": 2}}, **extra}


# Seed 000 Table 5.2: age by decade and ZIP 230** give classes 2*, 4*, 3* of 4 records each.
TABLE_5_2 = (3, 4, True)


def summary(report):
    return report.node.classes, report.node.min_class_size, report.node.anonymous


def test_csv_source_with_a_delimiter(tmp_path):
    data = write_csv(tmp_path / "medical.csv", ROWS, delimiter="|")
    spec = spec_from_dict(medical_spec({"file": str(data), "delimiter": "|"}))
    assert spec.source.format == "csv"
    assert summary(api.check(spec, metrics=())) == TABLE_5_2


def test_csv_source_without_header_names_columns_by_position(tmp_path):
    data = write_csv(tmp_path / "medical.txt", ROWS, header=None)
    d = medical_spec({"file": str(data), "header": False})
    d["attributes"] = {"column0": d["attributes"]["age"], "column1": d["attributes"]["zip"]}
    d["transformation"] = {"levels": {"column0": 1, "column1": 2}}
    assert summary(api.check(spec_from_dict(d), metrics=())) == TABLE_5_2


def test_parquet_source(tmp_path):
    path = tmp_path / "medical.parquet"
    pq.write_table(pa.table({"age": [r[0] for r in ROWS], "zip": [r[1] for r in ROWS],
                             "condition": [r[2] for r in ROWS]}), path)
    spec = spec_from_dict(medical_spec({"file": str(path)}))
    assert spec.source.format == "parquet"
    assert summary(api.check(spec, metrics=())) == TABLE_5_2


def test_all_text_reads_codes_as_written(tmp_path):
    # part codes 12E4 and 12E5 look like numbers in scientific notation to the CSV sniffer
    data = tmp_path / "parts.csv"
    data.write_text("code\n12E4\n12E5\n")
    (tmp_path / "code.csv").write_text("12E4;12E*;*\n12E5;12E*;*\n")
    d = {"source": {"file": str(data)},
         "attributes": {"code": {"role": "quasi_identifier", "hierarchy": "code.csv"}},
         "privacy": [{"k_anonymity": {"k": 2}}], "transformation": {"levels": {"code": 1}}}
    with pytest.raises(HierarchyError, match=r"2 value\(s\) of attribute 'code' are missing"):
        api.check(spec_from_dict(d, base=tmp_path), metrics=())  # read as doubles
    d["source"]["all_text"] = True
    assert summary(api.check(spec_from_dict(d, base=tmp_path), metrics=())) == (1, 2, True)


@pytest.mark.parametrize("source, rule", [
    ({"file": "x.xlsx"}, r"source\.format: cannot tell the format of"),
    ({"file": "x.csv", "format": "excel"}, r"source\.format: unknown format 'excel'"),
    ({"file": "x.parquet", "delimiter": ";"}, r"source\.delimiter: applies to CSV files only"),
    ({"file": "x.csv", "delimiter": ";;"}, r"source\.delimiter: must be one character"),
    ({"file": "x.csv", "header": "yes"}, r"source\.header: must be true or false"),
    ({"table": "t", "delimiter": ";"}, r"source\.delimiter: applies to file sources only"),
    ({"table": "t", "colour": 1}, r"source\.colour: unknown key 'colour'"),
])
def test_source_option_errors(source, rule):
    with pytest.raises(SpecError, match=r"^spec\.yaml: " + rule):
        spec_from_dict(medical_spec(source), source="spec.yaml")


def test_missing_data_file(tmp_path):
    spec = spec_from_dict(medical_spec({"file": str(tmp_path / "none.csv")}), source="spec.yaml")
    with pytest.raises(SpecError, match=r"^spec\.yaml: source\.file: data file not found"):
        api.check(spec)


# -- ordinal order ---------------------------------------------------------------------------------
def grades(duck, values):
    duck.con.execute("CREATE TABLE grades (grade VARCHAR)")
    duck.con.executemany("INSERT INTO grades VALUES (?)", [[v] for v in values])
    return duck


def grade_spec(grade: dict) -> dict:
    return {"source": {"table": "grades"}, "attributes": {"grade": grade},
            "privacy": [{"k_anonymity": {"k": 2}}], "transformation": {"levels": {"grade": 1}}}


def test_order_feeds_an_ordered_hierarchy(duck):
    # order low < mid < high < top in runs of 2: {low, mid} and {high, top}, two classes of 2
    spec = spec_from_dict(grade_spec({"role": "quasi_identifier", "type": "ordinal",
                                      "order": ["low", "mid", "high", "top"],
                                      "hierarchy": {"ordered": {"sizes": [2]}}}))
    assert spec.attributes["grade"].order == ("low", "mid", "high", "top")
    assert [list(r) for r in spec.attributes["grade"].hierarchy.table().rows] == [
        ["low", "low-mid", "*"], ["mid", "low-mid", "*"], ["high", "high-top", "*"], ["top", "high-top", "*"]]
    r = api.check(spec, engine=grades(duck, ["top", "low", "mid", "high"]), metrics=())
    assert summary(r) == (2, 2, True)


@pytest.mark.parametrize("grade, rule", [
    ({"role": "sensitive", "type": "integer", "order": [1, 2]},
     r"attributes\.grade\.order: an order applies to ordinal attributes"),
    ({"role": "sensitive", "order": ["a", "b", "a"]}, r"attributes\.grade\.order: .*'a' is listed twice"),
    ({"role": "sensitive", "order": "low, high"}, r"attributes\.grade\.order: must be a list"),
    ({"role": "quasi_identifier", "hierarchy": {"ordered": {"sizes": [2]}}},
     r"attributes\.grade\.hierarchy\.ordered\.values: needs the values"),
])
def test_order_errors(grade, rule):
    d = grade_spec(grade)
    d["attributes"]["x"] = {"role": "quasi_identifier", "hierarchy": {"mask": {"levels": 1}}}
    d["transformation"] = {}
    with pytest.raises(SpecError, match=r"^spec\.yaml: " + rule):
        spec_from_dict(d, source="spec.yaml")


# -- weights ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("weights, expected", [
    # age at level 0 has loss 0, zip fully masked has loss 1 (peer-semantics §3.1); the arithmetic
    # aggregate is sum(loss_i * w_i / max w) / d with d = 2
    ((1, 1), 0.5), ((1, 0), 0.0), ((0, 2), 0.5), ((2, 1), 0.25)])
def test_weights_scale_the_loss(duck, weights, expected):
    duck.con.execute("CREATE TABLE medical (age INT, zip VARCHAR, condition VARCHAR)")
    duck.con.executemany("INSERT INTO medical VALUES (?, ?, ?)", [list(r) for r in ROWS])
    d = medical_spec({"table": "medical"}, {"age": 0, "zip": 5})
    d["privacy"] = [{"k_anonymity": {"k": 1}}]
    d["attributes"]["age"]["weight"], d["attributes"]["zip"]["weight"] = weights
    r = api.check(spec_from_dict(d), engine=duck, metrics=("loss_arithmetic",))
    assert r.metrics["loss_arithmetic"] == pytest.approx(expected, abs=1e-12)


def test_all_weights_zero_is_an_error():
    d = medical_spec({"table": "medical"})
    d["attributes"]["age"]["weight"] = d["attributes"]["zip"]["weight"] = 0
    with pytest.raises(SpecError, match=r"attributes\.age\.weight: at least one quasi-identifier needs "
                                        r"a weight > 0"):
        spec_from_dict(d)


# -- the Python-object form ------------------------------------------------------------------------
def test_python_objects_and_yaml_give_the_same_check(tmp_path, duck):
    duck.con.execute("CREATE TABLE medical (age INT, zip VARCHAR, condition VARCHAR)")
    duck.con.executemany("INSERT INTO medical VALUES (?, ?, ?)", [list(r) for r in ROWS])
    (tmp_path / "zip.csv").write_text("".join(f"{z};{z[:4]}*;{z[:3]}**;*\n" for z in
                                              ("23058", "23059", "23060", "23061")))
    (tmp_path / "spec.yaml").write_text("""\
source: {table: medical}
attributes:
  age: {role: quasi_identifier, weight: 2, hierarchy: {intervals: {widths: [10, 50], bottom: 20}}}
  zip: {role: quasi_identifier, hierarchy: zip.csv}
  condition: {role: sensitive}
privacy:
  - k_anonymity: {k: 4}
  - l_diversity: {attribute: condition, l: 3}
transformation: {levels: {age: 1, zip: 2}, suppression_limit: 0.7}
metrics: [loss, discernibility]
""")
    python = Spec(
        Source(table="medical"),
        [Attribute("age", "quasi_identifier", weight=2,
                   hierarchy=IntervalHierarchy((10, 50), bottom=20)),
         Attribute("zip", "quasi_identifier", hierarchy=read_arx_csv(tmp_path / "zip.csv")),
         Attribute("condition", "sensitive")],
        privacy=[KAnonymity(4), LDiversity("condition", 3)],
        transformation=Transformation(levels={"age": 1, "zip": 2}, suppression_limit=0.7),
        metrics=("loss", "discernibility"))
    from_yaml = api.check(str(tmp_path / "spec.yaml"), engine=duck).as_dict()
    from_python = api.check(python, engine=duck).as_dict()
    assert from_python == from_yaml
    # Table 5.2 with l = 3: classes 2* and 3* hold 2 conditions each and are suppressed (8 rows
    # <= floor(0.7 * 12) = 8); class 4* (KS, HD, VI, VI) stays
    assert (from_yaml["anonymous"], from_yaml["suppressed_rows"], from_yaml["classes"]) == (True, 8, 1)


def test_python_objects_obey_the_same_rules():
    with pytest.raises(SpecError, match=r"^attributes\.age\.role: unknown role 'quasi_identifer'.*"
                                        r"Did you mean 'quasi_identifier'\?"):
        Attribute("age", "quasi_identifer", hierarchy=MaskHierarchy(1))
    with pytest.raises(SpecError, match=r"^transformation\.suppression_limit: must be in \[0, 1\]"):
        Transformation(suppression_limit=2)
    with pytest.raises(SpecError, match=r"^output\.dialect: unknown dialect 'snowflak'.*'snowflake'"):
        Output(dialect="snowflak")
    age = Attribute("age", "quasi_identifier", hierarchy=IntervalHierarchy((5,)))
    with pytest.raises(SpecError, match=r"^my\.yaml: transformation\.levels\.age: level 3 is above the "
                                        r"hierarchy's height 2$"):
        Spec(Source(table="t"), [age], transformation=Transformation(levels={"age": 3}), path="my.yaml")
    with pytest.raises(SpecError, match=r"attributes\.years: is keyed 'years' but named 'age'"):
        Spec(Source(table="t"), {"years": age})
    with pytest.raises(SpecError, match=re.escape("privacy[0].l_diversity.attribute: unknown attribute 'x'")):
        Spec(Source(table="t"), [age], privacy=[LDiversity("x", 2)])


# -- metric options ---------------------------------------------------------------------------------
@pytest.mark.parametrize("metrics, expected", [
    # Table 5.2 classes by condition: 2* (HD, HD, VI, VI) tied -> 4 wrong; 4* (KS, HD, VI, VI) -> 2;
    # 3* (KS, KS, AIDS, AIDS) tied -> 4: 10 of 12
    (["classification"], 10 / 12),
    # by zip every class holds four different codes: all tied, 12 of 12
    ({"names": ["classification"], "options": {"target": "zip"}}, 1.0)])
def test_metric_options_reach_the_metric(duck, metrics, expected):
    duck.con.execute("CREATE TABLE medical (age INT, zip VARCHAR, condition VARCHAR)")
    duck.con.executemany("INSERT INTO medical VALUES (?, ?, ?)", [list(r) for r in ROWS])
    spec = spec_from_dict(medical_spec({"table": "medical"}, metrics=metrics))
    assert api.check(spec, engine=duck).metrics["classification"] == pytest.approx(expected, abs=1e-12)


def test_metric_options_errors():
    with pytest.raises(SpecError, match=r"^s\.yaml: metrics\.option: unknown key 'option'.*'options'"):
        spec_from_dict(medical_spec({"table": "t"}, metrics={"option": {}}), source="s.yaml")
    with pytest.raises(SpecError, match=r"^s\.yaml: metrics\.names: must be a list of metric names"):
        spec_from_dict(medical_spec({"table": "t"}, metrics={"names": "loss"}), source="s.yaml")
