"""Optimal univariate microaggregation (Hansen–Mukherjee) against brute force and individual ranking."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sqlanon.errors import SpecError
from sqlanon.methods.microaggregation.algorithms.univariate import optimal_univariate


def sse(values, groups) -> Fraction:
    """Exact SSE of integer values around their group means."""
    total = Fraction(0)
    for g in set(groups):
        members = [Fraction(v) for v, h in zip(values, groups) if h == g]
        mean = sum(members) / len(members)
        total += sum((v - mean) ** 2 for v in members)
    return total


def float_sse(values, groups) -> float:
    members: dict[int, list[float]] = {}
    for v, g in zip(values, groups):
        members.setdefault(g, []).append(v)
    total = 0.0
    for vs in members.values():
        mean = math.fsum(vs) / len(vs)
        total += math.fsum((v - mean) ** 2 for v in vs)
    return total


def compositions(n: int, k: int):
    """Every way to write n as an ordered sum of parts in k..2k-1."""
    if n == 0:
        yield []
        return
    for part in range(k, min(2 * k - 1, n) + 1):
        for rest in compositions(n - part, k):
            yield [part, *rest]


def brute_force_consecutive(values, k) -> Fraction:
    ordered = sorted(values)
    best = None
    for parts in compositions(len(ordered), k):
        groups = [i for i, p in enumerate(parts) for _ in range(p)]
        cost = sse(ordered, groups)
        best = cost if best is None or cost < best else best
    return best


def set_partitions(items):
    if not items:
        yield []
        return
    first, rest = items[0], items[1:]
    for partition in set_partitions(rest):
        yield [[first], *partition]
        for i in range(len(partition)):
            yield [*partition[:i], [first, *partition[i]], *partition[i + 1:]]


def individual_ranking_groups(values, k):
    """Plain individual ranking: sorted runs of k, the remainder joins the last run."""
    order = sorted(range(len(values)), key=lambda i: (values[i], i))
    q = len(values) // k
    groups = [0] * len(values)
    for rank, i in enumerate(order):
        groups[i] = min(rank // k, q - 1)
    return groups


def check_shape(values, groups, k):
    sizes = np.bincount(groups)
    assert sizes.min() >= k and sizes.max() <= 2 * k - 1
    # ids count up with the values, and each group is a run of the sorted values
    for g in range(len(sizes) - 1):
        assert max(v for v, h in zip(values, groups) if h == g) <= \
            min(v for v, h in zip(values, groups) if h == g + 1)


@settings(max_examples=150)
@given(st.integers(2, 4).flatmap(
    lambda k: st.tuples(st.just(k), st.lists(st.integers(-30, 30), min_size=k, max_size=13))))
def test_sse_equals_brute_force_over_consecutive_groups(case):
    k, values = case
    groups = optimal_univariate(values, k)
    check_shape(values, groups, k)
    assert sse(values, groups.tolist()) == brute_force_consecutive(values, k)


@settings(max_examples=40)
@given(st.integers(2, 3).flatmap(
    lambda k: st.tuples(st.just(k), st.lists(st.integers(0, 50), min_size=k, max_size=8))))
def test_no_partition_of_any_shape_does_better(case):
    # Hansen–Mukherjee: some optimum groups sorted neighbours, in groups of at most 2k-1. Check it
    # against every set partition whose groups hold >= k records, of any size and membership.
    k, values = case
    best = min(sse(values, [next(g for g, block in enumerate(p) if i in block) for i in range(len(values))])
               for p in set_partitions(list(range(len(values)))) if min(map(len, p)) >= k)
    assert sse(values, optimal_univariate(values, k).tolist()) == best


@settings(max_examples=100)
@given(st.integers(2, 6).flatmap(lambda k: st.tuples(st.just(k), st.lists(
    st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False), min_size=k, max_size=300))))
def test_never_worse_than_individual_ranking(case):
    k, values = case
    groups = optimal_univariate(values, k)
    check_shape(values, groups, k)
    ranking = float_sse(values, individual_ranking_groups(values, k))
    assert float_sse(values, groups.tolist()) <= ranking * (1 + 1e-9) + 1e-9


def test_lemma_10_1_values_and_the_docstring_case():
    # Domingo-Ferrer et al. 2016, Lemma 10.1 example: 1..10, k = 3 has SSE 9 (3 + 3 + 4 values).
    values = list(range(1, 11))
    groups = optimal_univariate(values, 3)
    assert sse(values, groups.tolist()) == 9
    assert sorted(np.bincount(groups).tolist()) == [3, 3, 4]
    # 1, 2, 3, 4 | 20, 21, 22: SSE 5 + 2 by hand; individual ranking's 1, 2, 3 | 4, 20, 21, 22 costs 220.75
    values = [22, 1, 20, 3, 4, 2, 21]
    assert optimal_univariate(values, 3).tolist() == [1, 0, 1, 0, 0, 0, 1]
    assert sse(values, individual_ranking_groups(values, 3)) == Fraction(88300, 400)


def test_ids_follow_the_records():
    rng = np.random.default_rng(7)
    values = rng.permutation(200).astype(float) ** 1.5
    groups = optimal_univariate(values, 4)
    perm = rng.permutation(200)
    assert optimal_univariate(values[perm], 4).tolist() == groups[perm].tolist()
    assert groups.dtype == np.int64 and groups[np.argmin(values)] == 0


def test_every_group_size_from_k_to_2k_minus_1_can_be_optimal():
    # Tight clusters of s values far apart: the optimum keeps each cluster whole.
    for k in (2, 3, 5):
        for s in range(k, 2 * k):
            values = [1000 * c + i for c in range(3) for i in range(s)]
            sizes = np.bincount(optimal_univariate(values, k))
            assert sizes.tolist() == [s, s, s]


def test_one_group_when_fewer_than_2k_values():
    assert optimal_univariate([5, 1, 3, 2, 4], 3).tolist() == [0] * 5


@pytest.mark.parametrize(("values", "k", "message"), [
    ([1, 2, 3], 1, r"k must be an integer >= 2, got 1"),
    ([1, 2, 3], 2.0, r"k must be an integer >= 2, got 2.0"),
    ([1, 2, 3], True, r"k must be an integer >= 2, got True"),
    ([1, 2], 3, r"2 values cannot form a group of k = 3"),
    ([1.0, float("nan"), 3.0], 2, r"values\[1\] is nan; only finite numbers"),
    ([1.0, 2.0, float("inf")], 2, r"values\[2\] is inf"),
    ([[1, 2], [3, 4]], 2, r"one-dimensional, got shape \(2, 2\)"),
    (["a", "b"], 2, r"values must be numbers"),
])
def test_bad_input_is_named(values, k, message):
    with pytest.raises(SpecError, match=message):
        optimal_univariate(values, k)


def test_large_input_is_fast_enough():
    values = np.random.default_rng(1).normal(size=60_000)
    groups = optimal_univariate(values, 5)
    assert np.bincount(groups).min() >= 5
    assert float_sse(values.tolist(), groups.tolist()) <= \
        float_sse(values.tolist(), individual_ranking_groups(values.tolist(), 5))


def test_brute_force_helpers_are_complete():
    # the enumerations the tests rely on: compositions of 7 into parts 3..5 are 3+4 and 4+3;
    # set partitions of 4 items number Bell(4) = 15
    assert sorted(compositions(7, 3)) == [[3, 4], [4, 3]]
    assert sum(1 for _ in set_partitions([1, 2, 3, 4])) == 15
    assert list(itertools.islice(compositions(0, 2), 2)) == [[]]
