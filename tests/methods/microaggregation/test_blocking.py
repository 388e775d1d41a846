"""How strata become blocks: the rule is applied to the strata's sizes alone (an engine reads only
those), and gives the blocks of rows that the blocking of pulled rows forms."""

from __future__ import annotations

import numpy as np
import pytest

from sqlanon.methods.microaggregation.algorithms.blocking import pooled_strata, strata_blocks


@pytest.mark.parametrize("sizes, k, blocks", [
    ([5, 3, 7], 3, [0, 1, 2]),            # every stratum large enough: one block each, in order
    ([5, 1, 7, 2], 3, [0, 2, 1, 2]),      # the small ones pooled (3 rows) after the large ones
    ([5, 1, 4, 1, 4], 3, [0, 1, 1, 1, 2]),  # a pool of 2 joins the first of the smallest large strata
    ([1, 1], 3, [0, 0]),                  # no large stratum: the pool is the one block
])
def test_small_strata_are_pooled_or_join_the_smallest(sizes, k, blocks):
    assert pooled_strata(sizes, k) == blocks


def test_the_rule_on_sizes_gives_the_blocks_of_rows():
    rng = np.random.default_rng(5)
    values = rng.choice(["a", "b", "c", "d", "e"], p=[0.4, 0.3, 0.26, 0.02, 0.02], size=200).astype(object)
    values[rng.choice(200, 3, replace=False)] = None
    rows = strata_blocks([values], 8)
    order = sorted({v for v in values.tolist()}, key=lambda v: (v is None, v or ""))
    sizes = [int(sum(1 for v in values.tolist() if v == s)) for s in order]
    block_of = dict(zip(order, pooled_strata(sizes, 8)))
    assert sorted(np.concatenate(rows).tolist()) == list(range(200))
    for b, members in enumerate(rows):
        assert {block_of[values[i]] for i in members} == {b}
