"""Generalization hierarchies: value-per-level tables (ARX CSV) and builders that compile to SQL."""

from __future__ import annotations

from sqlanon.hierarchy.base import Hierarchy, HierarchyTable, SqlanonWarning
from sqlanon.hierarchy.builders import DateHierarchy, IntervalHierarchy, MaskHierarchy, OrderedHierarchy
from sqlanon.hierarchy.table import TableHierarchy, read_arx_csv, write_arx_csv

__all__ = [
    "DateHierarchy",
    "Hierarchy",
    "HierarchyTable",
    "IntervalHierarchy",
    "MaskHierarchy",
    "OrderedHierarchy",
    "SqlanonWarning",
    "TableHierarchy",
    "read_arx_csv",
    "write_arx_csv",
]
