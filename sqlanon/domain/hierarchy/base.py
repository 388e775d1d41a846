"""The hierarchy interface and its materialized form."""

from __future__ import annotations

import abc
from collections.abc import Container, Sequence
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np
from sqlglot import exp

from sqlanon.sql.nodes import as_text, lit

if TYPE_CHECKING:
    import pyarrow as pa

TOP = "*"
"""The label of the most general level of every builder."""


class SqlanonWarning(UserWarning):
    """Something suspicious that sqlanon accepted (a duplicate hierarchy row, several top values...)."""


class HierarchyTable:
    """A hierarchy as rows ``(leaf, level1, ..., levelH)`` of strings, in file order (immutable).

    ``rows`` may repeat a leaf: ARX counts every row towards the domain size |D| and the shares (the
    last row of a leaf defines its generalizations).

    Example:
        >>> t = HierarchyTable((("a", "x", "*"), ("b", "x", "*"), ("c", "y", "*")))
        >>> t.height, t.domain_size, t.share("x", 1), t.label_count("*", 2)
        (2, 3, 0.6666666666666666, 3)
    """

    def __init__(self, rows: tuple[tuple[str | None, ...], ...]) -> None:
        self._rows = rows

    @property
    def rows(self) -> tuple[tuple[str | None, ...], ...]:
        return self._rows

    def __eq__(self, other: object) -> bool:
        return isinstance(other, HierarchyTable) and self.rows == other.rows

    def __hash__(self) -> int:
        return hash(self.rows)

    def __repr__(self) -> str:
        return f"HierarchyTable(rows={self.rows!r})"

    @property
    def height(self) -> int:
        """The most general level (the number of columns minus one)."""
        return len(self.rows[0]) - 1 if self.rows else 0

    @property
    def domain_size(self) -> int:
        """|D|: the number of rows, including values absent from the data (ARX)."""
        return len(self.rows)

    @cached_property
    def mapping(self) -> dict[str | None, tuple[str | None, ...]]:
        """leaf -> its row (the last row wins, as in ARX)."""
        return {row[0]: row for row in self.rows}

    @property
    def leaf_count(self) -> int:
        """The number of distinct leaves."""
        return len(self.mapping)

    @property
    def leaves(self) -> Container[str | None]:
        """The distinct leaves, for membership tests."""
        return self.mapping.keys()

    def leaf_array(self) -> pa.Array | None:
        """The leaf of every row as an Arrow array, when the table is held as Arrow columns."""
        return None

    def lookup_arrow(self, names: Sequence[str]) -> pa.Table | None:
        """The rows of :meth:`mapping` as an Arrow table of their first columns, named ``names``,
        when the table is held as Arrow columns (building Arrow from Python values would cost more
        than it saves)."""
        return None

    @cached_property
    def _columns(self) -> list[tuple[str | None, ...]]:
        return list(zip(*self.rows))

    @cached_property
    def _last_row(self) -> dict[str | None, int]:
        """leaf -> the index of its row in :attr:`rows` (the last one, as :attr:`mapping`)."""
        return {leaf: i for i, leaf in enumerate(self._columns[0])} if self.rows else {}

    @cached_property
    def _per_level(self) -> dict[tuple[str, int], Any]:
        """Memo of the per-level figures below (the table is immutable; hashing it costs O(rows))."""
        return {}

    def level_codes(self, level: int) -> tuple[np.ndarray, list[str | None]]:
        """Per row of :attr:`rows`, the number of its label at ``level``, and the labels in number
        order (order of first appearance)."""
        memo = self._per_level
        if ("codes", level) not in memo:
            index: dict[str | None, int] = {}
            codes = np.fromiter([index.setdefault(v, len(index)) for v in self._columns[level]],
                                dtype=np.int64, count=len(self.rows))
            memo["codes", level] = (codes, list(index))
        return memo["codes", level]

    def label_counts(self, level: int) -> np.ndarray:
        """Rows of the table per label of ``level``, in the order of :meth:`level_codes`."""
        codes, labels = self.level_codes(level)
        return np.bincount(codes, minlength=len(labels)).astype(np.int64)

    def _level_counter(self, level: int) -> dict[str | None, int]:
        memo = self._per_level
        if ("counter", level) not in memo:
            memo["counter", level] = dict(zip(self.level_codes(level)[1],
                                              self.label_counts(level).tolist()))
        return memo["counter", level]

    def leaf_rows(self, leaves: Sequence[str | None]) -> np.ndarray:
        """The index in :attr:`rows` of the row that defines each leaf (KeyError for a non-leaf)."""
        last = self._last_row
        return np.fromiter(map(last.__getitem__, leaves), dtype=np.int64, count=len(leaves))

    def label_count(self, label: str | None, level: int) -> int:
        """Rows of the table whose column ``level`` holds ``label``."""
        if not self.domain_size or not 0 <= level <= self.height:
            return 0
        return self._level_counter(level).get(label, 0)

    def share(self, label: str | None, level: int) -> float:
        """Share of the domain generalized to ``label`` at ``level`` (keyed by level and label)."""
        return self.label_count(label, level) / self.domain_size

    def level_values(self, level: int) -> list[str | None]:
        """The distinct labels of one level, in order of first appearance."""
        return list(self.level_codes(level)[1])


class Hierarchy(abc.ABC):
    """Level 0 is the original value; level ``height`` is the most general one."""

    @property
    @abc.abstractmethod
    def height(self) -> int:
        """The number of generalization steps above the original value."""

    @abc.abstractmethod
    def expression(self, column: exp.Expression, level: int) -> exp.Expression:
        """SQL for the generalization of ``column`` at ``level`` (level 0 returns it unchanged)."""

    def class_key(self, column: exp.Expression, level: int) -> exp.Expression:
        """SQL for a value that is equal for two data values exactly when their labels at ``level``
        are (what a check groups by when it needs the classes, not their labels); the label itself
        unless a hierarchy has something cheaper."""
        return self.expression(column, level)

    def row_wise(self, level: int) -> bool:
        """Whether the generalization at ``level`` is computed from each value alone (no window or
        aggregate), so that it can stand in a ``GROUP BY``."""
        e = self.expression(exp.column("x"), level)
        return e.find(exp.Window) is None and e.find(exp.AggFunc) is None

    def guarded_class_key(self, column: exp.Expression, level: int
                          ) -> tuple[exp.Expression, exp.Expression] | None:
        """A key cheaper than :meth:`class_key` that is exact except on some values: ``(key,
        guard)``, the key equal for two values exactly when their labels are, as long as no value
        satisfies ``guard`` (then :meth:`class_key` must be used). None when there is none."""
        return None

    def key(self, column: exp.Expression) -> exp.Expression:
        """The data value as the text a materialized table of this hierarchy lists as its leaf."""
        return as_text(column)

    def needs_lookup(self) -> bool:
        """True when generalizing is best done by joining a lookup table rather than an expression."""
        return False

    def table(self) -> HierarchyTable | None:
        """The materialized table when it exists independently of the data (ARX files, maps)."""
        return None

    def describe(self) -> str:
        """One line for reports and messages."""
        return f"{type(self).__name__}(height={self.height})"


def check_level(h: Hierarchy, level: int, where: str = "") -> None:
    """Raise :class:`HierarchyError` unless ``0 <= level <= h.height``."""
    from sqlanon.errors import HierarchyError

    if not isinstance(level, int) or isinstance(level, bool) or level < 0 or level > h.height:
        raise HierarchyError(
            f"level {level!r} is outside 0..{h.height} (the hierarchy's height is {h.height})",
            path=where,
        )


def null_safe(column: exp.Expression, value: exp.Expression) -> exp.Expression:
    """``value``, except that NULL stays NULL (below the top level NULL is a class of its own)."""
    return exp.Case().when(exp.Is(this=column.copy(), expression=exp.Null()), exp.Null(), copy=False).else_(
        value, copy=False)


def top_or_null_safe(h: Hierarchy, column: exp.Expression, level: int,
                     value: exp.Expression) -> exp.Expression:
    """``*`` at the top level (NULL included), else ``value`` with NULL kept."""
    return lit(TOP) if level == h.height else null_safe(column, value)
