"""``sqlanon hierarchy build | validate | export``: the functions and their command line."""

from __future__ import annotations

import argparse

import duckdb
import pytest

from sqlanon.cli import hierarchy as hierarchy_cli
from sqlanon.errors import HierarchyError, SpecError


@pytest.fixture()
def data(tmp_path):
    (tmp_path / "people.csv").write_text("age;zip\n23;47677\n38;47602\n23;47677\n71;\n")
    return tmp_path


def run(*argv: str) -> int:
    parser = argparse.ArgumentParser()
    hierarchy_cli.add_arguments(parser)
    return hierarchy_cli.run(parser.parse_args(argv))


# -- build ---------------------------------------------------------------------------------------------
def test_build_intervals_over_a_file_column(data):
    with hierarchy_cli.open_column("age", data=str(data / "people.csv"), data_delimiter=";") as column:
        text = hierarchy_cli.build(hierarchy_cli.parse_builder("{intervals: {widths: [10, 50]}}"), column)
    # by hand: 23 -> [20, 30) -> [0, 50); 38 -> [30, 40) -> [0, 50); 71 -> [70, 80) -> [50, 100)
    assert text == "23;[20, 30);[0, 50);*\n38;[30, 40);[0, 50);*\n71;[70, 80);[50, 100);*\n"


def test_build_from_json_text_over_a_database_table(tmp_path, capsys):
    db = tmp_path / "d.duckdb"
    con = duckdb.connect(str(db))
    con.execute("CREATE TABLE visits AS SELECT * FROM (VALUES (DATE '2021-03-14'), (DATE '2020-12-31'), "
                "(NULL)) AS t(day)")
    con.close()
    out = tmp_path / "day.csv"
    assert run("build", "--builder", '{"date": ["month", "year"]}', "--database", str(db),
               "--table", "visits", "--column", "day", "-o", str(out), "--null-label", "NULL") == 0
    assert out.read_text() == ("2020-12-31;2020-12;2020;*\n2021-03-14;2021-03;2021;*\n"
                               "NULL;NULL;NULL;*\n")
    assert capsys.readouterr().out == ""


def test_build_a_spec_attribute_over_the_spec_source(data, capsys):
    (data / "spec.yaml").write_text("""\
source: {file: people.csv, delimiter: ';', all_text: true}
attributes:
  zip: {role: quasi_identifier, hierarchy: {mask: {levels: 2}}}
""")
    assert run("build", "--spec", str(data / "spec.yaml"), "--attribute", "zip") == 0
    # the empty zip of the last row is NULL: left out without --null-label
    assert capsys.readouterr().out == "47602;4760*;476**\n47677;4767*;476**\n"


def test_build_errors(data):
    with pytest.raises(SpecError, match=r"--builder\.interval: unknown key 'interval'.*"
                                        r"Did you mean 'intervals'"):
        run("build", "--builder", "{interval: {widths: [5]}}", "--data", str(data / "people.csv"),
            "--column", "age")
    with pytest.raises(SpecError, match=r"--builder: (line \d+, column \d+: )?not valid YAML or JSON"):
        hierarchy_cli.parse_builder("{intervals: [")
    with pytest.raises(SpecError, match=r"--column: unknown column 'ag' in 'people'.*Did you mean 'age'"):
        run("build", "--builder", "{mask: {levels: 1}}", "--data", str(data / "people.csv"),
            "--data-delimiter", ";", "--column", "ag")
    with pytest.raises(SpecError, match=r"build needs the data"):
        run("build", "--builder", "{mask: {levels: 1}}")
    with pytest.raises(SpecError, match=r"--data: data file not found"):
        run("build", "--builder", "{mask: {levels: 1}}", "--data", str(data / "no.csv"), "--column", "a")


# -- validate --------------------------------------------------------------------------------------------
def test_validate_a_good_file_against_data(data):
    (data / "age.csv").write_text("23;20-29;*\n38;30-39;*\n71;70-79;*\n99;90-99;*\n")
    with hierarchy_cli.open_column("age", data=str(data / "people.csv"), data_delimiter=";") as column:
        status, report = hierarchy_cli.validate(str(data / "age.csv"), column=column)
    assert status == 0
    assert "rows (|D|): 4, distinct leaves: 4, height: 2" in report
    assert "labels per level: 0: 4, 1: 4, 2: 1" in report
    assert "every value of column 'age' of 'people' is covered" in report
    assert report.endswith("result: valid\n")


def test_validate_lists_uncovered_values_and_fails(data, capsys):
    (data / "age.csv").write_text("23;*\n")
    assert run("validate", str(data / "age.csv"), "--data", str(data / "people.csv"),
               "--data-delimiter", ";", "--column", "age") == 1
    out = capsys.readouterr().out
    assert "error: 2 value(s) of column 'age' of 'people' are missing from the hierarchy: '38', '71'" in out
    assert out.endswith("result: invalid\n")


def test_validate_null_needs_a_label(data, capsys):
    (data / "zip.csv").write_text("47677;*\n47602;*\n?;*\n")
    args = ("validate", str(data / "zip.csv"), "--data", str(data / "people.csv"), "--data-delimiter", ";",
            "--column", "zip")
    assert run(*args) == 1
    assert "missing from the hierarchy: NULL (NULL needs a row: pass --null" in capsys.readouterr().out
    assert run(*args, "--null", "?") == 0


def test_validate_a_malformed_file_without_data(tmp_path):
    (tmp_path / "bad.csv").write_text("a;x;*\nb;*\n")
    status, report = hierarchy_cli.validate(str(tmp_path / "bad.csv"))
    assert status == 1
    assert "row 2 (leaf 'b') has 2 columns but row 1 has 3" in report and "bad.csv" in report


def test_validate_warnings_pass_unless_strict(tmp_path):
    (tmp_path / "tops.csv").write_text("a;x\nb;y\n")
    status, report = hierarchy_cli.validate(str(tmp_path / "tops.csv"))
    assert status == 0 and "warning: " in report and "the top level has 2 values" in report
    assert hierarchy_cli.validate(str(tmp_path / "tops.csv"), strict=True)[0] == 1


# -- export ----------------------------------------------------------------------------------------------
def test_export_a_csv_attribute_whole(data, adult_dir):
    (data / "spec.yaml").write_text(f"""\
source: {{file: people.csv, delimiter: ';'}}
attributes:
  age: {{role: quasi_identifier, hierarchy: {{csv: {adult_dir / 'adult_hierarchy_age.csv'}}}}}
""")
    text = hierarchy_cli.export(str(data / "spec.yaml"), "age", delimiter=",")
    lines = text.splitlines()
    # ARX's age file has 100 rows of height 4 (peer-semantics §1), written whole with the new delimiter
    assert len(lines) == 100 and lines[0] == "1,0-4,0-9,0-19,*"


def test_export_a_builder_materializes_it_over_the_data(data, capsys):
    (data / "spec.yaml").write_text("""\
source: {file: people.csv, delimiter: ';'}
attributes:
  age: {role: quasi_identifier, hierarchy: {intervals: {widths: [25], bottom: 30}}}
  zip: {role: quasi_identifier, hierarchy: {map: {'47677': [north, '*'], '47602': [south, '*']}}}
""")
    assert run("export", str(data / "spec.yaml"), "--attribute", "age") == 0
    assert capsys.readouterr().out == "23;<30;*\n38;[25, 50);*\n71;[50, 75);*\n"
    assert hierarchy_cli.export(str(data / "spec.yaml"), "zip") == "47677;north;*\n47602;south;*\n"
    with pytest.raises(SpecError, match=r"--attribute: unknown attribute 'zp'\. Did you mean 'zip'\?"):
        hierarchy_cli.export(str(data / "spec.yaml"), "zp")


def test_export_reports_a_broken_spec(tmp_path):
    (tmp_path / "spec.yaml").write_text("source: {table: t}\nattributes:\n  a: {role: quasi_identifier, "
                                        "hierarchy: {csv: missing.csv}}\n")
    with pytest.raises(HierarchyError, match=r"attributes\.a\.hierarchy\.csv: .*missing\.csv: hierarchy "
                                             r"file not found"):
        hierarchy_cli.export(str(tmp_path / "spec.yaml"), "a")


def test_the_sqlanon_command_runs_the_verb(data, capsys):
    from sqlanon.cli.main import main

    (data / "age.csv").write_text("23;*\n38;*\n71;*\n")
    assert main(["hierarchy", "validate", str(data / "age.csv"), "--data", str(data / "people.csv"),
                 "--data-delimiter", ";", "--column", "age"]) == 0
    assert main(["hierarchy", "build", "--builder", "{mask: {levels: 9}}", "--data", "nope.csv",
                 "--column", "a"]) == 2
    assert "sqlanon: error: --data: data file not found" in capsys.readouterr().err
