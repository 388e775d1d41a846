"""The engine method of capability ``grouped_arrow_map``: Python run on groups of rows, in the engine.

:class:`~sqlanon.engines.base.Engine` inherits it; an engine declaring the capability implements
:meth:`ArrowGroups._map_arrow_groups`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from sqlglot import exp

if TYPE_CHECKING:
    import pyarrow as pa

ArrowFunction = Callable[["pa.Table"], "pa.Table"]
"""One group's rows in, the rows to write for it out. It runs where the engine runs Python (on a
cluster, on the executors), so it must be picklable and import only what those processes have."""


class ArrowGroups:
    """Running a Python function on each group of a query's rows (capability ``grouped_arrow_map``)."""

    def require(self, capability: str) -> None:
        raise NotImplementedError

    def map_arrow_groups(self, name: str, query: exp.Expression, by: Sequence[str],
                         function: ArrowFunction, columns: Sequence[tuple[str, str]], *,
                         temporary: bool = True, schema: str | None = None) -> None:
        """Create the table ``name`` (temporary, or stored in ``schema``) holding what ``function``
        returns for each group of ``query``'s rows sharing their values of the columns ``by``; each
        group is handed over whole, as one Arrow table of every column of ``query``.

        ``columns`` are the ``(name, type)`` of what ``function`` returns, types as the engine
        names them (:meth:`~sqlanon.engines.base.Engine.columns`). The function runs before this
        returns, so its errors are raised here (:class:`~sqlanon.errors.EngineError` with the
        function's message).
        """
        self.require("grouped_arrow_map")
        self._map_arrow_groups(name, query, list(by), function, list(columns), temporary, schema)

    def _map_arrow_groups(self, name: str, query: exp.Expression, by: list[str], function: ArrowFunction,
                          columns: list[tuple[str, str]], temporary: bool, schema: str | None) -> None:
        raise NotImplementedError
