"""DuckDB joins per-row values to a table by position.

The values are streamed as Arrow record batches and matched to the table by ``POSITIONAL JOIN``:
the table is scanned in its stored order, the same order in which
:meth:`~sqlanon.engines.base.Engine.read_columns` pulled it, so no key is needed and memory stays at
a few batches. One thread draws the batches ahead of the engine reading them.
"""

from __future__ import annotations

import contextlib
import queue
import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from sqlglot import exp

from sqlanon.engines.base import internal_name
from sqlanon.engines.row_values import BATCH_ROWS, SOURCE, VALUES, Batches, schema_name
from sqlanon.errors import UnsupportedError
from sqlanon.sql.nodes import table

if TYPE_CHECKING:
    import pyarrow as pa

    from sqlanon.engines.duckdb import DuckDBEngine

PREFETCH = 2
"""Record batches drawn ahead of the engine."""


def check_insertion_order(engine: DuckDBEngine) -> None:
    """Refuse a session that does not preserve insertion order (pulled rows would not come back in
    the order the join scans them)."""
    if not engine.con.execute("SELECT current_setting('preserve_insertion_order')").fetchall()[0][0]:
        raise UnsupportedError("noise matches rows by position, which needs the DuckDB setting "
                               "preserve_insertion_order = true")


@contextlib.contextmanager
def joined_by_position(engine: DuckDBEngine, relation: exp.Table, n: int, schema: pa.Schema,
                       batches: Batches) -> Iterator[exp.Select]:
    """``SELECT ... FROM relation AS s POSITIONAL JOIN values AS v``, valid inside the block."""
    source = exp.alias_(table(relation.name, schema_name(relation)), SOURCE, table=True, quoted=True)
    stop = threading.Event()
    import pyarrow as pa

    reader = pa.RecordBatchReader.from_batches(schema, _prefetched(n, schema, batches, stop))
    with engine.arrow_relation(reader, internal_name("v")) as registered:
        try:
            values = exp.alias_(table(registered.name), VALUES, table=True, quoted=True)
            yield exp.select().from_(source).join(exp.Join(this=values, method="POSITIONAL"))
        finally:
            stop.set()


def _prefetched(n: int, schema: pa.Schema, batches: Batches,
                stop: threading.Event) -> Iterator[pa.RecordBatch]:
    """The record batches of ``n`` rows, drawn by one thread ahead of the engine reading them.

    Drawing overlaps with the engine's work (numpy releases the GIL while it fills arrays); one
    thread keeps the draws in order, so a seed reproduces the same noise.
    """
    import pyarrow as pa

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
