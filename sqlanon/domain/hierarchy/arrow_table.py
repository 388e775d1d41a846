"""A hierarchy table held as one Arrow string array per level, as pyarrow reads a large file.

Per-level codes come from Arrow's dictionary encoding (codes in order of first appearance, as
:meth:`HierarchyTable.level_codes` numbers them), so nothing walks the rows in Python; the rows are
built only when something asks for them (an error message, a CASE map, an engine without Arrow).
"""

from __future__ import annotations

from collections.abc import Container, Sequence
from functools import cached_property

import numpy as np
import pyarrow as pa

from sqlanon.domain.arrow_buffers import compute, int64_array, integers, text_lengths
from sqlanon.domain.factorize import first_rows
from sqlanon.domain.hierarchy.base import HierarchyTable


class ArrowHierarchyTable(HierarchyTable):
    """The hierarchy table of ``columns`` (leaf first), strings without NULLs, of equal lengths."""

    def __init__(self, columns: Sequence[pa.Array]) -> None:
        self.arrays = list(columns)

    @cached_property
    def rows(self) -> tuple[tuple[str | None, ...], ...]:
        return tuple(zip(*(c.to_pylist() for c in self.arrays)))

    @property
    def height(self) -> int:
        return len(self.arrays) - 1

    @property
    def domain_size(self) -> int:
        return len(self.arrays[0])

    @cached_property
    def _columns(self) -> list[tuple[str | None, ...]]:
        return [tuple(c.to_pylist()) for c in self.arrays]

    def level_codes(self, level: int) -> tuple[np.ndarray, list[str | None]]:
        memo = self._per_level
        if ("codes", level) not in memo:
            encoded = compute("dictionary_encode", self.arrays[level])
            memo["codes", level] = (integers(encoded.indices).astype(np.int64),
                                    encoded.dictionary.to_pylist())
        return memo["codes", level]

    @property
    def leaf_count(self) -> int:
        return len(self.level_codes(0)[1])

    @property
    def leaves(self) -> Container[str | None]:
        return self._last_row.keys()

    @cached_property
    def _last_rows(self) -> np.ndarray:
        """Per leaf (in code order), the index of its last row."""
        codes, labels = self.level_codes(0)
        last = np.zeros(len(labels), dtype=np.int64)
        np.maximum.at(last, codes, np.arange(len(codes), dtype=np.int64))
        return last

    @cached_property
    def _last_row(self) -> dict[str | None, int]:
        return dict(zip(self.level_codes(0)[1], self._last_rows.tolist()))

    def leaf_rows(self, leaves: Sequence[str | None]) -> np.ndarray:
        # the leaves in code order (as a load through leaf codes lists them): no look-up per leaf
        labels = self.level_codes(0)[1]
        if len(leaves) == len(labels) and list(leaves) == labels:
            return self._last_rows
        return super().leaf_rows(leaves)

    def leaf_array(self) -> pa.Array:
        return self.arrays[0]

    def lookup_arrow(self, names: Sequence[str]) -> pa.Table:
        rows = int64_array(self._last_rows)
        return pa.Table.from_arrays([compute("take", c, rows) for c in self.arrays[:len(names)]],
                                    names=list(names))

    def passes_checks(self) -> bool:
        """Whether the rows pass every check of :func:`~sqlanon.domain.hierarchy.table.validate_rows`
        that can fail or warn row by row: no empty label above the leaf, no leaf listed twice, one
        parent per label (the cells are strings and the rows of one width, as read)."""
        if any((text_lengths(c) == 0).any() for c in self.arrays[1:]):
            return False
        if self.leaf_count != self.domain_size:
            return False
        for level in range(1, self.height):
            codes, _ = self.level_codes(level)
            parents, _ = self.level_codes(level + 1)
            if not np.array_equal(parents, parents[first_rows(codes)][codes]):
                return False
        return True

