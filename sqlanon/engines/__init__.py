"""Database engines behind one small interface. Nothing outside this package knows which engine runs."""

from __future__ import annotations

from sqlanon.engines.base import Engine
from sqlanon.engines.connect import connect

__all__ = ["Engine", "connect"]
