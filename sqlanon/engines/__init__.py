"""Database engines behind one small interface. Nothing outside this package knows which engine runs:
it asks an engine's :class:`Capabilities` instead."""

from __future__ import annotations

from sqlanon.engines.base import Engine
from sqlanon.engines.capabilities import Capabilities
from sqlanon.engines.connect import connect

__all__ = ["Capabilities", "Engine", "connect"]
