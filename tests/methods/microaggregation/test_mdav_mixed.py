"""MDAV on mixed records against a row-by-row transcription, plain numpy MDAV, sdcMicro's MDAV."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sqlanon.domain.hierarchy import TableHierarchy, read_arx_csv
from sqlanon.errors import HierarchyError, SpecError
from sqlanon.methods.microaggregation.algorithms.mdav import mdav_groups
from sqlanon.methods.microaggregation.algorithms.mdav_mixed import mdav_mixed, nearest
from sqlanon.methods.microaggregation.distance.categorical import nominal_centroid
from sqlanon.methods.microaggregation.distance.heterogeneous import MixedRecords
from sqlanon.methods.microaggregation.records import NominalColumn, Records
from tests.conftest import ADULT, require_data
from tests.methods.microaggregation import categorical_reference as ref


def _column(values, hierarchy=None) -> NominalColumn:
    uniq = sorted(set(values))
    return NominalColumn(np.array([uniq.index(v) for v in values], dtype=np.int64), tuple(uniq),
                         hierarchy)


def _records(numeric, nominal) -> Records:
    n = len(numeric[0]) if numeric else len(next(iter(nominal.values())).codes)
    x = np.array(numeric, dtype=np.float64).T if numeric else np.zeros((n, 0))
    return Records(x=x, names=tuple(f"x{j}" for j in range(len(numeric))), nominal=nominal)


def _sizes_ok(labels: np.ndarray, k: int) -> None:
    sizes = np.bincount(labels)
    n = len(labels)
    assert labels.min() == 0 and np.all(sizes > 0)
    if n >= 2 * k:
        assert sizes.min() >= k and sizes.max() <= 2 * k - 1
        assert np.all(sizes[:-1] == k)  # only the last group takes the remainder
    else:
        assert len(sizes) == 1


# -- the loop against a row-by-row transcription ---------------------------------------------------

@st.composite
def mixed_data(draw):
    n = draw(st.integers(1, 40))
    k = draw(st.integers(1, min(5, n)))
    numeric = [draw(st.lists(st.integers(-5, 9), min_size=n, max_size=n))
               for _ in range(draw(st.integers(0, 2)))]
    with_tree = draw(st.booleans())
    flat = draw(st.booleans()) or (not numeric and not with_tree)
    nominal, plain = {}, []
    if with_tree:
        rows = draw(ref.taxonomies())
        values = draw(st.lists(st.sampled_from([r[0] for r in rows]), min_size=n, max_size=n))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # several top values are allowed here
            nominal["tree"] = _column(values, TableHierarchy([list(r) for r in rows]))
        plain.append((values, rows))
    if flat:
        values = draw(st.lists(st.sampled_from("abcd"), min_size=n, max_size=n))
        nominal["flat"] = _column(values)
        plain.append((values, None))
    return numeric, nominal, plain, k


@settings(max_examples=120, deadline=None)
@given(mixed_data())
def test_groups_equal_the_transcription(case):
    numeric, nominal, plain, k = case
    labels = mdav_mixed(_records(numeric, nominal), k)
    assert labels.tolist() == ref.mdav_mixed([[float(v) for v in c] for c in numeric], plain, k)
    _sizes_ok(labels, k)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(0, 1, allow_nan=False), min_size=1, max_size=40), st.integers(1, 6))
def test_nearest_takes_ties_in_position_order(d, k):
    d = np.array(d).round(1)
    got = nearest(d, k)
    want = np.lexsort((np.arange(len(d)), d))[:k]
    assert sorted(got.tolist()) == sorted(want.tolist())


# -- reduction to numeric MDAV ---------------------------------------------------------------------

def _plain_mdav(z: np.ndarray, k: int) -> np.ndarray:
    """The book's MDAV on already-normalized columns, squared Euclidean distance, plain numpy."""
    labels = np.full(len(z), -1)
    rest = np.arange(len(z))
    g = 0

    def take(r: int) -> None:
        nonlocal rest, g
        d = ((z[rest] - z[r]) ** 2).sum(axis=1)
        d[rest == r] = -1
        chosen = rest[np.lexsort((rest, d))[:k]]
        labels[chosen] = g
        g += 1
        rest = rest[~np.isin(rest, chosen)]

    while len(rest) >= 2 * k:
        both = len(rest) >= 3 * k
        r = rest[np.argmax(((z[rest] - z[rest].mean(axis=0)) ** 2).sum(axis=1))]
        take(r)
        if both:
            take(rest[np.argmax(((z[rest] - z[r]) ** 2).sum(axis=1))])
    labels[rest] = g
    return labels


@pytest.mark.parametrize(("seed", "k"), [(0, 3), (1, 5), (2, 2)])
def test_numeric_data_reduces_to_range_normalized_mdav(seed, k):
    x = np.random.default_rng(seed).normal(size=(400, 3)) * [1.0, 30.0, 0.01] + [0.0, 100.0, 5.0]
    labels = mdav_mixed(Records(x=x, names=("a", "b", "c")), k)
    assert labels.tolist() == _plain_mdav((x - x.min(axis=0)) / np.ptp(x, axis=0), k).tolist()


def test_bounds_of_one_standard_deviation_give_sdcmicro_mdav():
    x = np.random.default_rng(7).normal(size=(300, 2)) * [2.0, 50.0]
    sd = x.std(axis=0)
    bounds = {"a": (0.0, sd[0]), "b": (10.0, 10.0 + sd[1])}
    labels = mdav_mixed(Records(x=x, names=("a", "b")), 4, bounds=bounds)
    sdc = sorted(sorted(g.tolist()) for g in mdav_groups(x, 4))
    ours = sorted(np.flatnonzero(labels == g).tolist() for g in range(labels.max() + 1))
    assert ours == sdc


# -- real data -------------------------------------------------------------------------------------

NOMINAL = ("education", "marital-status", "occupation")


@pytest.fixture(scope="module")
def adult():
    path = require_data(ADULT / "adult.csv")
    return pd.read_csv(path, sep=";", dtype=str)


def _adult_records(frame: pd.DataFrame) -> Records:
    nominal = {a: _column(frame[a].tolist(), read_arx_csv(ADULT / f"adult_hierarchy_{a}.csv"))
               for a in NOMINAL}
    return Records(x=frame[["age"]].astype(float).to_numpy(), names=("age",), nominal=nominal)


def test_adult_prefix_equals_the_transcription(adult):
    frame = adult.iloc[:400]
    labels = mdav_mixed(_adult_records(frame), 4)
    plain = [(frame[a].tolist(), [r.split(";") for r in
                                  (ADULT / f"adult_hierarchy_{a}.csv").read_text().splitlines()])
             for a in NOMINAL]
    assert labels.tolist() == ref.mdav_mixed([frame["age"].astype(float).tolist()], plain, 4)


def test_adult_three_thousand_rows(adult):
    frame = adult.iloc[:3000]
    records = _adult_records(frame)
    k = 5
    labels = mdav_mixed(records, k)
    _sizes_ok(labels, k)
    space = MixedRecords(records)
    # groups are far tighter than a random partition with the same sizes
    rng = np.random.default_rng(0)

    def spread(lab: np.ndarray) -> float:
        total = 0.0
        for g in range(lab.max() + 1):
            rows = np.flatnonzero(lab == g)
            cols = [c[rows] for c in space.columns]
            codes = [c[rows] for c in space.codes]
            counts = [np.bincount(c, minlength=len(s.column.values)).astype(float)
                      for c, s in zip(codes, space.spaces)]
            total += space.squared(space.centroid(cols, counts), cols, codes).sum()
        return total

    assert spread(labels) < 0.2 * spread(rng.permutation(labels))
    # the centroids the pipeline writes agree with brute force
    tree = {a: [r.split(";") for r in (ADULT / f"adult_hierarchy_{a}.csv").read_text().splitlines()]
            for a in NOMINAL}
    for g in range(0, labels.max() + 1, 37):
        rows = np.flatnonzero(labels == g)
        for a in NOMINAL:
            got = nominal_centroid(records.nominal[a], rows)
            leaf = ref.leaves(tree[a])
            want = ref.centroid([leaf[v] for v in frame[a].iloc[rows]], ref.concept_order(tree[a]))
            assert got == (want[-1] if len(want) else None)


# -- bad input -------------------------------------------------------------------------------------

def test_bad_input_is_refused_with_the_key():
    rec = _records([[1, 2, 3]], {"job": _column(["a", "b", "a"])})
    with pytest.raises(SpecError, match=r"transformation\.k.*k = 4 is larger than the number of"):
        mdav_mixed(rec, 4)
    with pytest.raises(SpecError, match=r"k must be an integer >= 1, got 0"):
        mdav_mixed(rec, 0)
    with pytest.raises(SpecError, match=r"bounds\.x0.*low < high"):
        mdav_mixed(rec, 2, bounds={"x0": (5, 5)})
    with pytest.raises(SpecError, match=r"bounds are given for 'x'.*Did you mean 'x0'"):
        mdav_mixed(rec, 2, bounds={"x": (0, 1)})
    with pytest.raises(SpecError, match=r"attribute 'x0' has NaN"):
        mdav_mixed(_records([[1.0, float("nan")]], {}), 1)
    short = NominalColumn(np.array([0, 1]), ("a", "b"))
    with pytest.raises(SpecError, match=r"'job' has 2 codes for 3 rows"):
        mdav_mixed(_records([[1, 2, 3]], {"job": short}), 1)
    with pytest.raises(SpecError, match="no attribute"):
        mdav_mixed(Records(x=np.zeros((3, 0)), names=()), 1)


def test_a_value_missing_from_the_hierarchy_names_attribute_and_value():
    h = TableHierarchy([["Sales", "White collar", "*"], ["Tech", "White collar", "*"]])
    rec = _records([[1, 2, 3]], {"occupation": _column(["Sales", "Tech", "O'Brien \"; --"], h)})
    with pytest.raises(HierarchyError,
                       match=r"attributes\.occupation\.hierarchy.*'occupation'.*O\\'Brien"):
        mdav_mixed(rec, 1)


def test_nominal_only_and_null_values():
    h = TableHierarchy([["a", "x", "*"], ["b", "x", "*"], ["c", "y", "*"]])
    values = ["a", None, "b", None, "c", "a", None]
    codes = {None: 0, "a": 1, "b": 2, "c": 3}
    col = NominalColumn(np.array([codes[v] for v in values]), (None, "a", "b", "c"), h)
    labels = mdav_mixed(Records(x=np.zeros((7, 0)), names=(), nominal={"v": col}), 3)
    _sizes_ok(labels, 3)
    # NULL is at distance 1 from every value: the three NULL rows end up together
    assert len(set(labels[[1, 3, 6]].tolist())) == 1
