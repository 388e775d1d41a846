"""Integer codes of pulled values (the in-memory search and microaggregation), against plain Python."""

from __future__ import annotations

import datetime
from decimal import Decimal

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from sqlanon.domain.factorize import code_dtype, factorize, group_ids


def first_appearance(values: list) -> tuple[list[int], list]:
    seen: dict = {}
    return [seen.setdefault(v, len(seen)) for v in values], list(seen)


VALUES = st.one_of(st.none(), st.sampled_from(["a", "b", "ü", ""]), st.integers(-3, 3))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(st.none(), st.sampled_from(["x", "y", "Zoë"])), max_size=30),
       st.lists(VALUES, max_size=30))
def test_codes_follow_first_appearance_with_none_as_a_value(texts, mixed):
    for values in (texts, mixed):
        codes, distinct = factorize(np.array(values, dtype=object))
        expected_codes, expected_distinct = first_appearance(values)
        assert codes.tolist() == expected_codes
        assert distinct.tolist() == expected_distinct
        assert codes.dtype == np.int64


def test_the_distinct_values_are_the_objects_given():
    values = [Decimal("1.50"), Decimal("2"), datetime.date(2024, 1, 2), Decimal("1.50")]
    _, distinct = factorize(values)
    assert [str(v) for v in distinct] == ["1.50", "2", "2024-01-02"]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["b", "a", None]), st.sampled_from([2, 1])), max_size=25))
def test_groups_are_numbered_in_sorted_order_with_sizes(rows):
    columns = [np.array([r[i] for r in rows], dtype=object) for i in range(2)]
    ids, sizes = group_ids(columns, sort_key=lambda v: (v is None, v if v is not None else 0))
    order = sorted(set(rows), key=lambda r: ((r[0] is None, r[0] or ""), r[1]))
    assert ids.tolist() == [order.index(r) for r in rows]
    assert sizes.tolist() == [rows.count(r) for r in order]


def test_code_dtype_is_the_narrowest_type_holding_every_code():
    assert [code_dtype(m) for m in (0, 255, 256, 2**15 - 1, 2**15, 2**31 - 1, 2**31)] == [
        np.uint8, np.uint8, np.int16, np.int16, np.int32, np.int32, np.int64]
    assert code_dtype(255, signed=True) == np.int16
