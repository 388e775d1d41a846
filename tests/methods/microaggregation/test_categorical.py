"""Semantic distance (eq. 9.6), marginality centroid (eq. 9.4), mode fallback and ordinal ranks."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sqlanon.domain.hierarchy import HierarchyTable, MaskHierarchy, TableHierarchy
from sqlanon.errors import HierarchyError, SpecError
from sqlanon.methods.microaggregation.distance import semantic
from sqlanon.methods.microaggregation.distance.categorical import (
    NominalSpace,
    marginality_centroid,
    nominal_centroid,
    nominal_centroids,
    ordinal_centroid,
    ordinal_ranks,
)
from sqlanon.methods.microaggregation.distance.semantic import Taxonomy
from sqlanon.methods.microaggregation.records import NominalColumn
from tests.methods.microaggregation import categorical_reference as ref

EDUCATION = (
    ("Bachelors", "Undergraduate", "Higher education", "*"),
    ("Some-college", "Undergraduate", "Higher education", "*"),
    ("Masters", "Graduate", "Higher education", "*"),
    ("Doctorate", "Graduate", "Higher education", "*"),
    ("HS-grad", "High School", "Secondary education", "*"),
    ("11th", "High School", "Secondary education", "*"),
)


def _tax(rows=EDUCATION) -> Taxonomy:
    return Taxonomy(HierarchyTable(tuple(rows)))


def _concept(t: Taxonomy, *path: str) -> int:
    """The concept reached from the top along ``path``."""
    node = next(i for i in range(len(t)) if t.parent[i] < 0 and t.label[i] == path[0])
    for label in path[1:]:
        node = next(i for i in range(len(t)) if t.parent[i] == node and t.label[i] == label)
    return node


def _key(t: Taxonomy, node: int) -> tuple:
    """A concept as the reference module names it: its labels from the top down."""
    return tuple(t.label[i] for i in t.path(node))


# -- eq. 9.6 on hand-worked pairs ------------------------------------------------------------------

@pytest.mark.parametrize(("a", "b", "expected"), [
    ("Bachelors", "Bachelors", 0.0),
    ("Bachelors", "Some-college", math.log2(1 + 2 / 5)),  # |φ∪φ| = 5, |φ∩φ| = 3
    ("Bachelors", "Masters", math.log2(1 + 4 / 6)),       # 6, 2
    ("Bachelors", "HS-grad", math.log2(1 + 6 / 7)),       # 7, 1 (only the top is shared)
])
def test_semantic_distance_between_leaves(a, b, expected):
    t = _tax()
    assert t.distance(t.leaf[a], t.leaf[b]) == pytest.approx(expected, rel=1e-15)
    assert t.distance(t.leaf[b], t.leaf[a]) == pytest.approx(expected, rel=1e-15)


def test_semantic_distance_to_a_generalization():
    t = _tax()
    higher = _concept(t, "*", "Higher education")
    # φ(Higher education) = {*, Higher education} is inside φ(Bachelors): union 4, common 2
    assert t.distance(t.leaf["Bachelors"], higher) == pytest.approx(math.log2(1.5))
    assert t.distance(t.leaf["HS-grad"], higher) == pytest.approx(math.log2(1 + 4 / 5))


def test_repeated_labels_are_one_concept_and_separate_tops_are_at_distance_one():
    t = _tax([("Married", "Married", "*"), ("Divorced", "Single", "*"), ("x", "y", "other top")])
    assert int(t.depth[t.leaf["Married"]]) == 2  # {*, Married}
    assert t.distance(t.leaf["Married"], t.leaf["Divorced"]) == pytest.approx(math.log2(1 + 3 / 4))
    assert t.distance(t.leaf["Married"], t.leaf["x"]) == 1.0
    assert t.distance(t.null, t.leaf["x"]) == 1.0 and t.distance(t.null, t.null) == 0.0


# -- eq. 9.4 on hand-worked samples ----------------------------------------------------------------

def test_marginality_values_and_centroid_of_a_mixed_sample():
    t = _tax()
    sample = [t.leaf[v] for v in ("Bachelors", "Some-college", "Masters")]
    under = _concept(t, "*", "Higher education", "Undergraduate")
    names = {t.leaf["Bachelors"]: math.log2(1.4) + math.log2(5 / 3),
             t.leaf["Masters"]: 2 * math.log2(5 / 3),
             under: 2 * math.log2(1.25) + math.log2(1.6),
             _concept(t, "*", "Higher education"): 3 * math.log2(1.5)}
    got = t.marginality(np.array(list(names)), np.array(sample))
    assert got == pytest.approx(list(names.values()), rel=1e-14)
    # Bachelors and Some-college tie at the least marginality; Bachelors is first in the hierarchy
    assert t.label[t.centroid(sample)] == "Bachelors"


def test_a_generalization_wins_over_four_distinct_siblings():
    rows = [("p", "g", "*"), ("q", "g", "*"), ("r", "g", "*"), ("s", "g", "*"), ("z", "h", "*")]
    t = _tax(rows)
    # 4 x log2(4/3) = 1.660 < 3 x log2(3/2) = 1.755
    assert t.label[t.centroid([t.leaf[v] for v in "pqrs"])] == "g"
    assert t.label[t.centroid([t.leaf[v] for v in "pqr"])] == "p"
    assert t.label[t.centroid([t.leaf[v] for v in "pqq"])] == "q"
    # counts: 2 x p and 2 x q tie; the value occurring more often wins over the generalization
    assert t.label[t.centroid([t.leaf["p"], t.leaf["q"]], np.array([2.0, 2.0]))] == "p"


def test_boundaries_on_a_hand_worked_taxonomy():
    t = _tax()
    a_b, a_t, width = t.boundaries()
    # every leaf is at depth 4; marginality: 1 sibling at log2(1.4), 2 cousins at log2(5/3) or
    # none, the other branch at log2(13/7); High School leaves have 4 leaves across the top
    assert t.label[a_b] == "HS-grad"
    assert t.label[a_t] == "Bachelors"
    assert width == pytest.approx(math.log2(13 / 7))


# -- properties and brute force on random taxonomies -----------------------------------------------

@settings(max_examples=60, deadline=None)
@given(ref.taxonomies(), st.data())
def test_distances_match_sets_and_are_a_metric(rows, data):
    t = _tax(rows)
    leaf = ref.leaves(rows)
    names = list(leaf)
    for a in names:
        for b in names:
            want = ref.delta(leaf[a], leaf[b])
            assert t.distance(t.leaf[a], t.leaf[b]) == pytest.approx(want, rel=1e-15)
    concepts = np.arange(len(t))
    by_runs = t.common_with_all(concepts)  # the depth-first runs give the same shared ancestors
    assert (by_runs == t.common(concepts[:, None], concepts[None, :])).all()
    named = [a for a in concepts if t.label[a] is not None]  # NULL has no path of labels
    assert all(by_runs[a, b] == len(ref.phi(_key(t, a)) & ref.phi(_key(t, b)))
               for a in named for b in named)
    d = t.distances(concepts[:, None], concepts[None, :])
    assert np.all((d >= 0) & (d <= 1)) and np.allclose(d, d.T) and np.all(np.diag(d) == 0)
    assert np.all(d[d.nonzero()] > 0) and np.count_nonzero(d) == len(t) * (len(t) - 1)
    # d(a, b) <= d(a, c) + d(c, b), indexed [a, b, c]
    assert np.all(d[:, :, None] <= d[:, None, :] + d.T[None, :, :] + 1e-12)


@settings(max_examples=80, deadline=None)
@given(ref.taxonomies(), st.data())
def test_centroid_and_boundaries_match_brute_force(rows, data):
    t = _tax(rows)
    leaf = ref.leaves(rows)
    picks = data.draw(st.lists(st.sampled_from(list(leaf)), min_size=1, max_size=9))
    got = t.centroid([t.leaf[v] for v in picks])
    want = ref.centroid([leaf[v] for v in picks], ref.concept_order(rows))
    assert tuple(t.label[i] for i in t.path(got)) == want
    assert t.boundaries()[2] == pytest.approx(ref.width(rows), rel=1e-12)


@settings(max_examples=60, deadline=None)
@given(ref.taxonomies(), st.data())
def test_marginality_over_the_tree_equals_pairwise_sums(rows, data):
    t = _tax(rows)
    weights = np.array(data.draw(st.lists(st.integers(0, 5), min_size=len(t), max_size=len(t))),
                       dtype=float)
    pairwise = t.marginality(np.arange(len(t)), np.arange(len(t)), weights)
    assert t.marginality_all(weights) == pytest.approx(pairwise, rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_centroid_of_a_large_sample_matches_brute_force(seed):
    """Enough distinct values for the sums over the tree to decide (see ``_DIRECT_PAIRS``)."""
    rng = np.random.default_rng(seed)
    rows = [(f"v{i}", f"g{i % 9}", f"h{i % 9 % 3}", "*") for i in range(120)]
    t = _tax(rows)
    picks = [f"v{i}" for i in rng.integers(0, 120, 150)]
    sample = [t.leaf[v] for v in picks]
    assert len(t.candidates(np.array(sample))) * len(sample) > semantic._DIRECT_PAIRS
    want = ref.centroid([ref.leaves(rows)[v] for v in picks], ref.concept_order(rows))
    assert tuple(t.label[i] for i in t.path(t.centroid(sample))) == want


# -- nominal_centroid on columns -------------------------------------------------------------------

def _column(values, hierarchy=None, rows=None):
    uniq = list(dict.fromkeys(values))
    return NominalColumn(np.array([uniq.index(v) for v in values], dtype=np.int64), tuple(uniq),
                         hierarchy)


def test_nominal_centroid_with_a_hierarchy_returns_values_or_labels():
    h = TableHierarchy([list(r) for r in EDUCATION])
    col = _column(["Masters", "Doctorate", "Bachelors", "HS-grad", "Masters"], h)
    assert nominal_centroid(col, np.array([0, 1, 4])) == "Masters"
    assert nominal_centroid(col, np.array([0, 1])) == "Masters"  # a tie: first in the hierarchy
    four = _column(["9th", "10th", "11th", "12th"], TableHierarchy(
        [[v, "High School", "*"] for v in ("9th", "10th", "11th", "12th")]))
    assert nominal_centroid(four, np.arange(4)) == "High School"
    assert nominal_centroid(four, np.array([True, True, False, False])) == "9th"


def test_mode_without_a_hierarchy_with_ties_and_null():
    col = _column(["b", "a", "a", "b", None, None, None])
    assert nominal_centroid(col, np.arange(4)) == "b"  # tie: the first value of the column's order
    assert nominal_centroid(col, np.arange(7)) is None  # NULL is a value like any other
    space = NominalSpace(col)
    assert space.distances_from(0).tolist() == [0.0, 1.0, 1.0] and space.width == 1.0


def test_null_with_a_hierarchy_is_far_from_every_value_unless_listed():
    h = TableHierarchy([["a", "x", "*"], ["b", "x", "*"]])
    space = NominalSpace(_column(["a", None, "b"], h), "attr")
    null = space.point_of_code[1]
    assert space.distances_from(null).tolist() == [1.0, 0.0, 1.0]
    listed = TableHierarchy([["a", "x", "*"], ["b", "x", "*"], ["?", "?", "*"]], null_leaf="?")
    space = NominalSpace(_column(["a", None, "b"], listed), "attr")
    assert space.value(space.point_of_code[1]) is None
    assert space.distances_from(space.point_of_code[1])[0] == pytest.approx(math.log2(1 + 3 / 4))
    assert nominal_centroid(_column([None, None, "a"], h), np.arange(3)) is None


def test_values_are_matched_as_text_and_builders_are_evaluated():
    h = TableHierarchy([["1", "low", "*"], ["2", "low", "*"], ["9", "high", "*"]])
    assert nominal_centroid(_column([1, 2, 2], h), np.arange(3)) == 2
    zips = _column(["47677", "47602", "47678", "47605", None], MaskHierarchy(2))
    space = NominalSpace(zips, "zip")
    # 476** -> {4767* -> 47677, 47678; 4760* -> 47602, 47605}: a leaf is least marginal
    assert space.value(space.centroid(zips.codes[:4])) == "47677"
    assert space.taxonomy.label[space.taxonomy.path(space.point_of_code[0])[0]] == "476**"
    assert nominal_centroid(zips, np.array([0, 2])) == "47677"
    assert space.distances_from(space.point_of_code[0])[2] == pytest.approx(math.log2(1 + 2 / 4))


def test_a_value_missing_from_the_hierarchy_is_named():
    h = TableHierarchy([["a", "x", "*"], ["b", "x", "*"]])
    with pytest.raises(HierarchyError, match=r"attribute 'job'.*'c; DROP TABLE x'"):
        NominalSpace(_column(["a", "c; DROP TABLE x", "b"], h), "job")
    with pytest.raises(SpecError, match="empty group"):
        nominal_centroid(_column(["a", "b"], h), np.array([], dtype=np.int64))


def test_a_builder_hierarchy_that_cannot_take_the_values_is_named():
    from sqlanon.domain.hierarchy import IntervalHierarchy

    col = _column(["abc", "x"], IntervalHierarchy(widths=(10, 20)))
    with pytest.raises(HierarchyError,
                       match=r"attributes\.age\.hierarchy: attribute 'age'.*intervals"):
        NominalSpace(col, "age")


def test_unicode_and_quotes_in_labels():
    rows = [["café \"x\"", "l'été", "*"], ["naïve", "l'été", "*"], ["日本", "アジア", "*"]]
    col = _column(["café \"x\"", "naïve", "日本", "naïve"], TableHierarchy(rows))
    assert nominal_centroid(col, np.arange(4)) == "naïve"
    assert nominal_centroid(col, np.array([0, 1])) == "café \"x\""


# -- ordinal ---------------------------------------------------------------------------------------

def test_ordinal_ranks_follow_the_declared_order_then_sorted_values():
    ranks, domain = ordinal_ranks(["high", "low", "mid", "low"], ("low", "mid", "high"))
    assert ranks.tolist() == [3, 1, 2, 1] and domain == ("low", "mid", "high")
    ranks, domain = ordinal_ranks(["3", 1, 2], (1, 2, 3))  # matched as text when not equal
    assert ranks.tolist() == [3, 1, 2]
    ranks, domain = ordinal_ranks([40, 10, 25, 10])
    assert ranks.tolist() == [3, 1, 2, 1] and domain == (10, 25, 40)


def test_ordinal_bad_input():
    with pytest.raises(SpecError, match=r"'grade'.*'top'.*not in its order"):
        ordinal_ranks(["low", "top"], ("low", "high"), name="grade")
    with pytest.raises(SpecError, match="'grade' has NULL"):
        ordinal_ranks(["low", None], ("low", "high"), name="grade")
    with pytest.raises(SpecError, match="cannot be sorted"):
        ordinal_ranks(["low", 3], name="grade")


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 6), min_size=1, max_size=15))
def test_ordinal_centroid_is_the_lower_median(values):
    ranks, domain = ordinal_ranks(values)
    got = ordinal_centroid(ranks, np.arange(len(values)), domain)
    ordered = sorted(values)
    assert got == ordered[(len(values) - 1) // 2]
    below = sum(v < got for v in values)
    above = sum(v > got for v in values)
    assert below < (len(values) + 1) / 2 and above <= len(values) / 2


# -- the registry's hooks --------------------------------------------------------------------------

def test_registered_algorithm_and_centroid():
    from sqlanon.methods.microaggregation.algorithms.mdav_mixed import mdav_mixed
    from sqlanon.methods.microaggregation.algorithms.registry import get_algorithm, traits
    from sqlanon.methods.microaggregation.distance.centroids import get_centroid

    assert get_algorithm("mdav_mixed") is mdav_mixed and traits("mdav_mixed").nominal
    assert get_centroid("marginality") is marginality_centroid


def test_group_centroids_at_once_equal_one_by_one():
    rng = np.random.default_rng(3)
    h = TableHierarchy([list(r) for r in EDUCATION])
    values = [r[0] for r in EDUCATION]
    col = _column([values[i] for i in rng.integers(0, len(values), 200)], h)
    labels = rng.permutation(np.arange(200) % 37)
    every = nominal_centroids(col, labels)
    codes = marginality_centroid(col, labels, 37)
    t = _tax()
    leaf = ref.leaves(EDUCATION)
    for g in range(37):
        rows = np.flatnonzero(labels == g)
        assert every[g] == nominal_centroid(col, rows)
        # restricted to the column's values: brute force over the values only
        sample = [col.values[c] for c in col.codes[rows]]
        m = {v: sum(ref.delta(leaf[v], leaf[s]) for s in sample) for v in col.values}
        best = min(m.values())
        tied = [v for v in col.values if m[v] <= best + 1e-9 * max(1, best)]
        want = min(tied, key=lambda v: (-sample.count(v), t.leaf[v]))
        assert col.values[codes[g]] == want


def test_marginality_centroid_never_returns_a_generalization():
    four = _column(["9th", "10th", "11th", "12th"], TableHierarchy(
        [[v, "High School", "*"] for v in ("9th", "10th", "11th", "12th")]))
    assert nominal_centroids(four, np.zeros(4, dtype=np.int64)).tolist() == ["High School"]
    assert marginality_centroid(four, np.zeros(4, dtype=np.int64), 1).tolist() == [0]
    flat = _column(["b", "a", "a", "b", "b"])
    assert marginality_centroid(flat, np.array([0, 0, 0, 1, 1]), 2).tolist() == [1, 0]  # a, b
