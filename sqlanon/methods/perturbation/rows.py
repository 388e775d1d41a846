"""Per-row values made in numpy meet the rows of an engine table in one SQL statement.

DuckDB: values are streamed as Arrow record batches and matched to the table by ``POSITIONAL JOIN``
(the table is scanned in its stored order, the same order in which :func:`read_columns` pulled it),
so no key is needed and memory stays at a few batches. PostgreSQL has no positional join: rows are
matched on ``ctid``, the values going through a temporary table loaded by ``COPY``.
See docs/noise.md for the measurements behind this choice.
"""

from __future__ import annotations

import contextlib
import queue
import threading
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pyarrow as pa
from sqlglot import exp

from sqlanon.sql.nodes import alias, col, internal, table
from sqlanon.methods.dataset import Dataset
from sqlanon.errors import UnsupportedError

BATCH_ROWS = 1 << 20
PREFETCH = 2
KEY = internal("row")
SOURCE = "s"
VALUES = "v"

Batches = Callable[[int], dict[str, np.ndarray | pa.Array]]
"""Given a row count, the values of the next that many rows, one array per column."""


def positional(ds: Dataset) -> bool:
    """Whether the engine joins by position (DuckDB) rather than by a row key (PostgreSQL).

    Raises:
        UnsupportedError: another engine, or a DuckDB session that does not preserve insertion
            order (pulled rows would not come back in the order the join scans them).
    """
    if ds.engine.name == "duckdb":
        con = ds.engine.con  # type: ignore[attr-defined]
        if not con.execute("SELECT current_setting('preserve_insertion_order')").fetchall()[0][0]:
            raise UnsupportedError("noise matches rows by position, which needs the DuckDB setting "
                                   "preserve_insertion_order = true")
        return True
    if ds.engine.name == "postgres":
        return False
    raise UnsupportedError(f"noise is applied on DuckDB and PostgreSQL, not {ds.engine.name}")


def _key_expression() -> exp.Expression:
    return exp.cast(exp.column("ctid"), exp.DataType.build("text"))


def read_columns(ds: Dataset, columns: list[str]) -> dict[str, np.ndarray]:
    """The columns' values in the table's row order (with the row keys under ``KEY`` on PostgreSQL)."""
    projection: list[exp.Expression] = [col(c) for c in columns]
    if not positional(ds):
        projection.insert(0, alias(_key_expression(), KEY))
    return ds.engine.fetch_numpy(exp.select(*projection).from_(table(ds.name, schema_of(ds))))


def schema_of(ds: Dataset) -> str | None:
    db = ds.relation.args.get("db")
    return db.name if db else None


@contextlib.contextmanager
def attached(ds: Dataset, n: int, schema: pa.Schema, batches: Batches,
             keys: np.ndarray | None = None) -> Iterator[exp.Select]:
    """A ``SELECT ... FROM source AS s JOIN values AS v`` skeleton, valid inside the block.

    ``batches`` is called with successive row counts adding up to ``n``; the values it returns
    belong to the table's rows in order (PostgreSQL: to ``keys``, as read by :func:`read_columns`).
    The caller adds the projection.
    """
    source = exp.alias_(table(ds.name, schema_of(ds)), SOURCE, table=True, quoted=True)
    name = internal("v_" + uuid.uuid4().hex[:12])
    if positional(ds):
        stop = threading.Event()
        reader = pa.RecordBatchReader.from_batches(schema, _prefetched(n, schema, batches, stop))
        ds.engine.con.register(name, reader)  # type: ignore[attr-defined]
        try:
            values = exp.alias_(table(name), VALUES, table=True, quoted=True)
            yield exp.select().from_(source).join(exp.Join(this=values, method="POSITIONAL"))
        finally:
            stop.set()
            ds.engine.con.unregister(name)  # type: ignore[attr-defined]
        return
    if keys is None:
        raise UnsupportedError("PostgreSQL matches rows by key: read the keys with read_columns first")
    _temporary_values(ds, name, schema, batches(n), keys)
    try:
        values = exp.alias_(table(name), VALUES, table=True, quoted=True)
        on = exp.EQ(this=exp.cast(col("ctid", SOURCE), exp.DataType.build("text")),
                    expression=col(KEY, VALUES))
        yield exp.select().from_(source).join(values, on=on)
    finally:
        ds.engine.drop(name)


def _prefetched(n: int, schema: pa.Schema, batches: Batches,
                stop: threading.Event) -> Iterator[pa.RecordBatch]:
    """The record batches of ``n`` rows, drawn by one thread ahead of the engine reading them.

    Drawing overlaps with the engine's work (numpy releases the GIL while it fills arrays); one
    thread keeps the draws in order, so a seed reproduces the same noise.
    """
    ready: queue.Queue[Any] = queue.Queue(maxsize=PREFETCH)

    def offer(item: Any) -> bool:
        while not stop.is_set():
            try:
                ready.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def produce() -> None:
        try:
            done = 0
            while done < n:
                size = min(BATCH_ROWS, n - done)
                if not offer(pa.RecordBatch.from_pydict(batches(size), schema=schema)):
                    return
                done += size
            offer(None)
        except BaseException as error:  # handed to the reading thread, which raises it
            offer(error)

    threading.Thread(target=produce, name="sqlanon-noise", daemon=True).start()
    while True:
        item = ready.get()
        if item is None:
            return
        if isinstance(item, BaseException):
            raise item
        yield item


_PG_TYPES = {pa.float64(): "DOUBLE PRECISION", pa.int64(): "BIGINT", pa.bool_(): "BOOLEAN",
             pa.string(): "TEXT"}


def _temporary_values(ds: Dataset, name: str, schema: pa.Schema, data: dict[str, Any],
                      keys: np.ndarray) -> None:
    columns = [exp.ColumnDef(this=exp.to_identifier(KEY, quoted=True),
                             kind=exp.DataType.build("text"))]
    for f in schema:
        columns.append(exp.ColumnDef(this=exp.to_identifier(f.name, quoted=True),
                                     kind=exp.DataType.build(_PG_TYPES.get(f.type, "TEXT"),
                                                             dialect="postgres")))
    ds.engine.execute(exp.Create(this=exp.Schema(this=table(name), expressions=columns),
                                 kind="TABLE", properties=exp.Properties(
                                     expressions=[exp.TemporaryProperty()])))
    arrays = [pa.array(data[f.name], type=f.type).to_pylist() for f in schema]
    quoted = table(name).sql("postgres")  # an internal name, quoted by sqlglot
    with ds.engine.con.cursor() as cur, cur.copy(f"COPY {quoted} FROM STDIN") as copy:  # type: ignore[attr-defined]
        for row in zip([str(k) for k in keys], *arrays):
            copy.write_row(row)
