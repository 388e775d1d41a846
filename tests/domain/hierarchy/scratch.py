"""Hierarchies materialized over values in an in-memory DuckDB, as the methods do it."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sqlanon.domain.hierarchy import Hierarchy, HierarchyTable
from sqlanon.domain.hierarchy import materialize as materialize_on
from sqlanon.engines import connect


def materialize(h: Hierarchy, values: Iterable[Any]) -> HierarchyTable:
    with connect() as scratch:
        return materialize_on(h, values, scratch)
