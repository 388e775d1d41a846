"""t-closeness through microaggregation (Database Anonymization, 2016, chapter 7).

Every algorithm's output is loaded into DuckDB and verified by sqlanon's t-closeness and k-anonymity
checkers in SQL; the EMD code is compared with a plain numpy EMD; the book's propositions are checked
against brute force (digest of seed 000, sections 4.5 and 4.6).
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sqlanon.domain.models.k_anonymity import KAnonymity
from sqlanon.domain.models.t_closeness import TCloseness
from sqlanon.errors import SpecError
from sqlanon.methods.microaggregation.algorithms.mdav import mdav as mdav_labels
from sqlanon.methods.microaggregation.algorithms.mdav import mdav_groups
from sqlanon.methods.microaggregation.algorithms.registry import get_algorithm, traits
from sqlanon.methods.microaggregation.algorithms.tcloseness import (
    closeness_first_groups,
    closeness_k,
    kanonymity_first_groups,
    merge_until_close,
    size_for_t,
    subset_sizes,
    tcloseness_kfirst,
    tcloseness_merge,
    tcloseness_tfirst,
)
from sqlanon.methods.microaggregation.distance.emd import ClusterEMD, confidential_ranks
from sqlanon.methods.microaggregation.distance.qi_space import NumericSpace, scaled
from sqlanon.methods.microaggregation.records import NominalColumn, Records
from tests.conftest import ADULT
from tests.methods.microaggregation.checked import check_groups, check_masked

ALGORITHMS = {"merge": tcloseness_merge, "kfirst": tcloseness_kfirst, "tfirst": tcloseness_tfirst}
T_GRID = (0.05, 0.1, 0.2, 0.3)
EDUCATION = ("Preschool", "1st-4th", "5th-6th", "7th-8th", "9th", "10th", "11th", "12th", "HS-grad",
             "Some-college", "Assoc-voc", "Assoc-acdm", "Bachelors", "Masters", "Prof-school",
             "Doctorate")


def plain_emd(values: np.ndarray, rows: np.ndarray, distance: str) -> float:
    """EMD of ``values[rows]`` to ``values`` from the definitions (numpy, no shared code)."""
    domain = np.unique(values)
    p = np.array([np.mean(values == v) for v in domain])
    q = np.array([np.mean(values[rows] == v) for v in domain])
    if distance == "equal":
        return 0.5 * float(np.abs(p - q).sum())
    if len(domain) == 1:
        return 0.0
    return float(np.abs(np.cumsum(p - q)).sum() / (len(domain) - 1))


def groups_of(labels: np.ndarray) -> list[np.ndarray]:
    return [np.flatnonzero(labels == g) for g in range(labels.max() + 1)]


# --- the book's propositions and expressions (digest §4.5, §4.6) -----------------------------------

PROP_TABLE = [  # n, k, min EMD (median picks), (7.1), max EMD (subset minima) = (7.2)
    (12, 4, 0.060606, 0.060606, 0.090909),
    (15, 3, 0.085714, 0.085714, 0.142857),
    (20, 4, 0.063158, 0.063158, 0.105263),
    (12, 3, 0.090909, 0.085227, 0.136364),
    (100, 5, 0.050505, 0.050379, 0.095960),
    (1080, 10, 0.025023, 0.025021, 0.049583),
]


@pytest.mark.parametrize("n, k, median_emd, bound71, bound72", PROP_TABLE)
def test_propositions_7_1_and_7_2(n, k, median_emd, bound71, bound72):
    emd = ClusterEMD(np.arange(n), n)
    size = n // k
    medians = np.array([i * size + (size + 1) // 2 - 1 for i in range(k)])
    minima = np.arange(k) * size
    assert emd.emd(medians) == pytest.approx(median_emd, abs=5e-7)
    assert emd.emd(minima) == pytest.approx(bound72, abs=5e-7)
    assert (n + k) * (n - k) / (4 * n * (n - 1) * k) == pytest.approx(bound71, abs=5e-7)
    assert emd.emd(minima) == pytest.approx((n - k) / (2 * (n - 1) * k), rel=1e-12)
    assert plain_emd(np.arange(n), minima, "ordered") == pytest.approx(emd.emd(minima), abs=1e-12)


@pytest.mark.parametrize("n, k", [(12, 3), (16, 4), (12, 2), (12, 4), (9, 3), (10, 2)])
def test_proposition_7_1_exhaustive(n, k):
    """Exact minimum over all k-subsets: (7.1) when n/k is odd, n/(4(n−1)k) when it is even (E6)."""
    emd = ClusterEMD(np.arange(n), n)
    best = min(emd.numerator(np.array(c)) for c in itertools.combinations(range(n), k))
    exact = best / emd.denominator(k)
    if (n // k) % 2:
        assert exact == pytest.approx((n + k) * (n - k) / (4 * n * (n - 1) * k), rel=1e-12)
    else:
        assert exact == pytest.approx(n / (4 * (n - 1) * k), rel=1e-12)


@pytest.mark.parametrize("n, k", [(12, 3), (12, 4), (15, 3), (8, 2)])
def test_proposition_7_2_is_the_maximum_over_one_row_per_subset(n, k):
    emd = ClusterEMD(np.arange(n), n)
    size = n // k
    subsets = [range(i * size, (i + 1) * size) for i in range(k)]
    worst = max(emd.emd(np.array(c)) for c in itertools.product(*subsets))
    assert worst == pytest.approx((n - k) / (2 * (n - 1) * k), rel=1e-12)


@pytest.mark.parametrize("n, expected", [(1080, (48, 10, 5, 2)), (834, (48, 10, 5, 2)),
                                         (4092, (50, 10, 5, 2)), (30162, (50, 10, 5, 2))])
def test_cluster_size_from_t(n, expected):
    assert tuple(size_for_t(n, t) for t in (0.01, 0.05, 0.10, 0.25)) == expected


def test_remainder_adjustment_is_the_floor_form():
    """(7.4) vs the listing (E5): 1080 with k = 7 stays 7 and 10 with k = 3 stays 3."""
    assert closeness_k(1080, 7, 1.0) == 7
    assert closeness_k(10, 3, 1.0) == 3
    for n, k in itertools.product(range(1, 60), range(1, 20)):
        if k > n:
            continue
        size = closeness_k(n, k, 1.0)
        assert size >= k and n % size <= n // size
        if n % k <= n // k:
            assert size == k


def test_extra_rows_go_to_the_central_subsets():
    assert subset_sizes(17, 5) == [3, 3, 5, 3, 3]
    assert subset_sizes(27, 4) == [6, 8, 7, 6]
    assert subset_sizes(12, 4) == [3, 3, 3, 3]


def test_tfirst_on_distinct_values_meets_proposition_7_2_without_merging():
    rng = np.random.default_rng(7)
    n, k = 600, 6
    x = rng.normal(size=(n, 3))
    values = rng.permutation(n).astype(float)
    t = (n - k) / (2 * (n - 1) * k)  # (7.3) gives exactly k for this t
    assert closeness_k(n, 2, t) == k
    groups = closeness_first_groups(NumericSpace(x), values.astype(np.int64), 2, t)
    emd = ClusterEMD(values.astype(np.int64), n)
    assert sorted({len(g) for g in groups}) == [k]
    assert max(emd.emd(g) for g in groups) <= t + 1e-12
    # each cluster has one row of each of the k value ranges
    for g in groups:
        assert sorted(values[g] // (n // k)) == list(range(k))


def test_tfirst_cluster_sizes_with_a_remainder():
    rng = np.random.default_rng(3)
    n = 103
    x = rng.normal(size=(n, 2))
    values = rng.permutation(n)
    groups = closeness_first_groups(NumericSpace(x), values, 5, 1.0)
    sizes = sorted(len(g) for g in groups)
    assert sum(sizes) == n and sizes.count(6) == n % 5 and set(sizes) == {5, 6}


# --- verified by the SQL checker -------------------------------------------------------------------

def _adult_frame(rows: slice) -> pd.DataFrame:
    """Rows of the real Adult file as text (the test is skipped where the file is absent)."""
    path = ADULT / "adult.csv"
    if not path.exists():
        pytest.skip(f"real data not available at {path}")
    return pd.read_csv(path, sep=";", dtype=str).iloc[rows]


def _nominal(values: pd.Series, hierarchy=None) -> NominalColumn:
    """A column coded by its sorted distinct values."""
    order = tuple(sorted(values.unique()))
    return NominalColumn(np.array([order.index(v) for v in values]), order, hierarchy)


def _age_education(frame: pd.DataFrame) -> np.ndarray:
    return np.c_[frame["age"].astype(float), [EDUCATION.index(e) + 1 for e in frame["education"]]]


@pytest.fixture(scope="module")
def adult_rows():
    frame = _adult_frame(slice(0, 2000))
    occupation = _nominal(frame["occupation"])
    records = Records(x=_age_education(frame), names=("age", "education"),
                      sensitive={"occupation": occupation})
    return records, list(frame["occupation"]), occupation.values



@pytest.mark.parametrize("t", T_GRID)
@pytest.mark.parametrize("name", ALGORITHMS)
def test_adult_occupation_is_t_close_by_the_checker(duck, adult_rows, name, t):
    records, occupation, order = adult_rows
    k = 5
    labels = ALGORITHMS[name](records, k, t=t, attribute="occupation", order=order)
    node = check_masked(duck, records.x, labels, ["age", "educa\"tion; ü"], "occupation", occupation,
                        [TCloseness("occupation", t, "ordered"), KAnonymity(k)], order=order)
    assert node.anonymous, node.models
    assert node.models[0].achieved <= t + 1e-12
    assert node.models[1].achieved >= k
    assert np.bincount(labels).min() >= k


@pytest.mark.parametrize("t", (0.2, 0.3))
@pytest.mark.parametrize("name", ALGORITHMS)
def test_adult_occupation_equal_distance(duck, adult_rows, name, t):
    records, occupation, _ = adult_rows
    labels = ALGORITHMS[name](records, 4, t=t, attribute="occupation", distance="equal")
    node = check_masked(duck, records.x, labels, ["age", "education"], "occupation", occupation,
                        [TCloseness("occupation", t, "equal"), KAnonymity(4)])
    assert node.anonymous, node.models


@pytest.fixture(scope="module")
def numeric_rows():
    rng = np.random.default_rng(42)
    n = 1000
    x = rng.normal(size=(n, 3)) * [1.0, 10.0, 100.0]
    income = np.round(np.exp(8 + 0.5 * x[:, 0] + 0.3 * rng.normal(size=n)), -1)
    return Records(x=x, names=("a", "b", "c"), sensitive={"income": income}), income


@pytest.mark.parametrize("t", T_GRID)
@pytest.mark.parametrize("name", ALGORITHMS)
def test_numeric_is_t_close_by_the_checker(duck, numeric_rows, name, t):
    records, income = numeric_rows
    k = 4
    labels = ALGORITHMS[name](records, k, t=t, attribute="income")
    node = check_masked(duck, records.x, labels, ["a", "b", "c"], "income", income,
                        [TCloseness("income", t, "ordered"), KAnonymity(k)])
    assert node.anonymous, node.models
    ranks, r = confidential_ranks(records, "income", "ordered")
    ours = max(ClusterEMD(ranks, r).emd(g) for g in groups_of(labels))
    assert node.models[0].achieved == pytest.approx(ours, abs=1e-12)


def test_tfirst_has_the_smallest_sse_on_numeric_data(numeric_rows):
    """The book's conclusion (section 7.4) on a data set where the QIs predict the attribute."""
    records, _ = numeric_rows
    x = scaled(records.x)

    def sse(labels):
        return sum(float(((x[g] - x[g].mean(axis=0)) ** 2).sum()) for g in groups_of(labels))

    results = {name: sse(fn(records, 4, t=0.1, attribute="income")) for name, fn in ALGORITHMS.items()}
    assert results["tfirst"] < results["merge"]
    assert results["tfirst"] < results["kfirst"]


# --- the algorithms' own structure -----------------------------------------------------------------

def test_merge_only_joins_whole_mdav_groups(numeric_rows):
    records, income = numeric_rows
    labels = tcloseness_merge(records, 4, t=0.2, attribute="income")
    for g in mdav_groups(records.x, 4):
        assert len(set(labels[g])) == 1
    assert labels.max() + 1 < len(mdav_groups(records.x, 4))


def test_kfirst_clusters_before_merging_have_k_rows():
    rng = np.random.default_rng(5)
    n, k = 203, 5
    x = rng.normal(size=(n, 2))
    values = rng.integers(0, 30, n)
    _, ranks = np.unique(values, return_inverse=True)
    groups = kanonymity_first_groups(NumericSpace(x), k, ClusterEMD(ranks, ranks.max() + 1), 0.15)
    sizes = [len(g) for g in groups]
    assert sum(sizes) == n and all(s == k for s in sizes[:-1]) and k <= sizes[-1] < 2 * k
    assert sorted(np.concatenate(groups).tolist()) == list(range(n))


def test_kfirst_swaps_lower_the_emd_against_plain_mdav_like_clusters():
    rng = np.random.default_rng(11)
    n, k = 300, 5
    x = rng.normal(size=(n, 2))
    values = np.round(x[:, 0] * 4).astype(int)  # the attribute follows the first QI
    _, ranks = np.unique(values, return_inverse=True)
    emd = ClusterEMD(ranks, ranks.max() + 1)
    strict = kanonymity_first_groups(NumericSpace(x), k, emd, 0.0)
    loose = kanonymity_first_groups(NumericSpace(x), k, emd, 1.0)
    assert np.mean([emd.emd(g) for g in strict]) < np.mean([emd.emd(g) for g in loose])


def test_registered_with_their_traits():
    for name, fn in ALGORITHMS.items():
        assert get_algorithm(f"tcloseness_{name}") is fn
        assert traits(f"tcloseness_{name}").sensitive


# --- properties on small random tables -------------------------------------------------------------

@st.composite
def tables(draw):
    n = draw(st.integers(1, 40))
    m = draw(st.integers(1, 3))
    x = np.array(draw(st.lists(st.lists(st.integers(-5, 5), min_size=m, max_size=m), min_size=n,
                               max_size=n)), dtype=float)
    distinct = draw(st.integers(1, 12))
    values = np.array(draw(st.lists(st.integers(0, distinct - 1), min_size=n, max_size=n)), dtype=float)
    k = draw(st.integers(1, n))
    t = draw(st.floats(0.01, 1.0))
    return x, values, k, t


@settings(max_examples=150)
@given(tables(), st.sampled_from(sorted(ALGORITHMS)), st.sampled_from(["ordered", "equal"]))
def test_property_partition_is_k_anonymous_and_t_close(table, name, distance):
    x, values, k, t = table
    records = Records(x=x, names=tuple(f"q{i}" for i in range(x.shape[1])), sensitive={"s": values})
    labels = ALGORITHMS[name](records, k, t=t, attribute="s", distance=distance)
    assert labels.shape == (len(x),) and labels.dtype == np.int64
    assert labels.min() == 0 and set(labels.tolist()) == set(range(labels.max() + 1))
    assert np.bincount(labels).min() >= k
    for g in groups_of(labels):
        assert plain_emd(values, g, distance) <= t + 1e-12


@settings(max_examples=20)
@given(tables(), st.sampled_from(sorted(ALGORITHMS)))
def test_property_checker_agrees(table, name):
    from sqlanon.engines.duckdb import DuckDBEngine

    x, values, k, t = table
    records = Records(x=x, names=tuple(f"q{i}" for i in range(x.shape[1])),
                      sensitive={"s": values})
    labels = ALGORITHMS[name](records, k, t=t, attribute="s")
    duck = DuckDBEngine()
    try:
        node = check_masked(duck, x, labels, list(records.names), "s", values,
                            [TCloseness("s", t, "ordered"), KAnonymity(k)])
    finally:
        duck.close()
    assert node.anonymous


# --- bad input -------------------------------------------------------------------------------------

def _records(n=10):
    rng = np.random.default_rng(0)
    return Records(x=rng.normal(size=(n, 2)), names=("a", "b"), sensitive={"s": rng.normal(size=n)})


@pytest.mark.parametrize("name", ALGORITHMS)
@pytest.mark.parametrize("t", [0, 0.0, -0.1, 1.5, float("nan"), "0.2", True, None])
def test_t_outside_0_1(name, t):
    with pytest.raises(SpecError, match=r"transformation\.t: t must be a number in \(0, 1\]"):
        ALGORITHMS[name](_records(), 2, t=t, attribute="s")


@pytest.mark.parametrize("name", ALGORITHMS)
def test_missing_attribute(name):
    with pytest.raises(SpecError, match=r"transformation\.attribute: confidential attribute 'salary' "
                                        r"is not among the records' sensitive attributes \(s\)"):
        ALGORITHMS[name](_records(), 2, t=0.2, attribute="salary")


@pytest.mark.parametrize("name", ALGORITHMS)
@pytest.mark.parametrize("k, message", [(11, r"k = 11 is larger than the number of rows \(10\)"),
                                        (0, "k must be >= 1"), (2.5, "k must be an integer")])
def test_bad_k(name, k, message):
    with pytest.raises(SpecError, match=message):
        ALGORITHMS[name](_records(), k, t=0.2, attribute="s")


def test_text_attribute_needs_an_order_for_the_ordered_distance():
    r = _records(4)
    text = NominalColumn(np.array([0, 1, 2, 0]), ("flu", "cold", "hiv"))
    records = Records(x=r.x, names=r.names, sensitive={"d": text})
    with pytest.raises(SpecError, match=r"transformation\.order: the ordered distance needs an order"):
        tcloseness_tfirst(records, 2, t=0.5, attribute="d")
    with pytest.raises(SpecError, match=r"1 value\(s\) of 'd' are missing from `order`"):
        tcloseness_tfirst(records, 2, t=0.5, attribute="d", order=["flu", "cold"])
    with pytest.raises(SpecError, match="unknown distance 'orderd'; use one of ordered, equal, "
                                        "hierarchical. Did you mean 'ordered'"):
        tcloseness_tfirst(records, 2, t=0.5, attribute="d", distance="orderd")
    labels = tcloseness_tfirst(records, 2, t=1.0, attribute="d", order=["cold", "flu", "hiv"])
    assert np.bincount(labels).min() >= 2


def test_missing_quasi_identifier_values_are_refused():
    r = _records(4)
    x = r.x.copy()
    x[2, 1] = np.nan
    with pytest.raises(SpecError, match="column 1 has a NaN value"):
        tcloseness_kfirst(Records(x=x, names=r.names, sensitive=r.sensitive), 2, t=0.5, attribute="s")
    with pytest.raises(SpecError, match="needs at least one quasi-identifier"):
        tcloseness_tfirst(Records(x=np.empty((4, 0)), names=(), sensitive=r.sensitive), 2, t=0.5)


@pytest.fixture(scope="module")
def adult_mixed():
    from sqlanon.domain.hierarchy import read_arx_csv

    frame = _adult_frame(slice(0, 1000))
    nominal = {q: _nominal(frame[q], read_arx_csv(ADULT / f"adult_hierarchy_{q}.csv"))
               for q in ("sex", "race", "marital-status", "workclass")}
    occupation = _nominal(frame["occupation"])
    records = Records(x=_age_education(frame), names=("age", "education"), nominal=nominal,
                      sensitive={"occupation": occupation})
    return records, list(frame["occupation"]), occupation.values


@pytest.mark.parametrize("t", (0.1, 0.2))
@pytest.mark.parametrize("name", ALGORITHMS)
def test_adult_with_nominal_quasi_identifiers_is_t_close(duck, adult_mixed, name, t):
    """Nominal QIs with their hierarchies (eq. 9.7 distance): groups checked t-close in SQL."""
    records, occupation, order = adult_mixed
    labels = ALGORITHMS[name](records, 5, t=t, order=order)
    node = check_groups(duck, labels, "occupation", occupation,
                        [TCloseness("occupation", t, "ordered"), KAnonymity(5)], order=order)
    assert node.anonymous, node.models
    assert node.classes == labels.max() + 1


def test_nominal_quasi_identifiers_shape_the_groups(adult_mixed):
    """The nominal attributes count: dropping them changes the partition."""
    records, _, order = adult_mixed
    with_nominal = tcloseness_tfirst(records, 5, t=0.2, order=order)
    numeric_only = tcloseness_tfirst(Records(x=records.x, names=records.names,
                                             sensitive=records.sensitive), 5, t=0.2, order=order)
    assert not (with_nominal == numeric_only).all()
    sex = records.nominal["sex"].codes
    mixed_pure = np.mean([len(set(sex[labels_rows])) == 1 for labels_rows in groups_of(with_nominal)])
    numeric_pure = np.mean([len(set(sex[rows])) == 1 for rows in groups_of(numeric_only)])
    assert mixed_pure > numeric_pure


def test_null_confidential_values_rank_last_as_in_the_checker(duck):
    rng = np.random.default_rng(1)
    n = 60
    x = rng.normal(size=(n, 2))
    values = rng.integers(0, 6, n).astype(float)
    values[::7] = np.nan
    records = Records(x=x, names=("a", "b"), sensitive={"s": values})
    labels = tcloseness_tfirst(records, 3, t=0.25, attribute="s")
    node = check_masked(duck, x, labels, ["a", "b"], "s", [None if np.isnan(v) else v for v in values],
                        [TCloseness("s", 0.25, "ordered"), KAnonymity(3)])
    assert node.anonymous


def test_plain_mdav_fails_the_checker(duck, numeric_rows):
    """Control: MDAV alone is not 0.05-close on this table, and the checker says so."""
    records, income = numeric_rows
    labels = mdav_labels(records.x, 4)
    node = check_masked(duck, records.x, labels, ["a", "b", "c"], "income", income,
                        [TCloseness("income", 0.05, "ordered")])
    assert not node.anonymous


def test_attribute_defaults_to_the_only_confidential_one():
    r = _records(30)
    assert (tcloseness_tfirst(r, 3, t=0.3) == tcloseness_tfirst(r, 3, t=0.3, attribute="s")).all()
    two = Records(x=r.x, names=r.names, sensitive={"s": r.sensitive["s"], "u": r.sensitive["s"]})
    with pytest.raises(SpecError, match=r"several confidential attributes \(s, u\); name the one"):
        tcloseness_merge(two, 3, t=0.3)
    with pytest.raises(SpecError, match="no confidential attribute: declare one attribute with role"):
        tcloseness_kfirst(Records(x=r.x, names=r.names), 3, t=0.3)


@pytest.mark.parametrize("algorithm", ["tcloseness_merge", "tcloseness_kfirst", "tcloseness_tfirst"])
def test_spec_through_the_pipeline_is_t_close(duck, algorithm):
    """A spec with ``method: microaggregation`` writes a table that the SQL checker finds t-close."""
    import sqlanon as sa
    from sqlanon.domain.hierarchy import IntervalHierarchy
    from sqlanon.methods.generalization.evaluator import Evaluator, Problem
    from sqlanon.sql.nodes import table

    rng = np.random.default_rng(9)
    n = 400
    frame = pd.DataFrame({"id": range(n), "âge": rng.integers(18, 90, n),
                          "hours": rng.integers(1, 80, n)})
    frame["in'come"] = (frame["âge"] * 100 + rng.normal(0, 800, n)).round(-2)
    duck.con.register("frame", frame)
    duck.con.execute("CREATE TABLE people AS SELECT * FROM frame")
    spec = sa.spec_from_dict({
        "source": {"table": "people"},
        "attributes": {"âge": {"role": "quasi_identifier"}, "hours": {"role": "quasi_identifier"},
                       "in'come": {"role": "sensitive"}, "id": {"role": "insensitive"}},
        "privacy": [{"k_anonymity": {"k": 3}}],
        "transformation": {"method": "microaggregation", "algorithm": algorithm, "k": 3, "t": 0.15,
                           "key": ["id"]},
        "output": {"mode": "table", "name": "people_anon"}})
    sa.apply(spec, engine=duck)
    p = Problem(duck, table("people_anon"), ["âge", "hours"],
                {"âge": IntervalHierarchy((1,)), "hours": IntervalHierarchy((1,))}, ["in'come"],
                [TCloseness("in'come", 0.15, "ordered"), KAnonymity(3)])
    with Evaluator(p) as ev:
        node = ev.check({"âge": 0, "hours": 0})
    assert node.anonymous and node.rows == n, node.models


@pytest.mark.parametrize("name", ALGORITHMS)
def test_hostile_confidential_values_with_an_order(duck, name):
    """Text values with quotes, semicolons and unicode, ordered by an `order` list, checked in SQL."""
    order = ["low'; DROP TABLE t; --", 'mid "quoted"', "hoch ✓ größe", "top\\slash"]
    rng = np.random.default_rng(4)
    n = 120
    x = rng.normal(size=(n, 2))
    codes = np.clip((x[:, 0] + 2).astype(int), 0, 3)
    values = tuple(order[::-1])  # codes index a list in another order than the ranking
    column = NominalColumn(np.array([values.index(order[c]) for c in codes]), values)
    records = Records(x=x, names=("a", "b"), sensitive={"d": column})
    labels = ALGORITHMS[name](records, 3, t=0.15, order=order)
    node = check_masked(duck, x, labels, ["a", "b"], "d", [order[c] for c in codes],
                        [TCloseness("d", 0.15, "ordered"), KAnonymity(3)], order=order)
    assert node.anonymous, node.models


# --- the implementation against a line-by-line transcription of the book's listings ----------------

@settings(max_examples=60)
@given(st.integers(2, 28), st.integers(1, 6), st.integers(1, 6), st.floats(0.02, 1.0),
       st.sampled_from(["ordered", "equal"]), st.integers(0, 2**16))
def test_algorithms_equal_their_transcription(n, k, distinct, t, distance, seed):
    from tests.methods.microaggregation import tcloseness_reference as ref

    k = min(k, n)
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 2))
    values = rng.integers(0, distinct, n)
    space = NumericSpace(x)
    _, ranks = np.unique(values, return_inverse=True)
    emd = ClusterEMD(ranks, int(ranks.max()) + 1, distance)

    def same(a, b):
        assert sorted(map(sorted, (list(map(int, g)) for g in a))) == sorted(map(sorted, b))

    kfirst = kanonymity_first_groups(space, k, emd, t)
    assert [list(map(int, g)) for g in kfirst] == ref.algorithm_5(space, values.tolist(), k, t, distance)
    tfirst = closeness_first_groups(space, ranks, k, t)
    assert [list(map(int, g)) for g in tfirst] == ref.algorithm_6(space, ranks.tolist(),
                                                                   closeness_k(n, k, t))
    same(merge_until_close(space, kfirst, emd, t),
         ref.algorithm_4(space, values.tolist(), [list(map(int, g)) for g in kfirst], t, distance))
    same(merge_until_close(space, mdav_groups(x, k), emd, t),
         ref.algorithm_4(space, values.tolist(), [list(map(int, g)) for g in mdav_groups(x, k)], t,
                         distance))


def test_spec_with_nominal_quasi_identifiers_through_the_pipeline(duck):
    """Adult with nominal QIs and their hierarchies, age confidential: the output is 0.2-close."""
    import sqlanon as sa
    from sqlanon.domain.hierarchy import TableHierarchy
    from sqlanon.methods.generalization.evaluator import Evaluator, Problem
    from sqlanon.sql.nodes import table

    path = ADULT / "adult.csv"
    if not path.exists():
        pytest.skip(f"real data not available at {path}")
    duck.con.execute("CREATE TABLE adult AS SELECT row_number() OVER () AS id, * FROM "
                     "read_csv(?, delim=';', header=true) LIMIT 2000", [str(path)])
    qis = ["sex", "race", "marital-status"]
    spec = sa.spec_from_dict({
        "source": {"table": "adult"},
        "attributes": {**{q: {"role": "quasi_identifier",
                              "hierarchy": {"csv": str(ADULT / f"adult_hierarchy_{q}.csv")}}
                          for q in qis},
                       "age": {"role": "sensitive"}, "id": {"role": "insensitive"}},
        "privacy": [{"k_anonymity": {"k": 5}}],
        "transformation": {"method": "microaggregation", "algorithm": "tcloseness_tfirst", "k": 5,
                           "t": 0.2, "key": ["id"]},
        "output": {"mode": "table", "name": "adult_anon"}})
    sa.apply(spec, engine=duck)
    released = {q: [r[0] for r in duck.con.execute(f'SELECT DISTINCT "{q}" FROM adult_anon').fetchall()]
                for q in qis}
    p = Problem(duck, table("adult_anon"), qis,
                {q: TableHierarchy([[v, "*"] for v in released[q]]) for q in qis}, ["age"],
                [TCloseness("age", 0.2, "ordered"), KAnonymity(5)])
    with Evaluator(p) as ev:
        node = ev.check({q: 0 for q in qis})
    assert node.anonymous and node.rows == 2000, node.models


@pytest.fixture(scope="module")
def adult_education():
    from sqlanon.domain.hierarchy import read_arx_csv

    frame = _adult_frame(slice(5000, 6000))
    nominal = {q: _nominal(frame[q], read_arx_csv(ADULT / f"adult_hierarchy_{q}.csv"))
               for q in ("sex", "race", "marital-status")}
    records = Records(x=frame[["age"]].astype(float).to_numpy(), names=("age",), nominal=nominal,
                      sensitive={"education": _nominal(frame["education"])})
    return records, list(frame["education"])


@pytest.mark.parametrize("t", T_GRID)
@pytest.mark.parametrize("name", ALGORITHMS)
def test_adult_education_ordinal_is_t_close(duck, adult_education, name, t):
    """Education confidential in its own order (Preschool .. Doctorate); age and nominal QIs."""
    records, education = adult_education
    labels = ALGORITHMS[name](records, 4, t=t, order=EDUCATION)
    node = check_groups(duck, labels, "education", education,
                        [TCloseness("education", t, "ordered"), KAnonymity(4)], order=EDUCATION)
    assert node.anonymous, node.models


# --- the hierarchical ground distance --------------------------------------------------------------

@pytest.fixture(scope="module")
def adult_occupation_tree():
    from sqlanon.domain.hierarchy import read_arx_csv

    frame = _adult_frame(slice(10000, 11500))
    tree = read_arx_csv(ADULT / "adult_hierarchy_occupation.csv")
    records = Records(x=_age_education(frame), names=("age", "education"),
                      sensitive={"occupation": _nominal(frame["occupation"], tree)})
    return records, list(frame["occupation"]), tree


def test_hierarchical_emd_equals_the_checker_per_class(duck, adult_occupation_tree):
    from sqlanon.domain.hierarchy import IntervalHierarchy
    from sqlanon.domain.models.distance_statistics import HierarchicalDistance
    from sqlanon.methods.generalization.evaluator import Evaluator, Problem
    from sqlanon.methods.microaggregation.distance.emd_hierarchical import hierarchical_emd
    from sqlanon.sql.nodes import table
    from tests.domain.models.conftest import class_rows

    records, occupation, tree = adult_occupation_tree
    emd = hierarchical_emd(records, "occupation")
    labels = np.random.default_rng(0).integers(0, 30, records.n)
    duck.con.register("frame", pd.DataFrame({"g": labels, "occupation": occupation}))
    duck.con.execute("CREATE TABLE partition AS SELECT * FROM frame")
    p = Problem(duck, table("partition"), ["g"], {"g": IntervalHierarchy((1,))}, ["occupation"],
                [TCloseness("occupation", 1.0, "hierarchical")],
                sensitive_hierarchies={"occupation": tree})
    with Evaluator(p) as ev:
        rows = class_rows(duck, ev.check({"g": 0}), ["g"])
    column = HierarchicalDistance("occupation").column
    assert len(rows) == 30
    for (g,), row in rows.items():
        assert emd.emd(np.flatnonzero(labels == g)) == pytest.approx(row[column], abs=1e-12)
    cluster, candidates = np.flatnonzero(labels == 3)[:6], np.flatnonzero(labels == 5)[:15]
    deltas = emd.swap_deltas(cluster, candidates)
    for a, y in enumerate(candidates):
        for b in range(len(cluster)):
            swapped = np.r_[cluster[:b], y, cluster[b + 1:]]
            assert deltas[a, b] == emd.numerator(swapped) - emd.numerator(cluster)


@pytest.mark.parametrize("t", (0.1, 0.2))
@pytest.mark.parametrize("name", ALGORITHMS)
def test_adult_occupation_hierarchical_is_t_close(duck, adult_occupation_tree, name, t):
    records, occupation, tree = adult_occupation_tree
    labels = ALGORITHMS[name](records, 5, t=t, distance="hierarchical")
    node = check_groups(duck, labels, "occupation", occupation,
                        [TCloseness("occupation", t, "hierarchical"), KAnonymity(5)], hierarchy=tree)
    assert node.anonymous, node.models


def test_hierarchical_distance_needs_a_hierarchy_covering_the_values():
    from sqlanon.domain.hierarchy import TableHierarchy
    from sqlanon.errors import HierarchyError

    r = _records(6)
    flat = NominalColumn(np.array([0, 1, 2, 0, 1, 2]), ("flu", "cold", "hiv"))
    with pytest.raises(SpecError, match=r"attributes\.d\.hierarchy: the hierarchical distance needs a "
                                        r"hierarchy for 'd'"):
        tcloseness_merge(Records(x=r.x, names=r.names, sensitive={"d": flat}), 2, t=0.5,
                         distance="hierarchical")
    partial = TableHierarchy([["flu", "resp", "*"], ["cold", "resp", "*"]])
    column = NominalColumn(flat.codes, flat.values, partial)
    with pytest.raises(HierarchyError, match="a value of sensitive attribute 'd' is missing from its"):
        tcloseness_tfirst(Records(x=r.x, names=r.names, sensitive={"d": column}), 2, t=0.5,
                          distance="hierarchical")


@settings(max_examples=15)
@given(tables(), st.sampled_from(sorted(ALGORITHMS)), st.integers(1, 4))
def test_property_hierarchical_checker_agrees(table, name, fan_out):
    from sqlanon.domain.hierarchy import TableHierarchy
    from sqlanon.engines.duckdb import DuckDBEngine

    x, values, k, t = table
    labels_of_values = [f"v'{int(v)};" for v in values]
    distinct = sorted(set(labels_of_values))
    tree = TableHierarchy([[v, f"g{i // fan_out}", "*"] for i, v in enumerate(distinct)])
    codes = np.array([distinct.index(v) for v in labels_of_values])
    records = Records(x=x, names=tuple(f"q{i}" for i in range(x.shape[1])),
                      sensitive={"s": NominalColumn(codes, tuple(distinct), tree)})
    labels = ALGORITHMS[name](records, k, t=t, distance="hierarchical")
    assert np.bincount(labels).min() >= k
    duck = DuckDBEngine()
    try:
        node = check_groups(duck, labels, "s", labels_of_values,
                            [TCloseness("s", t, "hierarchical"), KAnonymity(k)], hierarchy=tree)
    finally:
        duck.close()
    assert node.anonymous


@pytest.mark.parametrize("distance", ["ordered", "equal"])
def test_spec_order_and_model_distance_reach_the_algorithm(duck, distance):
    """A text confidential attribute declared with an `order`, and the spec's t-closeness model's
    distance: the pipeline passes both to the algorithm, and the release passes that model."""
    import sqlanon as sa
    from sqlanon.domain.hierarchy import IntervalHierarchy
    from sqlanon.methods.generalization.evaluator import Evaluator, Problem
    from sqlanon.sql.nodes import table

    levels = ["low'; --", "médium", 'high "x"']
    rng = np.random.default_rng(11)
    n = 300
    frame = pd.DataFrame({"id": range(n), "age": rng.integers(18, 90, n)})
    frame["band"] = [levels[min(2, a // 30)] for a in frame["age"]]  # tied to the QI: not t-close
    duck.con.register("frame", frame)
    duck.con.execute("CREATE TABLE bands AS SELECT * FROM frame")
    spec = sa.spec_from_dict({
        "source": {"table": "bands"},
        "attributes": {"age": {"role": "quasi_identifier"}, "id": {"role": "insensitive"},
                       "band": {"role": "sensitive", "type": "ordinal", "order": levels}},
        "privacy": [{"k_anonymity": {"k": 3}},
                    {"t_closeness": {"attribute": "band", "t": 0.1, "distance": distance}}],
        "transformation": {"method": "microaggregation", "algorithm": "tcloseness_tfirst", "k": 3,
                           "t": 0.1, "key": ["id"]},
        "output": {"mode": "table", "name": "bands_anon"}})
    sa.apply(spec, engine=duck)
    model = TCloseness("band", 0.1, distance)
    p = Problem(duck, table("bands_anon"), ["age"], {"age": IntervalHierarchy((1,))}, ["band"],
                [model, KAnonymity(3)], value_order={"band": list(levels)})
    with Evaluator(p) as ev:
        node = ev.check({"age": 0})
    assert node.anonymous and node.rows == n, node.models
