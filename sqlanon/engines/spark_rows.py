"""Per-row values drawn on Spark's executors, partition by partition, where the rows are read.

Spark has no stored row order to join values to by position, and no row key; instead the values
are drawn where the rows are (capability ``row_stream_map``). The table is scanned twice:

1. one ``GROUP BY spark_partition_id()`` counts the rows of each partition of the scan (a few
   numbers reach the driver, never the rows), which gives each partition its first row's number in
   the table's scan order: partition p starts after the rows of partitions 0 … p−1;
2. over the same scan (the same files split the same way, so the same partitions in the same
   order), each row takes ``monotonically_increasing_id()``: its partition's number shifted left by
   33 bits, plus its position in the partition. A scalar Arrow UDF (``arrow_udf``, an iterator of
   batches per task) receives only these ids, turns them into row numbers (the partition's first
   row's number plus the position), asks ``rows_from`` for the values of its rows and returns them
   as one struct per row. The other columns stay in the JVM: only one 64-bit id per row goes to
   Python and the values come back.

The rows with their values become a temporary view, read as ``s``; the values are exposed as ``v``
by a ``LATERAL`` subquery that Spark folds into a plain projection. The statement that reads them (a
``CREATE TABLE AS``) runs the tasks; nothing is collected. The view lives as long as the block, and
every statement reading it draws the same values again (they depend only on the row numbers).

The draw function is pickled to the executors: sqlanon and its dependencies must be installed
where they run Python (on one machine, or a cluster's nodes).
"""

from __future__ import annotations

import contextlib
import itertools
import warnings
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, cast

from sqlglot import exp

from sqlanon.engines.base import internal_name
from sqlanon.engines.row_values import SOURCE, VALUES, RowsFrom
from sqlanon.sql.nodes import alias, col, internal, table

if TYPE_CHECKING:
    import numpy as np
    import pyarrow as pa

    from sqlanon.engines.spark import SparkEngine

PARTITION = internal("partition")
"""The column of the partitions' row counts."""
DRAWN = internal("drawn")
"""The struct column holding each row's values in the mapped view."""
SHIFT = 33
"""``monotonically_increasing_id()`` keeps the partition's number above this many bits."""
_POSITION = (1 << SHIFT) - 1
MAPPED_SETTINGS = {"spark.sql.execution.arrow.pythonUDF.columnarInput.enabled": "false",
                   "spark.sql.execution.arrow.maxRecordsPerBatch": "65536"}
"""Settings of the statements reading the mapped rows. Spark 4.3 runs an Arrow UDF over columnar
input by default: each batch's rows are copied into the queue that waits for the UDF's results, and
the joined rows are converted back into columns, to be read as rows again by the projection and the
writer above it; the row path skips that conversion. Batches of 65,536 ids instead of 10,000 cost
the JVM less per row (a few MB per batch). On a million rows of 15 columns, the first saved 1.4 to
2.1 s of CPU time, the second 0.5 to 1.0 s more, against 2.3 to 2.9 s for a plain copy."""


class _Drawer:
    """The function each task runs: the values of its rows, given their ``monotonically_increasing_id()``.

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

    def __call__(self, ids: Iterator[pa.Array]) -> Iterator[pa.Array]:
        import numpy as np
        import pyarrow as pa

        draw, position = None, -1
        for batch in ids:
            numbers = self._numbers(batch.to_numpy(zero_copy_only=False).astype(np.int64, copy=False))
            parts = []
            for low, high in _runs(numbers):
                first = int(numbers[low])
                if draw is None or first != position:
                    draw = self.rows_from(first)
                parts.append(draw(high - low))
                position = first + high - low
            yield pa.StructArray.from_arrays(
                [pa.array(_joined([p[f.name] for p in parts]), type=f.type) for f in self.values],
                fields=list(self.values))

    def _numbers(self, tagged: np.ndarray) -> np.ndarray:
        """Each row's number in the table's scan order, after checking its partition's count."""
        import numpy as np

        partitions, positions = tagged >> SHIFT, tagged & _POSITION
        firsts = np.empty_like(tagged)
        for partition in np.unique(partitions).tolist():
            mine = partitions == partition
            firsts[mine], rows = self.extents.get(partition, (0, 0))
            if int(positions[mine].max()) >= rows:
                raise RuntimeError(f"the scan of {self.relation} changed between its two reads (a "
                                   "partition holds more rows than counted): values drawn by row "
                                   "number need a source Spark scans the same way twice, such as a "
                                   "table or files, not a view whose plan shuffles its rows")
        return firsts + positions


def _runs(numbers: np.ndarray) -> list[tuple[int, int]]:
    """The runs of consecutive row numbers, as (start, stop) indexes: a task's batches continue one
    another, so a task draws from one stream, started again only where its numbers jump."""
    import numpy as np

    cuts = (np.flatnonzero(np.diff(numbers) != 1) + 1).tolist()
    return list(zip([0, *cuts], [*cuts, len(numbers)])) if len(numbers) else []


def _joined(parts: list[Any]) -> Any:
    import numpy as np

    if len(parts) == 1:
        return parts[0]
    return np.concatenate([np.asarray(p) for p in parts]) if parts else np.empty(0)


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
    """``SELECT ... FROM <rows with their values> AS s JOIN LATERAL (SELECT s.<drawn>.<value> ...)
    AS v``, valid inside the block (see the module's description)."""
    name = internal_name("rows")
    with _settings(engine.session, MAPPED_SETTINGS):
        with _view(engine, name, relation, values, rows_from):
            exposed = exp.select(*[alias(exp.Dot(this=col(DRAWN, SOURCE), expression=exp.to_identifier(
                f.name, quoted=True)), f.name) for f in values])
            lateral = exp.Lateral(this=exp.Subquery(this=exposed),
                                  alias=exp.TableAlias(this=exp.to_identifier(VALUES, quoted=True)))
            yield exp.select().from_(exp.alias_(table(name), SOURCE, table=True, quoted=True)) \
                .join(exp.Join(this=lateral))


@contextlib.contextmanager
def _view(engine: SparkEngine, name: str, relation: exp.Table, values: pa.Schema, rows_from: RowsFrom
          ) -> Iterator[None]:
    """The temporary view ``name``: the rows of ``relation`` with their values as one struct."""
    from pyspark.sql import functions
    from pyspark.sql.pandas.types import from_arrow_type
    from pyspark.sql.types import StructField, StructType

    try:
        frame = engine.session.table(engine.sql(relation))
        extents = partition_extents(frame)
        out = StructType([StructField(f.name, from_arrow_type(f.type), True) for f in values])
        with warnings.catch_warnings():  # pyspark prefers type hints to the UDF type given
            warnings.simplefilter("ignore", UserWarning)
            drawer = functions.arrow_udf(_Drawer(rows_from, extents, values, engine.sql(relation)),
                                         cast(Any, out), functions.ArrowUDFType.SCALAR_ITER)
        frame.withColumn(DRAWN, drawer(functions.monotonically_increasing_id())) \
            .createOrReplaceTempView(engine.sql(table(name)))
    except Exception as e:
        raise engine.error(e, f"map {relation.name}", f"draw the values of {relation.name!r}") from e
    try:
        yield
    finally:
        engine.drop(name, kind="VIEW")


@contextlib.contextmanager
def _settings(session: Any, settings: dict[str, str]) -> Iterator[None]:
    """The session's SQL settings changed for the block, then set back as they were."""
    before = {key: session.conf.get(key, None) for key in settings}
    for key, value in settings.items():
        session.conf.set(key, value)
    try:
        yield
    finally:
        for key, value in before.items():
            if value is None:
                session.conf.unset(key)
            else:
                session.conf.set(key, value)
