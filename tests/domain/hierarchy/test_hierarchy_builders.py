"""Every builder's SQL, run by DuckDB, equals a plain-Python reference on generated values.

The reference (hierarchy_oracle.py) implements the documented rules with exact arithmetic. NULL is
always among the values: it stays NULL below the top and is a class of its own. The SQL rendered
for the other targets is read back by sqlglot and run on DuckDB too, and every builder's levels must
nest (each label has one parent) over the generated values.
"""

from __future__ import annotations

import datetime as dt
import math
import warnings
from decimal import Decimal
from fractions import Fraction

import duckdb
import pyarrow as pa
import pytest
import sqlglot
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlglot import exp

from sqlanon.domain.hierarchy import (
    DateHierarchy,
    IntervalHierarchy,
    MapHierarchy,
    MaskHierarchy,
    OrderedHierarchy,
)
from sqlanon.domain.hierarchy.base import Hierarchy
from sqlanon.errors import HierarchyError
from sqlanon.sql.nodes import alias, col, table
from sqlanon.sql.render import render
from tests.domain.hierarchy import hierarchy_oracle as oracle

TARGETS = ("postgres", "spark", "snowflake", "bigquery", "trino")
SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.fixture(scope="module")
def con():
    c = duckdb.connect()
    yield c
    c.close()


def levels_sql(h: Hierarchy, values: list, con, dialect: str = "duckdb") -> list[tuple]:
    """Run every level of ``h`` over ``values`` (in order) with the SQL rendered for ``dialect``."""
    con.register("vals", pa.table({"i": list(range(len(values))), "v": values}))
    try:
        query = exp.select(*[alias(h.expression(col("v"), lv), f"l{lv}")
                             for lv in range(1, h.height + 1)]).from_(table("vals")).order_by(col("i"))
        sql = render(query, dialect)
        if dialect != "duckdb":  # the target's text, read back as that dialect, must mean the same
            sql = sqlglot.transpile(sql, read=dialect, write="duckdb")[0]
        return [tuple(r) for r in con.execute(sql).fetchall()]
    finally:
        con.unregister("vals")


def expected(fn, values: list, height: int) -> list[tuple]:
    return [tuple(fn(v, lv) for lv in range(1, height + 1)) for v in values]


def assert_proper(values: list, rows: list[tuple]) -> None:
    assert oracle.nests([(v, *r) for v, r in zip(values, rows, strict=True)]) == []


# -- intervals ------------------------------------------------------------------------------------
@st.composite
def interval_params(draw):
    d = draw(st.integers(0, 3))
    widths = [Decimal(draw(st.integers(1, 40))) / 10 ** d]
    for _ in range(draw(st.integers(0, 3))):
        widths.append(widths[-1] * draw(st.integers(1, 4)))
    origin = Decimal(draw(st.integers(-50, 50))) / 10 ** draw(st.integers(0, d))
    codes = sorted(Decimal(draw(st.integers(-500, 500))) / 10 ** d for _ in range(2))
    bottom = float(codes[0]) if draw(st.booleans()) else None
    top = float(codes[1]) if draw(st.booleans()) and codes[1] > codes[0] else None
    return dict(widths=[float(w) for w in widths], origin=float(origin), bottom=bottom, top=top)


@st.composite
def interval_case(draw):
    p = draw(interval_params())
    w, o = Fraction(Decimal(repr(p["widths"][0]))), Fraction(Decimal(repr(p["origin"])))
    bounds = [float(o + k * w) for k in draw(st.lists(st.integers(-300, 300), max_size=15))]
    near = [math.nextafter(b, s) for b in bounds for s in (-math.inf, math.inf)]
    plain = draw(st.lists(st.floats(-2000, 2000, allow_nan=False), max_size=20))
    ints = [float(i) for i in draw(st.lists(st.integers(-2000, 2000), max_size=10))]
    return p, [None, *bounds, *near, *plain, *ints]


@SETTINGS
@given(interval_case())
def test_intervals_match_exact_reference(con, case):
    params, values = case
    h = IntervalHierarchy(tuple(params["widths"]), origin=params["origin"], bottom=params["bottom"],
                          top=params["top"])
    got = levels_sql(h, values, con)
    assert got == expected(lambda v, lv: oracle.interval(v, lv, **params), values, h.height)
    assert_proper(values, got)


def test_intervals_worked_example(con):
    # widths 5, 10 with bottom 18 and top 65, by hand: 17 is bottom-coded, 18 opens [15, 20).
    h = IntervalHierarchy((5, 10), bottom=18, top=65)
    assert levels_sql(h, [17, 18, 24.5, 25, 64.9, 65, None], con) == [
        ("<18", "<18", "*"), ("[15, 20)", "[10, 20)", "*"), ("[20, 25)", "[20, 30)", "*"),
        ("[25, 30)", "[20, 30)", "*"), ("[60, 65)", "[60, 70)", "*"), (">=65", ">=65", "*"),
        (None, None, "*")]


def test_intervals_decimal_widths_use_decimal_bounds(con):
    # 0.3 / 0.1 is 2.9999999999999996 in doubles; a person expects 0.3 in [0.3, 0.4).
    h = IntervalHierarchy((0.1, 0.5), origin=0)
    assert levels_sql(h, [0.3, 0.7, -0.05, 0.29], con) == [
        ("[0.3, 0.4)", "[0.0, 0.5)", "*"), ("[0.7, 0.8)", "[0.5, 1.0)", "*"),
        ("[-0.1, 0.0)", "[-0.5, 0.0)", "*"), ("[0.2, 0.3)", "[0.0, 0.5)", "*")]


def test_intervals_read_numbers_stored_as_text(con):
    h = IntervalHierarchy((10,), origin=5)
    assert levels_sql(h, ["39", "4", None], con) == [("[35, 45)", "*"), ("[-5, 5)", "*"), (None, "*")]


@pytest.mark.parametrize("widths, rule", [
    ((5, 12), r"width 12 is not a multiple of the previous width 5"),
    ((0.5, 0.75), r"width 0.75 is not a multiple of the previous width 0.5"),
    ((10, 5), r"width 5 is not a multiple of the previous width 10"),
    ((0,), r"width 0 must be > 0"),
    ((), r"at least one width"),
    ((1e-12,), r"at most 9 decimal places"),
])
def test_interval_ladder_errors(widths, rule):
    with pytest.raises(HierarchyError, match=rule):
        IntervalHierarchy(widths)


def test_interval_codes_must_be_ordered():
    with pytest.raises(HierarchyError, match=r"bottom \(50\) must be below top \(10\)"):
        IntervalHierarchy((5,), bottom=50, top=10)


# -- dates ----------------------------------------------------------------------------------------
UNIT_LADDERS = st.lists(st.sampled_from(["month", "quarter", "year", "decade", "century"]),
                        min_size=1, unique=True).map(
    lambda us: sorted(us, key=["month", "quarter", "year", "decade", "century"].index))


@SETTINGS
@given(UNIT_LADDERS, st.lists(st.dates(dt.date(1, 1, 1), dt.date(9999, 12, 31)), min_size=1, max_size=30),
       st.sampled_from(["date", "timestamp", "iso", "iso_t"]))
def test_dates_match_reference(con, units, days, kind):
    if kind == "date":
        values = list(days)
    else:
        stamps = [dt.datetime.combine(d, dt.time(23, 59, 59)) for d in days]
        values = {"timestamp": stamps, "iso": [d.isoformat() for d in days],
                  "iso_t": [s.isoformat() for s in stamps]}[kind]
    values = [*values, None]
    h = DateHierarchy(tuple(units))
    got = levels_sql(h, values, con)
    assert got == expected(lambda v, lv: oracle.date(v, lv, units), values, h.height)
    assert_proper(values, got)


def test_dates_worked_example(con):
    h = DateHierarchy(("month", "quarter", "year", "decade", "century"))
    assert levels_sql(h, [dt.date(2021, 3, 14)], con) == [
        ("2021-03", "2021-Q1", "2021", "2020s", "2000-2099", "*")]
    assert levels_sql(h, ["1999-12-31T08:00:00"], con) == [
        ("1999-12", "1999-Q4", "1999", "1990s", "1900-1999", "*")]


@pytest.mark.parametrize("units, rule", [
    (("month", "yaer"), r"\[1\]: unknown date unit 'yaer'.*Did you mean 'year'\?"),
    (("year", "month"), r"from fine to coarse"),
    (("year", "year"), r"from fine to coarse"),
    ((), r"at least one unit"),
])
def test_date_unit_errors(units, rule):
    with pytest.raises(HierarchyError, match=rule):
        DateHierarchy(units)


# -- masks ----------------------------------------------------------------------------------------
TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc", "Mn", "Mc", "Me", "Zl", "Zp")),
               max_size=9)


@SETTINGS
@given(st.integers(1, 7), st.booleans(), st.sampled_from("*#X"), st.lists(TEXT, min_size=1, max_size=30))
def test_masks_match_reference(con, levels, from_right, char, texts):
    values = [*texts, None]
    h = MaskHierarchy(levels, from_right=from_right, char=char)
    got = levels_sql(h, values, con)
    assert got == expected(lambda v, lv: oracle.mask(v, lv, levels, from_right, char), values, h.height)
    assert_proper(values, got)


def test_mask_zip_codes_and_variable_lengths(con):
    h = MaskHierarchy(5)
    assert levels_sql(h, [47677, 12, None], con) == [
        ("4767*", "476**", "47***", "4****", "*****"),
        ("1*", "**", "**", "**", "**"),
        (None, None, None, None, "*****")]
    left = MaskHierarchy(2, from_right=False)
    assert levels_sql(left, ["47677", "7"], con) == [("*7677", "**677"), ("*", "*")]


@pytest.mark.parametrize("kwargs, rule", [
    ({"levels": 0}, r"levels: levels must be an integer >= 1, got 0"),
    ({"levels": True}, r"levels must be an integer >= 1, got True"),
    ({"levels": 2, "char": "**"}, r"char: the mask character must be exactly one character"),
])
def test_mask_errors(kwargs, rule):
    with pytest.raises(HierarchyError, match=rule):
        MaskHierarchy(**kwargs)


# -- ordered groups and maps ----------------------------------------------------------------------
@st.composite
def ordered_case(draw):
    values = draw(st.lists(st.text("abcdefgh", min_size=1, max_size=3), min_size=1, max_size=25,
                           unique=True))
    sizes = [draw(st.integers(1, 3))]
    for _ in range(draw(st.integers(0, 2))):
        sizes.append(sizes[-1] * draw(st.integers(1, 3)))
    return values, sizes


@SETTINGS
@given(ordered_case(), st.data())
def test_ordered_groups_match_reference(con, case, data):
    values, sizes = case
    h = OrderedHierarchy(values, sizes)
    sample = [*data.draw(st.lists(st.sampled_from(values), max_size=20)), *values]
    # the table covers NULL only through a null leaf; without one NULL falls outside every level
    got = levels_sql(h, sample, con)
    assert got == expected(lambda v, lv: oracle.ordered(v, lv, values, sizes), sample, h.height)
    assert_proper(sample, got)


@SETTINGS
@given(st.dictionaries(st.text("abcxyz", min_size=1, max_size=3), st.sampled_from(["g1", "g2", "g3"]),
                       min_size=1, max_size=30))
def test_maps_match_reference(con, groups):
    h = MapHierarchy({leaf: [g, "*"] for leaf, g in groups.items()})
    values = list(groups)
    assert levels_sql(h, values, con) == [(groups[v], "*") for v in values]


def test_ordered_group_errors():
    with pytest.raises(HierarchyError, match=r"sizes\[1\]: group size 3 must be a positive multiple "
                                             r"of the previous size 2"):
        OrderedHierarchy(["a", "b", "c"], [2, 3])
    with pytest.raises(HierarchyError, match=r"'a' is listed twice"):
        OrderedHierarchy(["a", "b", "a"], [2])


def test_map_with_null_leaf_generalizes_null(con):
    h = MapHierarchy({"flu": ["respiratory", "*"], "unknown": ["unknown", "*"]}, null_leaf="unknown")
    assert levels_sql(h, ["flu", None], con) == [("respiratory", "*"), ("unknown", "*")]


# -- every target ---------------------------------------------------------------------------------
NUMBERS = [None, -7.5, -0.05, 0, 0.3, 0.29, 4, 17, 18, 24.99, 25, 64, 65, 99.5, 1234]
DATES = [None, dt.date(2021, 3, 14), dt.date(1999, 12, 31), dt.date(1, 1, 1), dt.date(2000, 10, 1)]
TEXTS = [None, "47677", "12", "", "é漢字x", "a b"]
CASES = [
    (IntervalHierarchy((5, 10, 50), bottom=18, top=65),
     lambda v, lv: oracle.interval(v, lv, [5, 10, 50], 0, 18, 65), NUMBERS),
    (IntervalHierarchy((0.1, 0.5), origin=-0.2),
     lambda v, lv: oracle.interval(v, lv, [0.1, 0.5], -0.2), NUMBERS),
    (DateHierarchy(("month", "quarter", "year", "decade", "century")),
     lambda v, lv: oracle.date(v, lv, ["month", "quarter", "year", "decade", "century"]), DATES),
    (MaskHierarchy(3), lambda v, lv: oracle.mask(v, lv, 3), TEXTS),
    (MaskHierarchy(3, from_right=False), lambda v, lv: oracle.mask(v, lv, 3, False), TEXTS),
    (OrderedHierarchy(["b", "a", "é漢", "z"], [2], null_leaf="z"),
     lambda v, lv: oracle.ordered("z" if v is None else v, lv, ["b", "a", "é漢", "z"], [2]),
     [None, "a", "b", "é漢", "z"]),
    (MapHierarchy({"it's": ["x", "*"], "a": ["y", "*"]}),
     lambda v, lv: {"it's": ["x", "*"], "a": ["y", "*"]}[v][lv - 1], ["it's", "a"]),
]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("case", range(len(CASES)))
def test_every_target_renders_and_means_the_same(con, target, case):
    h, fn, values = CASES[case]
    for lv in range(h.height + 1):
        render(h.expression(col("v"), lv), target)  # raises on a function the target lacks
    assert levels_sql(h, values, con, target) == expected(fn, values, h.height)


def test_mask_avoids_repeat_which_trino_lacks_for_text():
    for lv in range(1, 4):
        assert "REPEAT" not in render(MaskHierarchy(3).expression(col("v"), lv), "trino").upper()


# -- proper hierarchies over many values ----------------------------------------------------------
MANY_NUMBERS = [None, *[i / 7 for i in range(-1500, 1500, 3)]]
MANY_DATES = [None, *[dt.date(1890, 1, 1) + dt.timedelta(days=37 * i) for i in range(1500)]]
MANY_TEXTS = [None, *[str(i) for i in range(1500)]]  # lengths 1 to 4


@pytest.mark.parametrize("h, values, tops", [
    (IntervalHierarchy((0.5, 2.5, 10), origin=-1, bottom=-150, top=150), MANY_NUMBERS, 1),
    (IntervalHierarchy((7, 21, 105)), MANY_NUMBERS, 1),
    (DateHierarchy(("month", "quarter", "year", "decade", "century")), MANY_DATES, 1),
    (MaskHierarchy(4), MANY_TEXTS, 4),  # one fully masked top per length; NULL's **** joins length 4
    (MaskHierarchy(6, from_right=False), MANY_TEXTS, 5),  # ... and here NULL's ****** is a fifth
])
def test_levels_nest_over_many_values(h, values, tops):
    from sqlanon.domain.hierarchy.table import validate_rows
    from tests.domain.hierarchy.scratch import materialize

    rows = materialize(h, values).rows
    assert len(rows) == len(set(values))
    assert oracle.nests(list(rows)) == []
    labelled = [tuple("NULL" if c is None else c for c in r) for r in rows]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        validate_rows(labelled, "materialized")  # the production rules: no error
    assert len({r[-1] for r in rows}) == tops
    assert [str(w.message) for w in caught] == ([] if tops == 1 else [
        f"materialized: the top level has {tops} values, not one; the most general transformation "
        "will not merge all records"])
