"""The engine method of capability ``distributed_numbering``: rows numbered in a sort order without
one task sorting them all.

:class:`~sqlanon.engines.base.Engine` inherits it; an engine declaring the capability implements
:meth:`RowNumbering._number_rows`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from sqlglot import exp

Orders = Sequence[tuple[str, Sequence[str]]]
"""``(column, by)`` pairs: the name of a number column, and the columns whose order it numbers."""


class RowNumbering:
    """Numbering a query's rows in sort orders (capability ``distributed_numbering``)."""

    one_task_sort_rows: int | Literal["auto"] | None = None
    """On an engine declaring the capability: the most rows sqlanon sorts with a window over the
    whole table, which the engine may sort in one task (it spills to disk, so this is a matter of
    time, not memory), where it could number them with :meth:`number_rows` instead; ``None``: no
    limit; ``"auto"``: the engine's own rule (:meth:`_sorts_in_one_task_by_default`)."""

    def sorts_in_one_task(self, rows: int) -> bool:
        """Whether a table of ``rows`` rows is sorted with a window over the whole table rather
        than numbered with :meth:`number_rows` (see :attr:`one_task_sort_rows`)."""
        limit = self.one_task_sort_rows
        if limit == "auto":
            return self._sorts_in_one_task_by_default(rows)
        return limit is None or rows <= limit

    def _sorts_in_one_task_by_default(self, rows: int) -> bool:
        return True

    def require(self, capability: str) -> None:
        raise NotImplementedError

    def number_rows(self, name: str, query: exp.Expression, orders: Orders) -> None:
        """Create the temporary table ``name``: ``query``'s rows and, for each ``(column, by)`` of
        ``orders``, a BIGINT ``column`` holding the row's number from 1 when the rows are sorted by
        the columns ``by``, each ascending with NULLs last, as ``ROW_NUMBER() OVER (ORDER BY by)``
        numbers them. Rows equal on every column of ``by`` take consecutive numbers in no set
        order. The numbers are computed once: reading the table again reads the same numbers.
        """
        self.require("distributed_numbering")
        self._number_rows(name, query, [(c, list(by)) for c, by in orders])

    def _number_rows(self, name: str, query: exp.Expression, orders: list[tuple[str, list[str]]]) -> None:
        raise NotImplementedError
