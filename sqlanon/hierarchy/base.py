"""The hierarchy interface and its materialized form."""

from __future__ import annotations

import abc
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property

from sqlglot import exp

TOP = "*"


class SqlanonWarning(UserWarning):
    """Something suspicious that sqlanon accepted (a duplicate hierarchy row, several top values...)."""


@dataclass(frozen=True)
class HierarchyTable:
    """A hierarchy as rows ``(leaf, level1, ..., levelH)`` of strings, in file order.

    ``rows`` may repeat a leaf (ARX counts every row towards the domain size |D|; the last row of a
    leaf defines its generalizations).
    """

    rows: tuple[tuple[str | None, ...], ...]

    @property
    def height(self) -> int:
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
        seen: dict[str | None, None] = {}
        for row in self.rows:
            seen.setdefault(row[level], None)
        return list(seen)


class Hierarchy(abc.ABC):
    """Level 0 is the original value; level ``height`` is the most general one."""

    @property
    @abc.abstractmethod
    def height(self) -> int: ...

    @abc.abstractmethod
    def expression(self, column: exp.Expression, level: int) -> exp.Expression:
        """SQL for the generalization of ``column`` at ``level`` (level 0 returns it unchanged)."""

    def needs_lookup(self) -> bool:
        """True when generalizing is best done by joining a lookup table rather than an expression."""
        return False

    def table(self) -> HierarchyTable | None:
        """The materialized table when it exists independently of the data (ARX files, maps)."""
        return None

    def describe(self) -> str:
        return f"{type(self).__name__}(height={self.height})"


def check_level(h: Hierarchy, level: int, where: str = "") -> None:
    from sqlanon.errors import HierarchyError

    if not isinstance(level, int) or isinstance(level, bool) or level < 0 or level > h.height:
        raise HierarchyError(
            f"level {level!r} is outside 0..{h.height} (the hierarchy's height is {h.height})",
            path=where,
        )


def ladder_labels(labels: Sequence[str]) -> list[str]:
    return list(labels)
