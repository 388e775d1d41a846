"""Noise addressed by row position: the values of any run of rows, drawn where the rows are.

A mechanism whose noise ignores the values gives its draw as a function of a generator and a row
count (:data:`MakeBatches`). :class:`RowDraws` turns it into values by position: chunk c of the rows
(:data:`~sqlanon.methods.rng.CHUNK_ROWS` of them) is always drawn whole, from the run key's
generator of that chunk (:meth:`~sqlanon.methods.rng.RowKey.chunk`), so a row's values depend only
on the key and the row's number in the table's scan order. DuckDB's row blocks, PostgreSQL's single
stream and Spark's partitions therefore release the same values for the same seed, whatever their
sizes: a reader starting mid-chunk draws the chunk and skips the rows before its own.

Both classes are pickled to Spark's executors with the draw they hold.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from sqlanon.methods.rng import CHUNK_ROWS, RowKey

MakeBatches = Callable[[np.random.Generator], Callable[[int], "dict[str, np.ndarray]"]]
"""Given a generator, a function drawing the values of the next that many rows, one array per column."""


class RowDraws:
    """The values of a mechanism's rows by position under one run key."""

    def __init__(self, make: MakeBatches, key: RowKey, chunk_rows: int = CHUNK_ROWS) -> None:
        self.make = make
        self.key = key
        self.chunk_rows = chunk_rows

    def chunk(self, index: int) -> dict[str, np.ndarray]:
        """The values of every row of chunk ``index``."""
        return self.make(self.key.chunk(index))(self.chunk_rows)

    def at(self, start: int) -> Callable[[int], dict[str, Any]]:
        """The values of successive rows from row number ``start`` on, as many at each call as asked."""
        return _Cursor(self, start)


class _Cursor:
    def __init__(self, draws: RowDraws, start: int) -> None:
        self.draws = draws
        self.position = start
        self.index = -1
        self.values: dict[str, np.ndarray] = {}

    def __call__(self, n: int) -> dict[str, Any]:
        size = self.draws.chunk_rows
        parts: list[dict[str, np.ndarray]] = []
        while n > 0 or not parts:
            index, offset = divmod(self.position, size)
            if index != self.index:
                self.values, self.index = self.draws.chunk(index), index
            take = min(n, size - offset)
            parts.append({k: v[offset:offset + take] for k, v in self.values.items()})
            self.position += take
            n -= take
        if len(parts) == 1:
            return parts[0]
        return {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}
