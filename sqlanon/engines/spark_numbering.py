"""Spark's ``distributed_numbering``: rows numbered in a sort order as ``RDD.zipWithIndex`` numbers
a sorted RDD, with DataFrame calls that a classic session and a Spark Connect session both have.

A window without ``PARTITION BY`` (``ROW_NUMBER() OVER (ORDER BY x)``) makes Spark move every row
into one partition and sort it in one task, which runs out of memory on large tables. Here, for each
order:

1. the rows are range-partitioned on the order's columns (``repartitionByRange``: Spark samples the
   values to cut the ranges, so rows of one value may fall in two adjacent partitions, in order) and
   each partition is sorted by itself (``sortWithinPartitions``);
2. each row takes its partition's number and its position in the partition
   (``monotonically_increasing_id()``, which is ``partition << 33`` plus the position), and this is
   written once to the executors' disks (``localCheckpoint``, on disk only: in memory it would
   take the memory the sorts need): the sampled ranges differ from one computation to the next, so
   the positions must come from one computation only;
3. one ``GROUP BY`` of the partition numbers gives each partition's row count to the driver (one
   row per partition), hence the rows before each partition; a row's number is those plus its
   position in its partition, plus one. The checkpoint is not eager: this ``GROUP BY`` is the job
   that sorts the rows and writes the checkpoint, so the sorted rows are not read back from disk
   just to be counted.

Each order reads the checkpoint of the one before, so the numbers of earlier orders travel with
the rows, and the table is the last checkpoint with its numbers: reading it again reads the same
numbers. A lost executor loses its part of a checkpoint, and a query reading it then fails rather
than compute other numbers.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from sqlglot import exp

from sqlanon.sql.nodes import internal

if TYPE_CHECKING:
    from sqlanon.engines.spark import SparkEngine

PART, POSITION = internal("part"), internal("position")
_SHIFT = 33
"""``monotonically_increasing_id()`` keeps the partition's number above this many bits."""
SPREAD_ROWS = 5_000_000
"""Tables of up to this many rows are always sorted in one task (see :func:`sorts_in_one_task`)."""
SPREAD_CORES = 4
"""Larger tables are numbered across tasks on sessions of at least this many cores."""
CORES_PROBE_ROWS = 1 << 16
"""The rows of the range whose partitions tell the session's cores (up to this many)."""


def sorts_in_one_task(rows: int, cores: Callable[[], int]) -> bool:
    """Spark's default choice for individual ranking of a table of ``rows`` rows: sort each
    attribute with a window over the whole table, in one task, rather than number the rows across
    tasks. ``cores`` (the session's, asked only for tables of over :data:`SPREAD_ROWS` rows) is
    how many tasks would share the numbering.

    Measured on 2 cores at 10 million rows, the numbering took about 1.55 times the executors' CPU
    time of the one-task form, whose one sorting task held some 60 % of that form's: spread over
    ``C`` cores, the numbering takes 1.55 / ``C`` of the one-task form's time and the one-task form
    at least 0.6 of it, which favours the numbering from 2 to 3 cores on. On 2 cores its extra jobs,
    shuffles and checkpoint files (disk, not CPU) still made it slower than the one task (by 17 %);
    from :data:`SPREAD_CORES` the estimate gives it a margin of some 1.6 times. Up to
    :data:`SPREAD_ROWS` rows the one task sorts an attribute in seconds and those fixed costs (some
    30 Spark jobs more) outweigh the rest. docs/spark.md, "Microaggregation", has the figures.

    >>> sorts_in_one_task(100_000_000, lambda: 2), sorts_in_one_task(100_000_000, lambda: 16)
    (True, False)
    """
    return rows <= SPREAD_ROWS or cores() < SPREAD_CORES


def numbered_frame(engine: SparkEngine, query: exp.Expression, orders: list[tuple[str, list[str]]]) -> Any:
    """``query``'s rows with one number column per order (the DataFrame of the last checkpoint)."""
    from pyspark import StorageLevel
    from pyspark.sql import functions as f

    def column(name: str) -> Any:
        return f.col(engine.sql(exp.to_identifier(name, quoted=True)))

    frame = engine.session.sql(engine.sql(query))
    names = list(frame.columns)
    for name, by in orders:
        keys = [column(c).asc_nulls_last() for c in by]
        tagged = frame.repartitionByRange(*keys).sortWithinPartitions(*keys) \
            .withColumn(PART, f.spark_partition_id()) \
            .withColumn(POSITION, f.monotonically_increasing_id()) \
            .localCheckpoint(eager=False, storageLevel=StorageLevel.DISK_ONLY)
        counts = {int(p): int(n) for p, n in tagged.groupBy(column(PART)).count().collect()}
        starts, before = [], 0
        for p in range(max(counts, default=0) + 1):
            starts.append(before)
            before += counts.get(p, 0)
        start = f.element_at(f.array(*[f.lit(s).cast("bigint") for s in starts]), column(PART) + 1)
        within = column(POSITION) - f.shiftleft(column(PART).cast("bigint"), _SHIFT)
        frame = tagged.select(*[column(c) for c in names], (start + within + 1).alias(name))
        names.append(name)
    return frame
