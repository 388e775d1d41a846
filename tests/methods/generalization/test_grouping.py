"""Class numbers from cached block keys equal a plain sort of the generalized code combinations."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from sqlanon.methods.generalization.search import grouping
from sqlanon.methods.generalization.search.grouping import Grouping, blocks_of, combine


def rank_classes(columns: list[np.ndarray]) -> tuple[np.ndarray, int]:
    """Oracle: each row's rank among the distinct combinations, ordered lexicographically."""
    if not columns:
        return np.zeros(0, dtype=np.int64), 0
    rows = list(zip(*(c.tolist() for c in columns)))
    order = {combo: i for i, combo in enumerate(sorted(set(rows)))}
    return np.array([order[r] for r in rows], dtype=np.int64), len(order)


@st.composite
def coded_tables(draw):
    rows = draw(st.integers(1, 60))
    attributes = draw(st.integers(1, 6))
    codes, radix = [], []
    for _ in range(attributes):
        height = draw(st.integers(0, 3))
        leaves = draw(st.integers(1, 12))
        leaf = np.array(draw(st.lists(st.integers(0, leaves - 1), min_size=rows, max_size=rows)))
        per_level, sizes, labels = [], [], np.arange(leaves)
        for _ in range(height + 1):
            per_level.append(labels[leaf].astype(np.int32))
            sizes.append(int(labels.max()) + 1)
            labels = labels // draw(st.integers(1, 3))  # coarser labels at each level up
        codes.append(per_level)
        radix.append(sizes)
    return codes, radix, rows


@settings(max_examples=150, deadline=None)
@given(coded_tables(), st.data())
def test_group_equals_sorted_combinations(table, data):
    codes, radix, rows = table
    original = [[c.copy() for c in levels] for levels in codes]
    g = Grouping(codes, radix, rows)
    for _ in range(4):  # several nodes through the same cache
        node = [data.draw(st.integers(0, len(r) - 1)) for r in radix]
        inv, k = g.group(node)
        expected, count = rank_classes([original[i][lv] for i, lv in enumerate(node)])
        assert k == count and inv.tolist() == expected.tolist()
    # the codes and the kept block keys are never overwritten
    assert all((a == b).all() for x, y in zip(codes, original) for a, b in zip(x, y))
    for (b, levels), (kept, _) in g._kept.items():
        again, _ = combine([(original[i][lv], radix[i][lv]) for i, lv in zip(g.blocks[b], levels)],
                           rows)
        assert kept.tolist() == again.tolist()


@settings(max_examples=100, deadline=None)
@given(coded_tables(), st.data())
def test_rolled_up_from_representatives(table, data):
    """Grouping one representative row per class of a finer node gives the coarser node's classes."""
    codes, radix, rows = table
    g = Grouping(codes, radix, rows)
    fine = [data.draw(st.integers(0, len(r) - 1)) for r in radix]
    coarse = [data.draw(st.integers(lv, len(r) - 1)) for lv, r in zip(fine, radix)]
    inv, k = g.group(fine)
    rep = np.empty(k, dtype=np.int64)
    rep[inv] = np.arange(rows)
    up, count = g.group(coarse, rep)
    direct, direct_count = g.group(coarse)
    assert count == direct_count
    assert up[inv].tolist() == direct.tolist()


def test_blocks_keep_level_combinations_small():
    heights = [1, 4, 1, 2, 3, 2, 2, 2, 1]  # Adult's hierarchies
    blocks = blocks_of(heights)
    assert [i for b in blocks for i in b] == list(range(9))
    for b in blocks:
        combos = int(np.prod([heights[i] + 1 for i in b]))
        assert combos <= grouping.BLOCK_COMBINATIONS or len(b) == 1
    assert blocks_of([9, 9], most=10) == [[0], [1]]


def test_combine_large_spaces_fall_back_to_sorting():
    rng = np.random.default_rng(3)
    a, b = rng.integers(0, 1000, 50), rng.integers(0, 1000, 50)
    inv, k = combine([(a, 1000), (b, 1000)], 50)
    expected, count = rank_classes([a, b])
    assert k == count and inv.tolist() == expected.tolist()


def test_cache_is_bounded(monkeypatch):
    monkeypatch.setattr(grouping, "BLOCK_CACHE_BYTES", 1)
    codes = [[np.arange(10, dtype=np.int32) % 5, np.zeros(10, dtype=np.int32)] for _ in range(3)]
    g = Grouping(codes, [[5, 1]] * 3, 10)
    for node in ([0, 0, 0], [1, 0, 0], [1, 1, 1], [0, 1, 0]):
        g.group(node)
        assert len(g._kept) == 1
