"""Per-row values drawn on Spark's executors, partition by partition, where the rows are read.

Spark has no stored row order to join values to by position, and no row key; instead the values
are drawn where the rows are (capability ``row_stream_map``). The table is scanned twice:

1. one ``GROUP BY spark_partition_id()`` counts the rows of each partition of the scan (a few
   numbers reach the driver, never the rows), which gives each partition its first row's number in
   the table's scan order: partition p starts after the rows of partitions 0 … p−1;
2. ``mapInArrow`` runs over the same scan (the same files split the same way, so the same
   partitions in the same order): each task asks ``rows_from`` for the values of its rows from its
   first row's number on, and returns its record batches with the values as extra columns.

The mapped rows become a temporary view, read as ``s``; the values are exposed as ``v`` by a
``LATERAL`` subquery that Spark folds into a plain projection. The statement that reads them (a
``CREATE TABLE AS``) runs the tasks; nothing is collected. The view lives as long as the block, and
every statement reading it draws the same values again (they depend only on the row numbers).

The draw function is pickled to the executors: sqlanon and its dependencies must be installed
where they run Python (on one machine, or a cluster's nodes).
"""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from sqlglot import exp

from sqlanon.engines.base import internal_name
from sqlanon.engines.row_values import SOURCE, VALUES, RowsFrom
from sqlanon.sql.nodes import alias, col, internal, table

if TYPE_CHECKING:
    import pyarrow as pa

    from sqlanon.engines.spark import SparkEngine

PARTITION = internal("partition")
"""The column carrying each row's partition of the scan into the mapped function."""


class _Mapper:
    """The function each task runs: its record batches with the values of their rows appended.

    A partition may not hold more rows than the first scan counted: its row numbers would run into
    the next partition's, and two rows would get the same values (one row's noise would reveal the
    other's value). A source Spark does not scan the same way twice fails instead.
    """

    def __init__(self, rows_from: RowsFrom, extents: dict[int, tuple[int, int]], values: pa.Schema,
                 relation: str) -> None:
        self.rows_from = rows_from
        self.extents = extents
        self.values = values
        self.relation = relation

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        import pyarrow as pa

        draw, left = None, 0
        for batch in batches:
            if batch.num_rows == 0:
                continue
            if draw is None:
                partition = batch.column(batch.num_columns - 1)[0].as_py()
                first, left = self.extents.get(partition, (0, 0))
                draw = self.rows_from(first)
            left -= batch.num_rows
            if left < 0:
                raise RuntimeError(f"the scan of {self.relation} changed between its two reads (a "
                                   "partition holds more rows than counted): values drawn by row "
                                   "number need a source Spark scans the same way twice, such as a "
                                   "table or files, not a view whose plan shuffles its rows")
            drawn = draw(batch.num_rows)
            columns = batch.columns[:-1] + [pa.array(drawn[f.name], type=f.type) for f in self.values]
            names = batch.schema.names[:-1] + self.values.names
            yield pa.RecordBatch.from_arrays(columns, names=names)


def partition_extents(frame: Any) -> dict[int, tuple[int, int]]:
    """Each partition of ``frame``'s scan -> the number of its first row in scan order, and its rows."""
    from pyspark.sql import functions

    counts = frame.select(functions.spark_partition_id().alias(PARTITION)).groupBy(PARTITION).count()
    sizes = sorted((int(p), int(n)) for p, n in counts.collect())
    starts = itertools.accumulate((n for _, n in sizes), initial=0)
    return {p: (first, n) for (p, n), first in zip(sizes, starts)}


@contextlib.contextmanager
def mapped_rows(engine: SparkEngine, relation: exp.Table, values: pa.Schema, rows_from: RowsFrom
                ) -> Iterator[exp.Select]:
    """``SELECT ... FROM <mapped rows> AS s JOIN LATERAL (SELECT s.<value> ...) AS v``, valid
    inside the block (see the module's description)."""
    from pyspark.sql import functions
    from pyspark.sql.pandas.types import from_arrow_type
    from pyspark.sql.types import StructField, StructType

    name = internal_name("rows")
    try:
        frame = engine.session.table(engine.sql(relation))
        extents = partition_extents(frame)
        out = StructType(list(frame.schema.fields) + [StructField(f.name, from_arrow_type(f.type), True)
                                                      for f in values])
        mapped = frame.withColumn(PARTITION, functions.spark_partition_id()) \
            .mapInArrow(_Mapper(rows_from, extents, values, engine.sql(relation)), out)
        mapped.createOrReplaceTempView(engine.sql(table(name)))
    except Exception as e:
        raise engine.error(e, f"map {relation.name}", f"draw the values of {relation.name!r}") from e
    try:
        exposed = exp.select(*[alias(col(f.name, SOURCE), f.name) for f in values])
        lateral = exp.Lateral(this=exp.Subquery(this=exposed),
                              alias=exp.TableAlias(this=exp.to_identifier(VALUES, quoted=True)))
        yield exp.select().from_(exp.alias_(table(name), SOURCE, table=True, quoted=True)) \
            .join(exp.Join(this=lateral))
    finally:
        engine.drop(name, kind="VIEW")
