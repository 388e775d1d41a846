"""Anatomize's groups from bucket sizes, against the paper's algorithm run row by row."""
# ruff: noqa: E741 -- l is the paper's name

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sqlanon.methods.anatomy.anatomize import NotEligible, anatomize, check_eligible, form_groups


def paper_groups(sizes: list[int], l: int) -> tuple[Counter, list[int]]:
    """Steps 3-8 of the paper's Fig. 5, one group at a time: the l largest buckets (ties by bucket
    order) each give one row."""
    counts = list(sizes)
    groups: Counter = Counter()
    while sum(c > 0 for c in counts) >= l:
        top = sorted((b for b, c in enumerate(counts) if c > 0), key=lambda b: (-counts[b], b))[:l]
        groups[tuple(sorted(top))] += 1
        for b in top:
            counts[b] -= 1
    return groups, counts


@st.composite
def eligible(draw):
    l = draw(st.integers(2, 5))
    top = draw(st.sampled_from([3, 12, 80]))  # larger sizes take the batched runs and rotations
    sizes = draw(st.lists(st.integers(1, top), min_size=l, max_size=8))
    while max(sizes) * l > sum(sizes):
        sizes[sizes.index(max(sizes))] -= 1
    return sizes, l


@given(eligible())
def test_groups_of_l_rows_are_the_papers(case):
    sizes, l = case
    found, left = form_groups(sizes, l)
    groups, counts = paper_groups(sizes, l)
    assert Counter(found) == groups
    assert left == counts
    assert all(c <= 1 for c in left)  # the paper's lemma: at most one residual row per bucket


@given(eligible(), st.integers(0, 2**32))
def test_every_group_is_l_diverse_and_every_row_has_one_group(case, seed):
    sizes, l = case
    s = anatomize(sizes, l, np.random.default_rng(seed))
    rows_of: dict[int, list[int]] = {}
    for r in s.runs():
        for row in range(r.first, r.last + 1):
            rows_of.setdefault(r.group + row - r.first, []).append(r.bucket)
    assert sorted(rows_of) == list(range(1, s.groups + 1))
    for buckets in rows_of.values():
        assert len(buckets) == len(set(buckets)) >= l  # distinct values, each once
    assert sum(len(b) for b in rows_of.values()) == sum(sizes)
    # each bucket's rows are numbered 1..size without gaps or overlaps
    for b, size in enumerate(sizes):
        covered = sorted(row for r in s.runs() if r.bucket == b for row in range(r.first, r.last + 1))
        assert covered == list(range(1, size + 1))
    _, left = form_groups(sizes, l)
    assert [b for b, _ in s.residue] == [b for b, c in enumerate(left) if c]
    assert len(s.residue) < l
    assert sum(len(b) - l for b in rows_of.values()) == len(s.residue)


def test_residual_rows_join_a_group_without_their_value():
    """Buckets of 4, 3 and 2 rows with l = 2: three groups {0,1} and one {0,2} leave one row of
    bucket 2, which joins a group {0,1}, whatever the draw."""
    sizes, l = [4, 3, 2], 2
    found, left = form_groups(sizes, l)
    assert left == [0, 0, 1] and Counter(found) == paper_groups(sizes, l)[0]
    for seed in range(50):
        s = anatomize(sizes, l, np.random.default_rng(seed))
        (bucket, joined), = s.residue
        assert bucket == 2 and 2 in joined
        assert joined == (0, 1, 2)


def test_the_residual_group_is_drawn_uniformly():
    """Buckets of 2, 4, 4 and 1 rows with l = 2 form three groups {1,2}, one {0,1}, one {0,2} and
    leave the row of bucket 3; over 2,000 seeds each of the five groups gets it about equally often."""
    sizes, l = [2, 4, 4, 1], 2
    found, left = form_groups(sizes, l)
    (residual,) = [b for b, c in enumerate(left) if c]
    eligible = {k: c for k, c in found.items() if residual not in k}
    assert eligible == {(1, 2): 3, (0, 1): 1, (0, 2): 1}
    picks = Counter(anatomize(sizes, l, np.random.default_rng(seed)).residue[0][1] for seed in range(2000))
    total = sum(eligible.values())
    for k, c in eligible.items():
        joined = tuple(sorted({*k, residual}))
        assert abs(picks[joined] / 2000 - c / total) < 0.05, (k, picks)
    assert sum(picks.values()) == 2000


def test_eligibility_is_n_over_l():
    check_eligible([2, 2, 2], 3)
    with pytest.raises(NotEligible) as e:
        check_eligible([1, 3, 2], 3)
    assert (e.value.bucket, e.value.size, e.value.rows) == (1, 3, 6)
    with pytest.raises(NotEligible):
        anatomize([5, 1, 1], 2, np.random.default_rng(0))


def test_long_rotations_are_taken_at_once(monkeypatch):
    """Adult's occupation counts tripled: the groups are the paper's, computed with far fewer
    choices of the largest buckets than groups."""
    import sqlanon.methods.anatomy.anatomize as module

    choices = []
    largest = module._largest
    monkeypatch.setattr(module, "_largest", lambda counts, l: choices.append(1) or largest(counts, l))
    sizes = [c * 3 for c in (4038, 4030, 3992, 3721, 3584, 3212, 1966, 1572, 1350, 989, 912, 649, 143, 9)]
    for l in (2, 3):
        choices.clear()
        found, left = form_groups(sizes, l)
        groups, counts = paper_groups(sizes, l)
        assert Counter(found) == groups and left == counts
        assert len(choices) < sum(groups.values()) / 10, (l, len(choices))


def test_equal_sets_are_numbered_side_by_side():
    """Tied buckets alternate (A,B then C,D ...): groups with the same buckets are numbered together,
    so each bucket's rows take few ranges."""
    s = anatomize([50] * 4, 2, np.random.default_rng(0))
    assert s.groups == 100 and s.residue == ()
    assert len(s.runs()) <= 2 * len(s.classes)
    assert sorted(c for _, c in s.classes) == sorted(paper_groups([50] * 4, 2)[0].values())
