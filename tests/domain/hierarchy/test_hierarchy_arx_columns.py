"""Large ARX files read column by column (pyarrow) give what the row-by-row reader gives: the same
rows, per-level codes, look-up rows, errors and warnings."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from sqlanon.domain.hierarchy import SqlanonWarning, TableHierarchy, read_arx_csv
from sqlanon.domain.hierarchy.arrow_table import ArrowHierarchyTable
from sqlanon.domain.hierarchy.arx_columns import parse_arx_columns
from sqlanon.domain.hierarchy.arx_csv import parse_arx_text
from sqlanon.domain.hierarchy.table import COLUMNS_READ_MIN_CHARS
from sqlanon.errors import HierarchyError


def rows_of(columns) -> list[list[str]]:
    return [list(r) for r in zip(*(c.to_pylist() for c in columns))]


@pytest.mark.parametrize("text", [
    '1;"1;5";*\r\n\r\n2;1-5;*\n',
    'a;"x;y";*\r\n"b ""q""";"x;y";*\r\n\r\n c ;z;*\r\n\r\n\r\n',
    '"line\nbreak";"q""q";*\n"";empty leaf;*\n',
    "a;x\r\nb;y",
    "7;1;2\n8;1;2\n",  # numbers stay text
])
def test_columns_are_the_rows_of_the_row_reader(text):
    assert rows_of(parse_arx_columns(text)) == parse_arx_text(text)


@pytest.mark.parametrize("text", [
    'a;b\n""\n',      # a row of one empty cell: blank for the row reader
    "a;x\n;\n",       # a row of empty cells
    "a;x\nb\n",       # ragged
    '"a"b;x\n',       # a quote inside a cell: an error for the row reader
    'a"b;x\n',        # a quote inside a cell: text for the row reader
    ' "a";x\n',       # a quote after a space
    'a;"x\n',         # unterminated
    "a\0;x\n",
    "", "\n\n",
])
def test_unusual_text_is_left_to_the_row_reader(text):
    assert parse_arx_columns(text) is None


def big_rows(n: int = 20_000) -> list[list[str]]:
    rows = [[f"{i:06d}", f"{i // 10:05d}*", f'"{i // 100:04d};**"', f"{i // 1000:03d}***", "*"]
            for i in range(n)]
    rows[5][0] = '"quoted ""leaf"""'
    return rows


def write(tmp_path, rows: list[list[str]]):
    p = tmp_path / "big.csv"
    text = "".join(";".join(r) + "\n" for r in rows)
    assert len(text) >= COLUMNS_READ_MIN_CHARS
    p.write_text(text, encoding="utf-8")
    return p, text


def test_a_large_file_reads_as_columns_with_the_row_tables_figures(tmp_path):
    p, text = write(tmp_path, big_rows())
    h = read_arx_csv(p)
    t = h.table()
    assert isinstance(t, ArrowHierarchyTable)
    reference = TableHierarchy(parse_arx_text(text)).table()
    assert t.rows == reference.rows and t == reference and t.rows[5][0] == 'quoted "leaf"'
    assert (t.height, t.domain_size, t.leaf_count) == (reference.height, reference.domain_size, 20_000)
    for level in range(t.height + 1):
        codes, labels = t.level_codes(level)
        ref_codes, ref_labels = reference.level_codes(level)
        assert labels == ref_labels and codes.tolist() == ref_codes.tolist()
        assert t.label_counts(level).tolist() == reference.label_counts(level).tolist()
        assert t.label_count(labels[-1], level) == reference.label_count(labels[-1], level)
    leaves = [r[0] for r in reference.rows[::-7]]
    assert t.leaf_rows(leaves).tolist() == reference.leaf_rows(leaves).tolist()
    assert "000123" in t.leaves and "nope" not in t.leaves
    names = ["leaf", "l1", "l2", "l3", "l4"]
    assert [tuple(r) for r in rows_of(t.lookup_arrow(names).columns)] == h.lookup_rows()
    assert h.needs_lookup()


def test_a_large_file_with_a_repeated_leaf_keeps_its_last_row_and_warns(tmp_path):
    rows = big_rows()
    rows.append(list(rows[3]))
    p, _ = write(tmp_path, rows)
    with pytest.warns(SqlanonWarning, match="rows 4 and 20001: leaf '000003' is listed twice"):
        h = read_arx_csv(p)
    t = h.table()
    assert t.domain_size == 20_001 and t.leaf_count == 20_000
    assert t.leaf_rows(["000003", "000004"]).tolist() == [20_000, 4]
    assert len(h.lookup_rows()) == 20_000


def expected_error(rows: list[list[str]], path) -> str:
    with pytest.raises(HierarchyError) as e:
        TableHierarchy(parse_arx_text("".join(";".join(r) + "\n" for r in rows)), source=str(path))
    return str(e.value)


@pytest.mark.parametrize("change", [
    lambda rows: rows[7].__setitem__(2, ""),                       # an empty label
    lambda rows: rows.append([rows[9][0], "x", "y", "z", "*"]),      # a leaf with two rows
    lambda rows: rows[11].__setitem__(2, rows[150][2]),              # a label with two parents
    lambda rows: rows[13].pop(),                                     # ragged
])
def test_a_large_bad_file_fails_with_the_row_readers_message(tmp_path, change):
    rows = big_rows()
    change(rows)
    p, _ = write(tmp_path, rows)
    with pytest.raises(HierarchyError) as e:
        read_arx_csv(p)
    assert str(e.value) == expected_error(rows, p)


def test_a_large_file_with_several_tops_warns_and_null_leaf_must_be_a_leaf(tmp_path):
    rows = big_rows()
    for row in rows[19_000:]:
        row[-1] = "other top"
    p, _ = write(tmp_path, rows)
    with pytest.warns(SqlanonWarning, match="the top level has 2 values, not one"):
        read_arx_csv(p)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SqlanonWarning)
        assert read_arx_csv(p, null_leaf="000042").null_leaf == "000042"
        with pytest.raises(HierarchyError, match="the NULL label 'NULL' is not a leaf"):
            read_arx_csv(p, null_leaf="NULL")


def test_codes_number_labels_in_order_of_first_appearance(tmp_path):
    rows = big_rows()[::-1]
    p, _ = write(tmp_path, rows)
    codes, labels = read_arx_csv(p).table().level_codes(3)
    assert labels[:2] == ["019***", "018***"] and np.all(np.diff(codes) >= 0)
