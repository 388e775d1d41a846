"""Hierarchy rules: every malformed file gets an error naming the file and the rule; oddities warn."""

from __future__ import annotations

import re
import warnings

import pytest

from sqlanon import api
from sqlanon.domain.hierarchy import (
    HierarchyTable,
    SqlanonWarning,
    TableHierarchy,
    read_arx_csv,
)
from sqlanon.errors import HierarchyError, SpecError
from sqlanon.spec import spec_from_dict


def hfile(tmp_path, text: str, name: str = "h.csv"):
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def at(p) -> str:
    return re.escape(str(p)) + ": "


def test_ragged_rows_name_row_and_widths(tmp_path):
    p = hfile(tmp_path, "a;x;*\nb;x;*\nc;*\n")
    with pytest.raises(HierarchyError, match=at(p) + r"row 3 \(leaf 'c'\) has 2 columns but row 1 has 3"
                                             r".*ragged"):
        read_arx_csv(p)


def test_a_label_with_two_parents(tmp_path):
    p = hfile(tmp_path, "a;x;p\nb;x;q\n")
    with pytest.raises(HierarchyError, match=at(p) + r"rows 1 and 2: label 'x' at level 1 has two "
                                             r"parents at level 2 \('p' and 'q'\)"):
        read_arx_csv(p)


def test_empty_label_above_the_leaf(tmp_path):
    p = hfile(tmp_path, "a;;*\n")
    with pytest.raises(HierarchyError, match=at(p) + r"row 1 \(leaf 'a'\) has an empty label at level 1"):
        read_arx_csv(p)


def test_duplicate_leaf_with_same_ancestors_warns_and_counts_twice(tmp_path):
    p = hfile(tmp_path, "a;x;*\nb;x;*\na;x;*\nc;y;*\n")
    with pytest.warns(SqlanonWarning, match=r"rows 1 and 3: leaf 'a' is listed twice with the same"):
        h = read_arx_csv(p)
    t = h.table()
    assert t.domain_size == 4  # ARX: every row counts towards |D|
    assert t.share("x", 1) == 3 / 4 and t.share("a", 0) == 2 / 4


def test_duplicate_leaf_with_different_ancestors_is_an_error(tmp_path):
    p = hfile(tmp_path, "a;x;*\nb;x;*\na;y;*\n")
    with pytest.raises(HierarchyError, match=at(p) + r"rows 1 and 3: leaf 'a' is listed twice with "
                                             r"different generalizations \(\['x', '\*'\] and "
                                             r"\['y', '\*'\]\)"):
        read_arx_csv(p)


def test_same_label_on_two_levels_is_allowed_and_shares_are_per_level():
    # "A" is a leaf and also the level-1 group of A and B
    t = TableHierarchy([["A", "A", "*"], ["B", "A", "*"], ["C", "C", "*"]]).table()
    assert (t.share("A", 0), t.share("A", 1), t.share("C", 1), t.share("*", 2)) == (1 / 3, 2 / 3, 1 / 3, 1)


def test_several_top_values_warn(tmp_path):
    p = hfile(tmp_path, "a;x\nb;y\n")
    with pytest.warns(SqlanonWarning, match=r"the top level has 2 values, not one"):
        read_arx_csv(p)


def test_one_top_value_does_not_warn(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        read_arx_csv(hfile(tmp_path, "a;x;*\nb;y;*\n"))


@pytest.mark.parametrize("text", ["", "\n\n", "\ufeff\r\n", ";;\n"])
def test_empty_file(tmp_path, text):
    p = hfile(tmp_path, text)
    with pytest.raises(HierarchyError, match=at(p) + "the hierarchy file is empty"):
        read_arx_csv(p)


def test_missing_file(tmp_path):
    p = tmp_path / "nope.csv"
    with pytest.raises(HierarchyError, match=at(p) + "hierarchy file not found"):
        read_arx_csv(p)


def test_null_leaf_must_be_a_leaf(tmp_path):
    p = hfile(tmp_path, "a;*\n")
    with pytest.raises(HierarchyError, match=at(p) + r"the NULL label '\?' is not a leaf"):
        read_arx_csv(p, null_leaf="?")


# -- against the data (through api.check) -----------------------------------------------------------
def people(duck, values):
    duck.con.execute("CREATE TABLE people (q VARCHAR, s VARCHAR)")
    duck.con.executemany("INSERT INTO people VALUES (?, 's')", [[v] for v in values])
    return duck


def spec(hierarchy: dict, levels=None, **extra):
    return spec_from_dict({
        "source": {"table": "people"},
        "attributes": {"q": {"role": "quasi_identifier", "hierarchy": hierarchy}},
        "privacy": [{"k_anonymity": {"k": 2}}],
        "transformation": {"levels": levels or {}},
        **extra}, source="spec.yaml")


def test_values_absent_from_the_data_count_in_the_domain(tmp_path, duck):
    # |D| = 4 (c, d never occur). At level 1 all 4 rows are in class x with share 2/4:
    # A = 4 * 2/4 = 2, m = n/|D| = 1, loss = (A - m)/(n - m) = 1/3 (ARX; with |D| = 2 it would be 1).
    p = hfile(tmp_path, "a;x;*\nb;x;*\nc;y;*\nd;y;*\n")
    r = api.check(spec({"csv": str(p)}, {"q": 1}), engine=people(duck, ["a", "a", "b", "b"]),
                  metrics=("loss_arithmetic",))
    assert r.metrics["loss_arithmetic"] == pytest.approx(1 / 3, abs=1e-9)


def test_duplicate_rows_count_in_the_domain_through_the_metric(tmp_path, duck):
    # rows a, a, b under x; c under y: |D| = 4, share(x) = 3/4; data a, b, b, b (n = 4) at level 1:
    # A = 4 * 3/4 = 3, m = 1, loss = (3 - 1)/(4 - 1) = 2/3.
    p = hfile(tmp_path, "a;x;*\na;x;*\nb;x;*\nc;y;*\n")
    with pytest.warns(SqlanonWarning):
        s = spec({"csv": str(p)}, {"q": 1})
    r = api.check(s, engine=people(duck, ["a", "b", "b", "b"]), metrics=("loss_arithmetic",))
    assert r.metrics["loss_arithmetic"] == pytest.approx(2 / 3, abs=1e-9)


def test_uncovered_values_are_listed(tmp_path, duck):
    p = hfile(tmp_path, "a;*\nb;*\n")
    with pytest.raises(HierarchyError, match=at(p) + r"3 value\(s\) of attribute 'q' are missing from "
                                             r"the hierarchy: 'c', 'd', 'e'$"):
        api.check(spec({"csv": str(p)}), engine=people(duck, ["a", "c", "d", "e", "e"]))


def test_uncovered_values_list_the_first_five(tmp_path, duck):
    p = hfile(tmp_path, "a;*\n")
    with pytest.raises(HierarchyError, match=r"7 value\(s\) .*: 'b', 'c', 'd', 'e', 'f' and 2 more"):
        api.check(spec({"csv": str(p)}), engine=people(duck, list("abcdefgh")))


def test_null_not_covered_gives_a_hint(tmp_path, duck):
    p = hfile(tmp_path, "a;*\n")
    with pytest.raises(HierarchyError, match=r"1 value\(s\) of attribute 'q' are missing from the "
                                             r"hierarchy: NULL \(.*set `null:` to its leaf label\)"):
        api.check(spec({"csv": str(p)}), engine=people(duck, ["a", None]))


def test_null_key_maps_null_to_a_leaf(tmp_path, duck):
    # data a, NULL, NULL; NULL generalizes as '?': level 0 has classes {a} and {NULL, NULL};
    # level 1 puts all three rows under x.
    p = hfile(tmp_path, "a;x;*\n?;x;*\n")
    people(duck, ["a", None, None])
    r0 = api.check(spec({"csv": str(p), "null": "?"}), engine=duck, metrics=())
    assert (r0.node.classes, r0.node.min_class_size_all) == (2, 1)
    r1 = api.check(spec({"csv": str(p), "null": "?"}, {"q": 1}), engine=duck, metrics=())
    assert (r1.node.classes, r1.node.min_class_size, r1.node.anonymous) == (1, 3, True)


def test_null_key_in_a_map(duck):
    people(duck, ["flu", None])
    r = api.check(spec({"map": {"flu": "ill", "unknown": "ill"}, "null": "unknown"}, {"q": 1}),
                  engine=duck, metrics=())
    assert (r.node.classes, r.node.min_class_size) == (1, 2)


def test_level_above_height_names_the_key_path(tmp_path):
    p = hfile(tmp_path, "a;x;*\n")
    with pytest.raises(SpecError, match=r"^spec\.yaml: transformation\.levels\.q: level 3 is above "
                                        r"the hierarchy's height 2$"):
        spec({"csv": str(p)}, {"q": 3})


def test_hierarchy_table_counts_labels_per_level():
    t = HierarchyTable((("1", "1-2", "*"), ("2", "1-2", "*"), ("3", "3-4", "*")))
    assert [t.label_count("1-2", 1), t.label_count("1-2", 2), t.label_count("*", 2)] == [2, 0, 3]
    assert t.level_values(1) == ["1-2", "3-4"] and t.height == 2


def test_per_level_codes_counts_and_defining_rows():
    """Numbering a level's labels once gives what the row-by-row look-ups gave, the last row of a
    repeated leaf defining it (as ``mapping``) and every row counted (as ARX's |D|)."""
    from sqlanon.domain.hierarchy.base import HierarchyTable

    t = HierarchyTable((("a", "x", "*"), ("b", "x", "*"), ("c", "y", "*"), ("a", "x", "*")))
    for level in range(t.height + 1):
        codes, labels = t.level_codes(level)
        assert labels == t.level_values(level)
        assert [labels[c] for c in codes] == [row[level] for row in t.rows]
        assert t.label_counts(level).tolist() == [t.label_count(label, level) for label in labels]
    assert t.leaf_rows(["c", "a"]).tolist() == [2, 3]
    assert t.label_count("x", 1) == 3 and t.label_count("*", 2) == 4 and t.label_count("x", 9) == 0
