"""The function Spark's tasks run to draw values by row number (no JVM needed: it is plain Arrow)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from sqlanon.engines.spark_rows import SHIFT, _Drawer

VALUES = pa.schema([("y", pa.int64())])


def numbers_from(first: int):
    done = {"n": first}

    def batches(n: int) -> dict[str, np.ndarray]:
        done["n"] += n
        return {"y": np.arange(done["n"] - n, done["n"], dtype=np.int64)}
    return batches


def partition(p: int, positions: list[int], size: int) -> list[pa.Array]:
    """A partition's batches of ``monotonically_increasing_id()`` as the scalar UDF receives them."""
    ids = [(p << SHIFT) + i for i in positions]
    return [pa.array(ids[i:i + size], pa.int64()) for i in range(0, len(ids), size)]


def drawn(drawer: _Drawer, batches: list[pa.Array]) -> list[int]:
    out = list(drawer(iter(batches)))
    assert [len(a) for a in out] == [len(b) for b in batches]
    assert all(a.type == pa.struct(list(VALUES)) for a in out)
    return [v for a in out for v in a.field("y").to_pylist()]


def test_a_partition_draws_from_its_first_row_number_across_its_batches():
    drawer = _Drawer(numbers_from, {0: (0, 4), 1: (4, 7)}, VALUES, "t")
    assert drawn(drawer, partition(1, list(range(7)), 3)) == [4, 5, 6, 7, 8, 9, 10]


def test_rows_out_of_order_draw_their_own_numbers():
    """Batches that do not continue one another (not what Spark hands over, but possible) still
    give each row the values of its own number."""
    drawer = _Drawer(numbers_from, {0: (0, 4), 1: (4, 7)}, VALUES, "t")
    batches = partition(1, [5, 6, 0, 1], 3) + partition(0, [3], 1) + [pa.array([], pa.int64())]
    assert drawn(drawer, batches) == [9, 10, 4, 5, 3]


@pytest.mark.parametrize("extents", [{0: (0, 4)}, {}])
def test_more_rows_than_counted_fail_rather_than_share_row_numbers(extents):
    """Row numbers past the partition's count belong to the next partition: two rows would get the
    same noise. A partition the first scan did not see has none at all."""
    drawer = _Drawer(numbers_from, extents, VALUES, "`db`.`t`")
    with pytest.raises(RuntimeError, match=r"the scan of `db`.`t` changed between its two reads"):
        list(drawer(iter(partition(0, [0, 1, 2, 3, 4], 2))))
