"""The hierarchy interface and its materialized form."""

from __future__ import annotations

import abc
from collections import Counter
from dataclasses import dataclass
from functools import cached_property

from sqlglot import exp

from sqlanon.sql.nodes import as_text, lit

TOP = "*"
"""The label of the most general level of every builder."""


class SqlanonWarning(UserWarning):
    """Something suspicious that sqlanon accepted (a duplicate hierarchy row, several top values...)."""


@dataclass(frozen=True)
class HierarchyTable:
    """A hierarchy as rows ``(leaf, level1, ..., levelH)`` of strings, in file order.

    ``rows`` may repeat a leaf: ARX counts every row towards the domain size |D| and the shares (the
    last row of a leaf defines its generalizations).

    Example:
        >>> t = HierarchyTable((("a", "x", "*"), ("b", "x", "*"), ("c", "y", "*")))
        >>> t.height, t.domain_size, t.share("x", 1), t.label_count("*", 2)
        (2, 3, 0.6666666666666666, 3)
    """

    rows: tuple[tuple[str | None, ...], ...]

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

    @cached_property
    def _label_counts(self) -> Counter[tuple[int, str | None]]:
        return Counter((level, row[level]) for row in self.rows for level in range(len(row)))

    def label_count(self, label: str | None, level: int) -> int:
        """Rows of the table whose column ``level`` holds ``label``."""
        return self._label_counts[(level, label)]

    def share(self, label: str | None, level: int) -> float:
        """Share of the domain generalized to ``label`` at ``level`` (keyed by level and label)."""
        return self._label_counts[(level, label)] / self.domain_size

    def level_values(self, level: int) -> list[str | None]:
        """The distinct labels of one level, in order of first appearance."""
        seen: dict[str | None, None] = {}
        for row in self.rows:
            seen.setdefault(row[level], None)
        return list(seen)


class Hierarchy(abc.ABC):
    """Level 0 is the original value; level ``height`` is the most general one."""

    @property
    @abc.abstractmethod
    def height(self) -> int:
        """The number of generalization steps above the original value."""

    @abc.abstractmethod
    def expression(self, column: exp.Expression, level: int) -> exp.Expression:
        """SQL for the generalization of ``column`` at ``level`` (level 0 returns it unchanged)."""

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
    return exp.Case().when(exp.Is(this=column.copy(), expression=exp.Null()), exp.Null()).else_(value)


def top_or_null_safe(h: Hierarchy, column: exp.Expression, level: int,
                     value: exp.Expression) -> exp.Expression:
    """``*`` at the top level (NULL included), else ``value`` with NULL kept."""
    return lit(TOP) if level == h.height else null_safe(column, value)
