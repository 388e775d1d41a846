"""Generalization hierarchies: value-per-level tables (ARX CSV) and builders that compile to SQL.

- :mod:`~sqlanon.domain.hierarchy.base`: the :class:`Hierarchy` interface and :class:`HierarchyTable`.
- :mod:`~sqlanon.domain.hierarchy.table`: :class:`TableHierarchy`, ARX CSV reading/writing, validation.
- :mod:`~sqlanon.domain.hierarchy.intervals`, :mod:`~sqlanon.domain.hierarchy.dates`,
  :mod:`~sqlanon.domain.hierarchy.masks`, :mod:`~sqlanon.domain.hierarchy.groups`: the builders.
- :mod:`~sqlanon.domain.hierarchy.materialize`: any hierarchy as rows over given values or a column.
"""

from __future__ import annotations

from sqlanon.domain.hierarchy.base import Hierarchy, HierarchyTable, SqlanonWarning
from sqlanon.domain.hierarchy.builders import (
    DateHierarchy,
    IntervalHierarchy,
    MapHierarchy,
    MaskHierarchy,
    OrderedHierarchy,
)
from sqlanon.domain.hierarchy.materialize import materialize, materialize_column, uncovered_values
from sqlanon.domain.hierarchy.table import TableHierarchy, read_arx_csv, write_arx_csv

__all__ = [
    "DateHierarchy",
    "Hierarchy",
    "HierarchyTable",
    "IntervalHierarchy",
    "MapHierarchy",
    "MaskHierarchy",
    "OrderedHierarchy",
    "SqlanonWarning",
    "TableHierarchy",
    "materialize",
    "materialize_column",
    "read_arx_csv",
    "uncovered_values",
    "write_arx_csv",
]
