"""Generalization hierarchies: value-per-level tables (ARX CSV) and builders that compile to SQL.

- :mod:`~sqlanon.hierarchy.base`: the :class:`Hierarchy` interface and :class:`HierarchyTable`.
- :mod:`~sqlanon.hierarchy.table`: :class:`TableHierarchy`, ARX CSV reading/writing, validation.
- :mod:`~sqlanon.hierarchy.intervals`, :mod:`~sqlanon.hierarchy.dates`,
  :mod:`~sqlanon.hierarchy.masks`, :mod:`~sqlanon.hierarchy.groups`: the builders.
- :mod:`~sqlanon.hierarchy.materialize`: any hierarchy as rows over given values or a column.
"""

from __future__ import annotations

from sqlanon.hierarchy.base import Hierarchy, HierarchyTable, SqlanonWarning
from sqlanon.hierarchy.builders import (
    DateHierarchy,
    IntervalHierarchy,
    MapHierarchy,
    MaskHierarchy,
    OrderedHierarchy,
)
from sqlanon.hierarchy.materialize import materialize, materialize_column, uncovered_values
from sqlanon.hierarchy.table import TableHierarchy, read_arx_csv, write_arx_csv

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
