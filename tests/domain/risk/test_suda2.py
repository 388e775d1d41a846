"""SUDA2: a table worked by hand, the MSUs of random tables against every QI subset enumerated, the
scores against sdcMicro's C++ scoring re-run by hand, and Adult's sample uniques."""

from __future__ import annotations

from collections import Counter
from itertools import product

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sqlanon.domain.risk.msu import Msus, find_msus, find_msus_levelwise
from sqlanon.domain.risk.msu_topdown import find_msus_topdown
from sqlanon.domain.risk.suda2 import PER_RECORD, msu_weights, suda2
from sqlanon.errors import SpecError
from tests.domain.risk.oracle import msus_by_row, sdcmicro_scores
from tests.domain.risk.test_individual_risk import load

HAND = [("a", 1, "x"), ("a", 1, "x"), ("b", 2, "x"), ("b", None, "y"), (None, None, "y"), ("c", 3, "x"),
        ("a", 2, "y")]


def scores(duck, table, q, names=None):
    cols = ", ".join(f'"{c}"' for c in (names or [f"q{j}" for j in range(q)]))
    rows = duck.con.execute(f"SELECT {cols}, {', '.join(PER_RECORD)} FROM {table}").fetchall()
    return {r[:q]: r[q:] for r in rows}


def test_a_table_worked_by_hand(duck):
    # (c,3,x): c and 3 are unique values: two MSUs of size 1, each scoring (3−1)·(3−2) = 2;
    # (b,2,x): b, 2 and x all repeat, but (b,2), (b,x) and (2,x) do not: three MSUs of size 2 (1 each);
    # (a,2,y): likewise (a,2), (a,y), (2,y); (b,NULL,y): only (b,y), its NULL is in no MSU;
    # (NULL,NULL,y): y repeats, no MSU; the two (a,1,x) are not unique
    cols = load(duck, HAND)
    r = suda2(duck, "t", cols, output="out")
    got = {k: v[0] for k, v in scores(duck, "out", 3).items()}
    assert got == {("a", "1", "x"): 0.0, ("b", "2", "x"): 3.0, ("b", None, "y"): 1.0, (None, None, "y"): 0.0,
                   ("c", "3", "x"): 4.0, ("a", "2", "y"): 3.0}
    assert r.msus_by_size == {1: 2, 2: 7, 3: 0}
    assert (r.records, r.sample_uniques, r.records_with_msu) == (7, 5, 4)
    # the first QI is in {c} (2), (b,2), (b,x), (a,2), (a,y) and (b,y) (1 each): 7 of the total 11
    assert r.attribute_contributions["q0"] == pytest.approx(100 * 7 / 11)
    # five uniques, one pair: DIS = 5f / (5f + 2(1 − f)), Q = 1 + (8 − 3)/20, over the scores 3, 1, 4, 3
    f, q = 0.01, 1.25
    dis = 5 * f / (5 * f + 2 * (1 - f))
    adjust = sum(s ** -q for s in (3, 1, 4, 3))
    top = 1 / (1 + (5 / dis - 5) / (4 ** q * adjust))
    assert r.highest_dis_score == pytest.approx(top, rel=1e-6)
    assert r.dis_intervals["== 0"] == 3 and sum(r.dis_intervals.values()) == 7


def codes_and_counts(rows):
    counts = Counter(rows)
    distinct = list(counts)
    q = len(rows[0])
    levels = [sorted({r[v] for r in distinct if r[v] is not None}) for v in range(q)]
    codes = np.array([[levels[v].index(r[v]) if r[v] is not None else -1 for v in range(q)]
                      for r in distinct], dtype=np.int64).reshape(len(distinct), q)
    return distinct, codes, np.array([counts[r] for r in distinct], dtype=np.int64)


@st.composite
def tables(draw):
    q = draw(st.integers(1, 5))
    n = draw(st.integers(1, 30))
    domain = st.sampled_from([0, 1, 2, None]) if draw(st.booleans()) else st.sampled_from([0, 1, 2, 3, 4])
    return [tuple(draw(domain) for _ in range(q)) for _ in range(n)]


@settings(max_examples=150)
@given(tables(), st.integers(1, 5))
def test_msus_of_random_tables_are_every_subset_enumerated(rows, max_size):
    max_size = min(max_size, len(rows[0]))
    distinct, codes, count = codes_and_counts(rows)
    assert_every_subset_enumerated(find_msus(codes, count, max_size), rows, distinct, max_size)


def assert_every_subset_enumerated(msus, rows, distinct, max_size):
    """Each distinct row's MSUs (and their count per size) are the ones enumerating every subset
    finds; no subset is listed without a combination."""
    expected = dict(zip(rows, msus_by_row(rows, max_size)))
    got: dict[tuple, list] = {r: [] for r in distinct}
    for subset, combos in msus.subsets.items():
        assert len(combos), subset
        for c in combos:
            got[distinct[c]].append(subset)
    for i, r in enumerate(distinct):
        assert sorted(got[r]) == sorted(expected[r]), r
        sizes = Counter(len(s) for s in expected[r])
        assert msus.by_size[i].tolist() == [sizes.get(k, 0) for k in range(max_size + 1)]


def top_down(codes, count, max_size):
    return Msus(*find_msus_topdown(codes, count, max_size))


@st.composite
def tables_with_repeats(draw):
    q = draw(st.integers(1, 6))
    values = draw(st.sampled_from([[0, 1], [0, 1, 2, None], [0, 1, 2, 3, 4, 5, 6]]))
    n = draw(st.integers(1, 40))
    return [tuple(draw(st.sampled_from(values)) for _ in range(q)) for _ in range(n)]


@pytest.mark.parametrize("search", [top_down, find_msus_levelwise], ids=["top-down", "level-wise"])
@settings(max_examples=120, deadline=None)
@given(rows=tables_with_repeats(), max_size=st.integers(1, 6))
def test_both_searches_find_every_subset_enumerated(search, rows, max_size):
    max_size = min(max_size, len(rows[0]))
    distinct, codes, count = codes_and_counts(rows)
    assert_every_subset_enumerated(search(codes, count, max_size), rows, distinct, max_size)


FIXED = [tuple(v) for v in np.random.default_rng(7).integers(0, 3, size=(60, 4)).tolist()]
FIXED[5] = (None, 1, 2, 0)
FIXED[17] = (2, None, None, 1)


@pytest.mark.parametrize("original", [True, False])
@pytest.mark.parametrize("fraction", [0.01, 0.3])
def test_scores_match_sdcmicros_scoring_rerun_by_hand(duck, original, fraction):
    cols = load(duck, FIXED)
    r = suda2(duck, "t", cols, dis_fraction=fraction, original_scores=original, output="out")
    expected_scores, expected_dis, hash_uniques = sdcmicro_scores(FIXED, msus_by_row(FIXED, 4), fraction,
                                                                  original)
    got = scores(duck, "out", 4)
    for row, s, d in zip(FIXED, expected_scores, expected_dis):
        g = got[tuple(None if v is None else str(v) for v in row)]
        assert g[0] == pytest.approx(s, rel=1e-12)
        assert g[1] == pytest.approx(d, rel=1e-6, abs=1e-12)
    assert r.sample_uniques == sum(1 for c in Counter(FIXED).values() if c == 1) >= hash_uniques
    assert r.highest_score == max(expected_scores) > 0


def test_fewer_than_three_quasi_identifiers_score_as_sdcmicro_pads_them(duck):
    rows = [(1, "a"), (1, "b"), (2, "a"), (3, "c"), (3, "c")]
    cols = load(duck, rows)
    r = suda2(duck, "t", cols, output="out")
    got = {k: v[0] for k, v in scores(duck, "out", 2).items()}
    # A = 3: an MSU of size 1 scores 2·1, of size 2 scores 1; (2,a): {2}; (1,b): {b}; (1,a): {1,a}
    assert got == {("1", "a"): 1.0, ("1", "b"): 2.0, ("2", "a"): 2.0, ("3", "c"): 0.0}
    assert msu_weights(1, 1).tolist() == [0.0, 2.0]
    assert msu_weights(9, 9)[1:4].tolist() == [40320, 5040, 720]
    assert r.max_size == 2


def test_max_size_keeps_the_smaller_msus_and_elliots_weights(duck):
    cols = load(duck, FIXED)
    full, two = suda2(duck, "t", cols), suda2(duck, "t", cols, max_size=2)
    assert two.msus_by_size == {k: full.msus_by_size[k] for k in (1, 2)}
    # weights Π_{j=k}^{2} (4 − j): size 1 → 3·2, size 2 → 2
    assert msu_weights(4, 2).tolist() == [0.0, 6.0, 2.0]
    assert msu_weights(4, 4).tolist() == [0.0, 6.0, 2.0, 1.0, 1.0]


def test_adult_sample_uniques_and_scores(adult_engine):
    qis = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass",
           "occupation", "salary-class"]
    r = suda2(adult_engine, "adult", qis, max_size=4)
    # ARX: 15,512 records at the highest risk (alone in their class)
    assert r.sample_uniques == 15_512 and r.records == 30_162
    assert 0 < r.records_with_msu <= r.sample_uniques
    assert sum(r.dis_intervals.values()) == 30_162
    assert sum(r.attribute_contributions.values()) > 100  # MSUs of several QIs count for each


def test_adult_sample_against_every_subset_enumerated(adult_engine):
    adult_engine.con.execute("CREATE TABLE part AS SELECT age, education, occupation, \"native-country\", "
                             "sex FROM adult LIMIT 150")
    cols = ["age", "education", "occupation", "native-country", "sex"]
    rows = adult_engine.con.execute("SELECT * FROM part").fetchall()
    r = suda2(adult_engine, "part", cols)
    expected = Counter(len(m) for found in msus_by_row(rows, 5) for m in found)
    assert r.msus_by_size == {k: expected.get(k, 0) for k in range(1, 6)}
    s, _, _ = sdcmicro_scores(rows, msus_by_row(rows, 5), 0.01)
    assert r.highest_score == max(s)


def test_bad_parameters_are_refused(duck):
    cols = load(duck, HAND)
    for bad in (0, 4, 2.5, True):
        with pytest.raises(SpecError, match="max_size must be a whole number from 1 to"):
            suda2(duck, "t", cols, max_size=bad)
    for bad in (0.0, 1.0, -0.1):
        with pytest.raises(SpecError, match="dis_fraction must be between 0 and 1"):
            suda2(duck, "t", cols, dis_fraction=bad)
    with pytest.raises(SpecError, match="quasi-identifiers repeat"):
        suda2(duck, "t", ["q0", "q0"])


def test_all_values_products_small_domains(duck):
    # every combination of three binary QIs once: nobody is unique on fewer than three QIs
    rows = list(product([0, 1], repeat=3))
    cols = load(duck, rows)
    r = suda2(duck, "t", cols)
    assert r.msus_by_size == {1: 0, 2: 0, 3: 8} and r.highest_score == 1.0


@st.composite
def coded_tables(draw):
    q = draw(st.integers(3, 5))
    n = draw(st.integers(2, 30))
    domain = st.sampled_from([1, 2, 3, -999]) if draw(st.booleans()) else st.sampled_from([1, 2, 3, 4, 5])
    return [[draw(domain) for _ in range(q)] for _ in range(n)]


@settings(max_examples=150)
@given(coded_tables())
def test_msu_counts_are_sdcmicros_search_rerun_by_hand(coded):
    from tests.domain.risk.sdcmicro_suda2 import sdcmicro_msu_counts

    rows = [tuple(None if v == -999 else v for v in r) for r in coded]
    distinct, codes, count = codes_and_counts(rows)
    msus = find_msus(codes, count, len(rows[0]))
    ours = {r: msus.by_size[i, 1:].tolist() for i, r in enumerate(distinct)}
    for r, theirs in zip(rows, sdcmicro_msu_counts(coded)):
        if Counter(rows)[r] == 1:
            assert ours[r] == theirs, r
        else:
            assert not any(theirs)


def test_adult_sample_msus_are_sdcmicros_search_rerun_by_hand(adult_engine):
    """1,500 rows of Adult over 6 QIs: sdcMicro's search meets over a hundred correlated items
    (equal record sets) there, whose MSUs it counts by multiplicity."""
    from tests.domain.risk.sdcmicro_suda2 import sdcmicro_msu_counts

    cols = ["age", "education", "occupation", "native-country", "sex", "race"]
    quoted = ", ".join(f'"{c}"' for c in cols)
    adult_engine.con.execute(f"CREATE TABLE part AS SELECT {quoted} FROM adult LIMIT 1500")
    rows = adult_engine.con.execute("SELECT * FROM part").fetchall()
    levels = [sorted({r[v] for r in rows}) for v in range(len(cols))]
    theirs = sdcmicro_msu_counts([[levels[v].index(r[v]) + 1 for v in range(len(cols))] for r in rows])
    r = suda2(adult_engine, "part", cols, output="out")
    assert r.msus_by_size == {k + 1: int(c) for k, c in enumerate(np.sum(theirs, axis=0))}
    got = scores(adult_engine, "out", len(cols), cols)
    weights = msu_weights(len(cols), len(cols))
    for row, counts in zip(rows, theirs):
        assert got[row][0] == sum(weights[k + 1] * c for k, c in enumerate(counts))


@st.composite
def wider_tables(draw):
    q, n, values = draw(st.integers(3, 7)), draw(st.integers(2, 100)), draw(st.integers(2, 5))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    drawn = rng.integers(0, values, size=(n, q)).tolist()
    missing = rng.random((n, q)) < draw(st.sampled_from([0.0, 0.1]))
    rows = [tuple(None if m else v for v, m in zip(r, ms)) for r, ms in zip(drawn, missing)]
    return rows, draw(st.integers(1, q))


@settings(max_examples=50, deadline=None)
@given(wider_tables())
def test_msus_are_suda2s_recursive_search_over_sub_tables(drawn):
    from tests.domain.risk.recursive_msus import find_msus_recursive

    rows, max_size = drawn
    _, codes, count = codes_and_counts(rows)
    ours, theirs = find_msus(codes, count, max_size), find_msus_recursive(codes, count, max_size)
    assert ours.by_size.tolist() == theirs.by_size.tolist()
    assert {k: sorted(v.tolist()) for k, v in ours.subsets.items()} == \
        {k: sorted(v.tolist()) for k, v in theirs.subsets.items()}
    for other in (top_down(codes, count, max_size), find_msus_levelwise(codes, count, max_size)):
        assert other.by_size.tolist() == theirs.by_size.tolist()
        assert {k: sorted(v.tolist()) for k, v in other.subsets.items()} == \
            {k: sorted(v.tolist()) for k, v in theirs.subsets.items()}
    if len(rows[0]) <= 5 and len(rows) <= 40:  # the enumeration is quadratic in the rows
        expected = Counter(len(m) for found in msus_by_row(rows, max_size) for m in found)
        assert {k: int((ours.by_size[:, k] * count).sum()) for k in range(1, max_size + 1)} == \
            {k: expected.get(k, 0) for k in range(1, max_size + 1)}
