"""Replacing a table on an engine without transactions (capability ``recoverable_swap``): the
result is staged under a name of its own, then swapped in by two renames, and each step is
recorded in marks stored with the tables, so that a process killed at any moment leaves the
original or the result readable and the next run completes or undoes the swap.

The steps, for table ``T`` and a run token ``<t>``; each is one statement of the engine:

1. ``CREATE TABLE __sa_swap_<t>_new AS <query>``, marked with the target's name by the same
   statement (a failed CREATE leaves no table; a killed one none, or one the recovery drops);
2. the staged table is counted (all of it is read back) and its mark records the count;
3. ``T`` is renamed ``__sa_swap_<t>_old``: the original keeps its rows under that name;
4. ``__sa_swap_<t>_new`` is renamed ``T``: the commit point, after which ``T`` is the result;
5. ``__sa_swap_<t>_old`` is dropped, then the result's marks are removed.

:func:`recover`, run before a table is read or replaced, reads the marks: before the commit point
it restores the original (renames it back if step 3 ran, drops the staged result), after it it
completes the swap (drops the old copy, removes the marks). A run interrupted before the commit
point is thus undone, so running it again anonymizes the original, not a half-finished result.
Two runs must not replace the same table at the same time: the recovery of one would take the
swap of the other for an interrupted one.
"""

from __future__ import annotations

import logging
import os
import re
import time
from pathlib import Path
from typing import Protocol, runtime_checkable

from sqlglot import exp

from sqlanon.engines.base import Engine
from sqlanon.engines.staging import new_token
from sqlanon.errors import EngineError
from sqlanon.sql.nodes import internal

log = logging.getLogger("sqlanon")

PREFIX = internal("swap_")
"""The prefix of the staged result (``…_new``) and of the original moved aside (``…_old``)."""
# not "token": Spark shows the value of a property whose key says token, secret or password redacted
TARGET, TOKEN, STEP, ROWS = (f"sqlanon.swap.{k}" for k in ("target", "run", "step", "rows"))
PAUSE = "SQLANON_SWAP_PAUSE"
"""``<step>=<file>``: on reaching the step, write the file and wait (for the kill tests)."""

_NAME = re.compile(r"__sa_swap_(?P<token>[0-9a-f]{12})_(?P<part>new|old)")


@runtime_checkable
class TableMarks(Protocol):
    """Key-value marks stored with a table in the catalog, read and written one statement at a time."""

    def create_marked(self, name: str, query: exp.Expression, marks: dict[str, str], *,
                      schema: str | None = None) -> None:
        """``CREATE TABLE name AS query`` with ``marks`` stored with it by the same statement."""

    def marks(self, name: str, *, schema: str | None = None) -> dict[str, str]:
        """The table's marks (of this module: keys ``sqlanon.swap.*``)."""

    def mark(self, name: str, marks: dict[str, str], *, schema: str | None = None) -> None:
        """Set ``marks`` on the table (others stay)."""

    def unmark(self, name: str, keys: list[str], *, schema: str | None = None) -> None:
        """Remove the marks ``keys`` from the table."""

    def tables_named(self, prefix: str, *, schema: str | None = None) -> list[str]:
        """The stored tables of ``schema`` (default: the current one) whose names start with ``prefix``."""


def _marks(engine: Engine) -> TableMarks:
    engine.require("recoverable_swap")
    if not isinstance(engine, TableMarks):  # a declaration without its methods
        raise EngineError(f"{engine.name} declares recoverable_swap but keeps no table marks")
    return engine


def swap_names(token: str) -> tuple[str, str]:
    """The staged result's and the moved original's names for a run's ``token``.

    >>> swap_names("0123456789ab")
    ('__sa_swap_0123456789ab_new', '__sa_swap_0123456789ab_old')
    """
    return f"{PREFIX}{token}_new", f"{PREFIX}{token}_old"


def _reached(step: str) -> None:
    """Where the kill tests stop a run: with ``SQLANON_SWAP_PAUSE=<step>=<file>``, the file is
    written and the run waits to be killed."""
    wanted, _, marker = os.environ.get(PAUSE, "").partition("=")
    if wanted == step and marker:
        Path(marker).write_text(step, encoding="utf-8")
        time.sleep(600)


def replace_table(engine: Engine, name: str, query: exp.Expression, *,
                  schema: str | None = None) -> int:
    """Replace table ``name`` by the rows of ``query`` in the recorded steps above; returns the
    number of rows written. An error before the commit point undoes what was done."""
    marks = _marks(engine)
    token = new_token()
    new, old = swap_names(token)
    marks.create_marked(new, query, {TARGET: name, TOKEN: token, STEP: "created"}, schema=schema)
    moved = False
    try:
        _reached("created")
        rows = engine.row_count(new, schema=schema)
        marks.mark(new, {STEP: "staged", ROWS: str(rows)}, schema=schema)
        _reached("staged")
        engine.rename_table(name, old, schema=schema)
        moved = True
        _reached("moved")
        engine.rename_table(new, name, schema=schema)
    except BaseException:
        if moved:
            engine.rename_table(old, name, schema=schema)
        engine.drop(new, schema=schema)
        raise
    _reached("swapped")
    engine.drop(old, schema=schema)
    _reached("dropped")
    marks.unmark(name, [TARGET, TOKEN, STEP, ROWS], schema=schema)
    return rows


def swapped_in(engine: Engine, name: str, *, schema: str | None = None) -> bool:
    """Whether table ``name`` holds the result of a replacement that passed its commit point and
    was not completed (its old copy or its marks are still to be removed)."""
    if not engine.capabilities.recoverable_swap or not engine.relation_exists(name, schema):
        return False
    return bool(_marks(engine).marks(name, schema=schema).get(TOKEN))


def recover(engine: Engine, name: str, *, schema: str | None = None) -> list[str]:
    """Complete or undo every interrupted swap of table ``name``; returns (and logs) what was done,
    one sentence per swap."""
    if not engine.capabilities.recoverable_swap or (schema is not None and not engine.schema_exists(schema)):
        return []
    marks = _marks(engine)
    where = f"{schema}.{name}" if schema else name
    found = (_NAME.fullmatch(t) for t in marks.tables_named(PREFIX, schema=schema))
    staged = sorted(m["token"] for m in found if m and m["part"] == "new")
    done = []
    exists = engine.relation_exists(name, schema)
    own = marks.marks(name, schema=schema) if exists else {}
    if own.get(TOKEN):  # renamed into place: the swap passed its commit point
        _, old = swap_names(own[TOKEN])
        if engine.relation_exists(old, schema):
            engine.drop(old, schema=schema)
        marks.unmark(name, [TARGET, TOKEN, STEP, ROWS], schema=schema)
        done.append(f"completed the interrupted replacement of {where!r}: it holds the result "
                    f"({own.get(ROWS, '?')} rows), and the original's old copy {old!r} was dropped")
    for token in staged:
        new, old = swap_names(token)
        if marks.marks(new, schema=schema).get(TARGET) != name:
            continue
        has_old = engine.relation_exists(old, schema)
        if has_old and not exists:
            engine.rename_table(old, name, schema=schema)
            exists = True
            state = f"restored the original of {where!r} from {old!r}"
        elif not has_old and exists:
            state = f"kept the original of {where!r}, untouched"
        else:
            raise EngineError(f"an interrupted replacement of {where!r} left {new!r} (the result) "
                              f"and {old!r} (the original) in a state sqlanon cannot resolve: "
                              f"{where!r} {'exists' if exists else 'is missing'} and {old!r} "
                              f"{'exists' if has_old else 'is missing'}; keep the one you need "
                              f"under {name!r} and drop the others")
        engine.drop(new, schema=schema)
        done.append(f"undid the interrupted replacement of {where!r}: {state}; its unfinished "
                    f"result {new!r} was dropped")
    for line in done:
        log.warning("%s", line)
    return done
