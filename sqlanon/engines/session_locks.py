"""What an engine shares between sessions of one database: its stored tables by prefix (staging
left by an interrupted run) and advisory locks. :class:`~sqlanon.engines.base.Engine` inherits the
defaults of an engine without other sessions (one process writes a DuckDB file)."""

from __future__ import annotations


class BetweenSessions:
    """Defaults: no stored tables to find, no locks to wait for."""

    def stored_tables(self, prefix: str) -> list[tuple[str, str]]:
        """``(schema, name)`` of the stored (not temporary) tables of the database whose names
        start with ``prefix``, in every schema."""
        return []

    def session_lock(self, key: int) -> bool:
        """Wait for the lock ``key`` shared by every session of the database and hold it; False
        when the engine has no such locks (one process writes a DuckDB file)."""
        return False

    def try_session_lock(self, key: int) -> bool:
        """Take the lock ``key`` if no other session holds it; True when this session holds it
        now, or when the engine has no such locks (no other session can hold it)."""
        return True

    def session_unlock(self, key: int) -> None:
        """Release the lock ``key`` of :meth:`session_lock` or :meth:`try_session_lock` (if any)."""
        return None
