"""The m-invariance algorithm against the definition, by brute force, on the paper's example and on
generated sequences of releases with inserts and deletes."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sqlanon.methods.republication.algorithm import (
    COUNTERFEIT,
    ChangedValue,
    NotEnoughValues,
    Partition,
    m_invariant,
)
from tests.methods.republication.oracle import candidates, m_unique, signatures


def as_release(partition: Partition, keys: list[str]) -> tuple[dict, list]:
    """person -> (group, value), and the counterfeits as (group, value)."""
    release, fakes = {}, []
    for number, group in enumerate(partition.groups):
        for value, row in zip(group.signature, group.members):
            if row == COUNTERFEIT:
                fakes.append((number, value))
            else:
                release[keys[row]] = (number, value)
    return release, fakes


def publish(people: dict[str, tuple[int, str]], m: int, earlier: dict) -> tuple[Partition, dict, list]:
    keys = sorted(people)
    ages = np.array([[float(people[k][0])] for k in keys])
    partition = m_invariant(keys, [people[k][1] for k in keys], ages, m, earlier)
    release, fakes = as_release(partition, keys)
    return partition, release, fakes


# The paper's running example (Section 1) as its narrative tells it: a hospital's patients, published
# twice; between the releases Alice (bronchitis, Bob's neighbour in age) leaves. The ages and the other
# patients' diagnoses here are illustrative, not the paper's table.
FIRST = {"Bob": (21, "dyspepsia"), "Alice": (22, "bronchitis"), "Andy": (24, "flu"),
         "David": (23, "gastritis"), "Gary": (41, "flu"), "Helen": (36, "gastritis"),
         "Jane": (37, "dyspepsia"), "Ken": (40, "flu"), "Linda": (43, "gastritis"),
         "Paul": (52, "dyspepsia"), "Steve": (56, "gastritis")}
SECOND = {**{k: v for k, v in FIRST.items() if k not in ("Alice", "David")}, "Emily": (25, "flu")}


def test_critical_absence_on_the_papers_example():
    """Bob's first group shows dyspepsia and one other value; its other member leaves, and a second
    release computed on its own puts Bob with another value: the intersection leaves dyspepsia
    alone. Under m-invariance Bob's group shows his first signature again, and where a group lost a
    member (Alice) a counterfeit of her value stands in for her."""
    first, r1, f1 = publish(FIRST, 2, {})
    assert m_unique(r1, f1, 2)
    bob_first = signatures(r1, f1)["Bob"]
    assert "dyspepsia" in bob_first and len(bob_first) == 2
    # on its own: the second release knows nothing of the first
    _, r2, f2 = publish(SECOND, 2, {})
    assert m_unique(r2, f2, 2)
    assert candidates([(r1, f1), (r2, f2)])["Bob"] == {"dyspepsia"}
    # m-invariant: the signatures of the first release are kept
    second, r2, f2 = publish(SECOND, 2, first.signatures)
    assert m_unique(r2, f2, 2)
    kept = candidates([(r1, f1), (r2, f2)])
    assert kept["Bob"] == set(bob_first)
    assert all(len(v) >= 2 for v in kept.values())
    # Alice left: the bronchitis of her group is now a counterfeit beside her neighbour
    alice_group = r1["Alice"][0]
    neighbour = next(p for p, (g, _) in r1.items() if g == alice_group and p != "Alice")
    assert (r2[neighbour][0], "bronchitis") in f2
    assert second.counterfeits == len(f2) >= 1


def test_a_changed_value_and_too_few_values_are_refused():
    first, _, _ = publish({"a": (1, "x"), "b": (2, "y")}, 2, {})
    with pytest.raises(ChangedValue):
        publish({"a": (1, "z"), "b": (2, "y")}, 2, first.signatures)
    with pytest.raises(NotEnoughValues):
        publish({"a": (1, "x"), "b": (2, "x")}, 2, {})


@st.composite
def sequences(draw):
    """A population, and 2 to 4 releases of a random subset of it (inserts and deletes between)."""
    n = draw(st.integers(4, 30))
    values = draw(st.lists(st.sampled_from("abcde"), min_size=n, max_size=n))
    ages = draw(st.lists(st.integers(0, 90), min_size=n, max_size=n))
    people = {f"p{i}": (ages[i], values[i]) for i in range(n)}
    releases = draw(st.lists(st.sets(st.sampled_from(sorted(people)), min_size=1), min_size=2,
                             max_size=4))
    m = draw(st.integers(2, 3))
    return people, [{k: people[k] for k in r} for r in releases], m


@given(sequences())
def test_every_release_of_a_sequence_is_m_invariant(case):
    """Definition 3: every release m-unique, and a person's signature the same in every release it
    is in; so the intersection of any of its releases keeps at least m candidate values."""
    _, releases, m = case
    earlier: dict = {}
    published = []
    for people in releases:
        try:
            partition, release, fakes = publish(people, m, earlier)
        except NotEnoughValues:
            assert len({v for _, v in people.values()} | {v for s in earlier.values() for v in s}) < m
            return
        assert set(release) == set(people)  # every person published once
        assert m_unique(release, fakes, m)
        for person, sig in signatures(release, fakes).items():
            if person in earlier:
                assert sig == frozenset(earlier[person])
        for person, (_, value) in release.items():
            assert value == people[person][1]
        earlier = {**earlier, **partition.signatures}
        published.append((release, fakes))
        assert all(len(values) >= m for values in candidates(published).values())
