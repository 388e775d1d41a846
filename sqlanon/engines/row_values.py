"""Per-row values made in numpy meet the rows of an engine table in one SQL statement.

An engine joins them by position (:attr:`~sqlanon.engines.capabilities.Capabilities.positional_join`:
DuckDB streams the values as Arrow record batches beside the table scanned in stored order, so no
key is needed and memory stays at a few batches) or by a stable row key
(:attr:`~sqlanon.engines.capabilities.Capabilities.stable_row_key`: PostgreSQL matches rows on
``ctid``, the values going through a temporary table). See docs/noise.md for the measurements
behind this choice. This module holds what both ways share: the names of the joined relations, the
shape of the value producers, and the join by key.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlglot import exp

from sqlanon.sql.nodes import col, internal, table

if TYPE_CHECKING:
    import numpy as np
    import pyarrow as pa

    from sqlanon.engines.base import Engine

BATCH_ROWS = 1 << 20
"""Rows per Arrow record batch of drawn values."""
ROW_KEY = internal("row")
"""The column holding the row keys (:meth:`~sqlanon.engines.base.Engine.row_key`) where rows are
matched by key."""
SOURCE = "s"
"""The alias of the table in :meth:`~sqlanon.engines.base.Engine.join_row_values`' skeleton."""
VALUES = "v"
"""The alias of the values in the same skeleton."""

Batches = Callable[[int], "dict[str, np.ndarray | pa.Array]"]
"""Given a row count, the values of the next that many rows, one array per column."""

RowsFrom = Callable[[int], Batches]
"""Given the number of a first row (in the table's scan order, from 0), the :data:`Batches` of the
rows from it on: values addressed by position, so that blocks and partitions draw them apart."""

Projection = Callable[[exp.Select], exp.Select]
"""Adds the output's columns to a ``SELECT ... FROM source AS s <join> values AS v``."""


@dataclass(frozen=True)
class Block:
    """Rows ``low <= row number < high`` of a table (``rows`` of them) written as one block."""

    index: int
    low: int
    high: int
    rows: int


def schema_name(relation: exp.Table) -> str | None:
    """The schema a relation is qualified with (None: the connection's current schema)."""
    db = relation.args.get("db")
    return db.name if db else None


@contextlib.contextmanager
def joined_by_key(engine: Engine, relation: exp.Table, schema: pa.Schema,
                  data: dict[str, Any], keys: np.ndarray) -> Iterator[exp.Select]:
    """``SELECT ... FROM relation AS s JOIN values AS v ON <row key of s> = v.<ROW_KEY>``.

    The values go through a temporary table (:meth:`~sqlanon.engines.base.Engine.create_table_from_arrow`)
    keyed by the row keys read with the table's values; it is dropped when the block ends.
    """
    import pyarrow as pa

    name = internal("v_" + uuid.uuid4().hex[:12])
    values = pa.table([pa.array([str(k) for k in keys], type=pa.string())]
                      + [pa.array(data[f.name], type=f.type) for f in schema],
                      names=[ROW_KEY] + [f.name for f in schema])
    engine.create_table_from_arrow(name, values, temporary=True)
    try:
        source = exp.alias_(table(relation.name, schema_name(relation)), SOURCE, table=True, quoted=True)
        joined = exp.alias_(table(name), VALUES, table=True, quoted=True)
        on = exp.EQ(this=engine.row_key(SOURCE), expression=col(ROW_KEY, VALUES))
        yield exp.select().from_(source).join(joined, on=on)
    finally:
        engine.drop(name)
