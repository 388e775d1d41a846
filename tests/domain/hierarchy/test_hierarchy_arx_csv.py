"""ARX's hierarchy CSV format: reading its variants, writing it back, and round trips."""

from __future__ import annotations

import re
import warnings

import duckdb
import pyarrow as pa
import pytest
from sqlglot import exp

from sqlanon.domain.hierarchy import (
    DateHierarchy,
    IntervalHierarchy,
    MaskHierarchy,
    SqlanonWarning,
    TableHierarchy,
    read_arx_csv,
    write_arx_csv,
)
from sqlanon.domain.hierarchy.arx_csv import parse_arx_text
from sqlanon.errors import HierarchyError
from sqlanon.sql.nodes import alias, col, table
from sqlanon.sql.render import render
from tests.domain.hierarchy.scratch import materialize

ADULT_QIS = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass",
             "occupation", "salary-class"]
# peer-semantics.md §1: height and |D| of ARX's Adult hierarchy files.
ADULT_SHAPE = {"sex": (1, 2), "age": (4, 100), "race": (1, 5), "marital-status": (2, 7),
               "education": (3, 16), "native-country": (2, 41), "workclass": (2, 8),
               "occupation": (2, 14), "salary-class": (1, 2)}


def write_bytes(tmp_path, name: str, data: bytes):
    p = tmp_path / name
    p.write_bytes(data)
    return p


def test_crlf_bom_blank_lines_and_quotes(tmp_path):
    data = ('\ufeffa;"x;y";*\r\n"b ""q""";"x;y";*\r\n\r\n c ;z;*\r\n\r\n\r\n').encode()
    h = read_arx_csv(write_bytes(tmp_path, "h.csv", data))
    assert [list(r) for r in h.table().rows] == [
        ["a", "x;y", "*"], ['b "q"', "x;y", "*"], [" c ", "z", "*"]]  # cells kept exactly
    assert (h.height, h.table().domain_size) == (2, 3)


@pytest.mark.parametrize("delimiter", [",", "\t", "|"])
def test_configurable_delimiter(tmp_path, delimiter):
    text = f"1{delimiter}1-2{delimiter}*\n2{delimiter}1-2{delimiter}*\n"
    h = read_arx_csv(write_bytes(tmp_path, "h.csv", text.encode()), delimiter=delimiter)
    assert [list(r) for r in h.table().rows] == [["1", "1-2", "*"], ["2", "1-2", "*"]]


def test_wrong_delimiter_reads_one_column_per_row_and_fails_later(tmp_path):
    # a ';' file read as ',' is a height-0 hierarchy whose leaves are whole lines
    h = read_arx_csv(write_bytes(tmp_path, "h.csv", b"a;x;*\nb;x;*\n"), delimiter=",")
    assert h.height == 0 and list(h.table().mapping) == ["a;x;*", "b;x;*"]


@pytest.mark.parametrize("delimiter", ["", ";;", '"', "\n", None])
def test_bad_delimiter(delimiter):
    with pytest.raises(HierarchyError, match="the delimiter must be one character"):
        parse_arx_text("a;b\n", delimiter=delimiter)


def test_unterminated_quote_names_the_file(tmp_path):
    p = write_bytes(tmp_path, "bad.csv", b'a;"x;*\nb;y;*\n')
    with pytest.raises(HierarchyError, match=re.escape(str(p)) + r": not a valid CSV file"):
        read_arx_csv(p)


def test_not_utf8_names_the_file(tmp_path):
    p = write_bytes(tmp_path, "latin.csv", "M\xfcnchen;DE;*\n".encode("latin-1"))
    with pytest.raises(HierarchyError, match=re.escape(str(p)) + r": not valid utf-8 text"):
        read_arx_csv(p)
    assert read_arx_csv(p, encoding="latin-1").table().rows[0][0] == "M\xfcnchen"


def test_write_quotes_only_what_needs_it_and_ends_lines_as_asked():
    rows = [("a;1", "x", "*"), ('say "hi"', "x", "*"), ("plain", "y", "*")]
    assert write_arx_csv(rows) == '"a;1";x;*\n"say ""hi""";x;*\nplain;y;*\n'
    assert write_arx_csv(rows[2:], delimiter=",", line_terminator="\r\n") == "plain,y,*\r\n"


def test_write_null_rows_under_a_label_or_not_at_all():
    rows = [("1", "x", "*"), (None, None, "*")]
    assert write_arx_csv(rows) == "1;x;*\n"
    assert write_arx_csv(rows, null_label="NA") == "1;x;*\nNA;NA;*\n"


def test_adult_files_have_arx_shapes_and_round_trip(adult_dir, tmp_path):
    for qi in ADULT_QIS:
        src = adult_dir / f"adult_hierarchy_{qi}.csv"
        h = read_arx_csv(src)
        assert (h.height, h.table().domain_size) == ADULT_SHAPE[qi], qi
        out = tmp_path / f"{qi}.csv"
        write_arx_csv(h, out)
        assert out.read_bytes() == src.read_bytes().replace(b"\r\n", b"\n").rstrip(b"\n") + b"\n"
        assert read_arx_csv(out).table() == h.table()


def test_round_trip_of_special_cells_through_a_file(tmp_path):
    rows = [["a;b", 'q"q', "*"], ["line\nbreak", 'q"q', "*"], ["", "empty leaf", "*"]]
    p = tmp_path / "h.csv"
    write_arx_csv(rows, p, line_terminator="\r\n")
    assert [list(r) for r in read_arx_csv(p).table().rows] == rows


@pytest.mark.parametrize("h, values", [
    (IntervalHierarchy((5, 10), bottom=10, top=60), [3, 12, 12.5, 47, 60, None]),
    (DateHierarchy(("month", "year")), ["2021-03-14", "2021-04-01", "1999-12-31", None]),
    (MaskHierarchy(5), ["47677", "47601", "12345", None]),
])
def test_builder_materialized_exports_and_the_file_generalizes_the_same(tmp_path, h, values):
    p = tmp_path / "built.csv"
    write_arx_csv(materialize(h, values), p, null_label="NULL")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # one top value each: no warning
        t = read_arx_csv(p, null_leaf="NULL")
    assert t.height == h.height and t.table().domain_size == len(values)
    con = duckdb.connect()
    con.register("vals", pa.table({"v": values}))
    for lv in range(1, h.height + 1):
        q = exp.select(alias(h.expression(col("v"), lv), "b"), alias(t.expression(col("v"), lv), "t")
                       ).from_(table("vals"))
        pairs = con.execute(render(q, "duckdb")).fetchall()
        # NULL: the builder keeps NULL below the top; the file maps it through its NULL row
        assert [b for b, _ in pairs] == [t_ if t_ != "NULL" else None for _, t_ in pairs], lv
    con.close()


def test_variable_length_masks_have_one_top_per_length(tmp_path):
    p = tmp_path / "mask.csv"
    write_arx_csv(materialize(MaskHierarchy(3), ["47677", "12"]), p)
    assert p.read_text() == "12;1*;**;**\n47677;4767*;476**;47***\n"
    with pytest.warns(SqlanonWarning, match="the top level has 2 values, not one"):
        read_arx_csv(p)


def test_materialize_lists_each_distinct_value_once_in_order():
    t = materialize(IntervalHierarchy((10,)), [25, 3, 25, None, -1])
    assert t.rows == (("-1", "[-10, 0)", "*"), ("3", "[0, 10)", "*"), ("25", "[20, 30)", "*"),
                      (None, None, "*"))


def test_table_hierarchy_exports_whole_with_values_absent_from_data():
    h = TableHierarchy([["a", "x", "*"], ["b", "x", "*"], ["c", "y", "*"]])
    assert write_arx_csv(h) == "a;x;*\nb;x;*\nc;y;*\n"
