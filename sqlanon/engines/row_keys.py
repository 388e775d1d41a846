"""The engine methods of capability ``stable_row_key``: naming and ordering a stored table's rows.

:class:`~sqlanon.engines.base.Engine` inherits them; an engine declaring the capability implements
:meth:`RowKeys._row_key` (and :meth:`RowKeys._row_order`, :meth:`RowKeys._has_row_keys` where the
defaults do not hold).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from sqlglot import exp

from sqlanon.engines.capabilities import Capabilities


class RowKeys:
    """A stored table's row key and storage order (capability ``stable_row_key``)."""

    capabilities: ClassVar[Capabilities]

    def require(self, capability: str) -> None:
        raise NotImplementedError

    def row_key(self, relation_alias: str | None = None) -> exp.Expression:
        """An expression naming each row of a stored table, stable between reads (capability
        ``stable_row_key``); qualified by ``relation_alias`` when given."""
        self.require("stable_row_key")
        return self._row_key(relation_alias)

    def _row_key(self, relation_alias: str | None) -> exp.Expression:
        raise NotImplementedError

    def has_row_keys(self, relation: exp.Table, columns: Sequence[str]) -> bool:
        """Whether :meth:`row_key` names the rows of ``relation``, whose columns are ``columns``: a
        stored table (not a view), with no column of the key's name (capability ``stable_row_key``)."""
        return self.capabilities.stable_row_key and self._has_row_keys(relation, columns)

    def _has_row_keys(self, relation: exp.Table, columns: Sequence[str]) -> bool:
        return False

    def row_order(self, relation_alias: str | None = None) -> exp.Expression:
        """An expression that sorts a stored table's rows in the order they were stored (capability
        ``stable_row_key``): the row key where it sorts so (DuckDB ``rowid``), else what the key is
        made of (PostgreSQL ``ctid``, whose text would sort block 10 before block 9)."""
        self.require("stable_row_key")
        return self._row_order(relation_alias)

    def _row_order(self, relation_alias: str | None) -> exp.Expression:
        return self._row_key(relation_alias)
