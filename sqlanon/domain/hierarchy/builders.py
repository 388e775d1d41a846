"""Hierarchies defined by a rule rather than a file.

Intervals, dates and masks compile each level to a SQL expression; ordered runs and maps build a
:class:`~sqlanon.domain.hierarchy.table.TableHierarchy`.
"""

from __future__ import annotations

from sqlanon.domain.hierarchy.dates import DATE_UNITS, DateHierarchy
from sqlanon.domain.hierarchy.groups import MapHierarchy, OrderedHierarchy
from sqlanon.domain.hierarchy.intervals import IntervalHierarchy
from sqlanon.domain.hierarchy.masks import MaskHierarchy

__all__ = ["DATE_UNITS", "DateHierarchy", "IntervalHierarchy", "MapHierarchy", "MaskHierarchy",
           "OrderedHierarchy"]
