"""Staging relations: the names writers give the tables they fill before the output appears, and
the removal of those that interrupted runs left behind.

Every staging or scratch relation sqlanon creates is named ``__sa_stage_<token>`` or
``__sa_stage_<token>_<part>`` (:func:`staging_name`), ``<token>`` being 12 hex digits: random for a
run (:class:`StagingArea`), or derived from the target's name where printed SQL must stay the same
from one compilation to the next.

Most writers create their staging table and rename it into place inside one transaction, so a
killed process leaves nothing. The DuckDB noise writer cannot (its row blocks commit one by one on
several cursors), so a killed run can leave its staging table behind. The next writing run removes
such leftovers (:func:`remove_leftovers`), but never those of a run that is still alive:

- a run registers its token in this process for as long as its :class:`StagingArea` is open (several
  runs may share one process);
- on PostgreSQL the run also holds a session advisory lock keyed by the token, so another process
  can tell a live run (lock held) from a dead one (the server released the lock with the session);
- a DuckDB file is opened for writing by one process at a time, so in a process that writes to it,
  a token not registered in that process belongs to a dead run.

Staging tables of earlier versions of sqlanon (``__sa_noise_<12 hex digits>``, left by the DuckDB
noise writer) are removed too.
"""

from __future__ import annotations

import logging
import re
import secrets
import threading
from types import TracebackType
from typing import TYPE_CHECKING

from sqlanon.errors import EngineError
from sqlanon.sql.nodes import INTERNAL_PREFIX, internal

if TYPE_CHECKING:
    from sqlanon.engines.base import Engine

log = logging.getLogger("sqlanon")

PREFIX = internal("stage_")
"""The prefix of every staging relation's name."""

_NAME = re.compile(r"__sa_stage_(?P<token>[0-9a-f]{12})(?:_[a-z0-9]+)*")
_LEGACY = re.compile(r"__sa_noise_[0-9a-f]{12}(?:_u)?")
_TOKEN = re.compile(r"[0-9a-f]{12}")
_PART = re.compile(r"[a-z0-9]+")

_live: set[str] = set()
_live_lock = threading.Lock()


def new_token() -> str:
    """12 random hex digits."""
    return secrets.token_hex(6)


def staging_name(token: str, part: str = "") -> str:
    """``__sa_stage_<token>`` or ``__sa_stage_<token>_<part>``.

    >>> staging_name("0123456789ab", "u")
    '__sa_stage_0123456789ab_u'
    """
    if not _TOKEN.fullmatch(token):
        raise ValueError(f"a staging token is 12 hex digits, not {token!r}")
    if part and not _PART.fullmatch(part):
        raise ValueError(f"a staging name's part is lower-case letters and digits, not {part!r}")
    return PREFIX + token + (f"_{part}" if part else "")


def token_of(name: str) -> str | None:
    """The token of a staging relation's name; None for any other name (legacy ones included).

    >>> token_of("__sa_stage_0123456789ab_u"), token_of("people")
    ('0123456789ab', None)
    """
    match = _NAME.fullmatch(name)
    return match["token"] if match else None


def is_staging(name: str) -> bool:
    """Whether ``name`` is a staging relation's, of this version or an earlier one."""
    return _NAME.fullmatch(name) is not None or _LEGACY.fullmatch(name) is not None


def _lock_key(token: str) -> int:
    """The token as a PostgreSQL advisory lock key (48 bits: always a valid bigint)."""
    return int(token, 16)


class StagingArea:
    """The staging names of one run, marked live while the area is open.

    Open it before creating the first staging relation and close it after the last one was renamed
    or dropped; on PostgreSQL it holds a session advisory lock on ``engine``'s connection meanwhile.
    """

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.token = new_token()
        self._locked = False

    def name(self, part: str = "") -> str:
        return staging_name(self.token, part)

    def __enter__(self) -> StagingArea:
        with _live_lock:
            _live.add(self.token)
        self._locked = self.engine.session_lock(_lock_key(self.token))
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        try:
            if self._locked:
                self._locked = False
                self.engine.session_unlock(_lock_key(self.token))
        except EngineError:
            if error is None:  # a dead connection released the lock with the session anyway
                raise
        finally:
            with _live_lock:
                _live.discard(self.token)


def _candidates(engine: Engine) -> list[tuple[str, str]]:
    """``(schema, name)`` of the stored (not temporary) relations named like staging ones."""
    rows = engine.stored_tables(INTERNAL_PREFIX)
    return sorted((str(s), str(n)) for s, n in rows if is_staging(str(n)))


def _owner_alive(engine: Engine, token: str | None) -> bool:
    """Whether the run that named a staging relation with ``token`` may still be running; on
    PostgreSQL, when it is not, this session holds the token's lock on return (release it)."""
    if token is None:  # an earlier version's name: no run of this version owns it
        return False
    with _live_lock:
        if token in _live:
            return True
    return not engine.try_session_lock(_lock_key(token))


def remove_leftovers(engine: Engine) -> list[str]:
    """Drop the staging relations of runs that died, in every schema of ``engine``'s database.

    Returns the names removed (``schema.name``) and logs them on the ``sqlanon`` logger. A relation
    that cannot be dropped (no privilege, a read-only database) is left and not listed.
    """
    try:
        candidates = _candidates(engine)
    except EngineError:
        return []
    removed = []
    for schema, name in candidates:
        token = token_of(name)
        if _owner_alive(engine, token):
            continue
        try:
            engine.drop(name, schema=schema)
            removed.append(f"{schema}.{name}")
        except EngineError:
            pass
        finally:
            if token is not None:
                engine.session_unlock(_lock_key(token))
    if removed:
        log.warning("removed %d staging table%s left by interrupted runs: %s", len(removed),
                    "" if len(removed) == 1 else "s", ", ".join(removed))
    return removed
