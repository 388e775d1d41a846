"""The function Spark's tasks run to draw values by row number (no JVM needed: it is plain Arrow)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from sqlanon.engines.spark_rows import PARTITION, _Mapper

VALUES = pa.schema([("y", pa.int64())])


def numbers_from(first: int):
    done = {"n": first}

    def batches(n: int) -> dict[str, np.ndarray]:
        done["n"] += n
        return {"y": np.arange(done["n"] - n, done["n"], dtype=np.int64)}
    return batches


def partition(p: int, ids: list[int], size: int) -> list[pa.RecordBatch]:
    """A partition's record batches as mapInArrow hands them over: the row, then its partition."""
    return [pa.RecordBatch.from_arrays([pa.array(ids[i:i + size], pa.int64()),
                                        pa.array([p] * len(ids[i:i + size]), pa.int32())],
                                       names=["id", PARTITION]) for i in range(0, len(ids), size)]


def test_a_partition_draws_from_its_first_row_number_across_its_batches():
    mapper = _Mapper(numbers_from, {0: (0, 4), 1: (4, 7)}, VALUES, "t")
    out = pa.Table.from_batches(list(mapper(iter(partition(1, [40, 41, 42, 43, 44, 45, 46], 3)))))
    assert out.column_names == ["id", "y"]
    assert out.column("y").to_pylist() == [4, 5, 6, 7, 8, 9, 10]
    assert out.column("id").to_pylist() == [40, 41, 42, 43, 44, 45, 46]


@pytest.mark.parametrize("extents", [{0: (0, 4)}, {}])
def test_more_rows_than_counted_fail_rather_than_share_row_numbers(extents):
    """Row numbers past the partition's count belong to the next partition: two rows would get the
    same noise. A partition the first scan did not see has none at all."""
    mapper = _Mapper(numbers_from, extents, VALUES, "`db`.`t`")
    with pytest.raises(RuntimeError, match=r"the scan of `db`.`t` changed between its two reads"):
        list(mapper(iter(partition(0, [1, 2, 3, 4, 5], 2))))
