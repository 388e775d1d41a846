"""The exception hierarchy. Messages name the file, the key path and the rule; never data values of people."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


class SqlanonError(Exception):
    """Base class of every error sqlanon raises on purpose."""

    kind = "error"
    """A word naming the class of problem, for machine-readable output (``--json``)."""


class SpecError(SqlanonError, ValueError):
    """A specification value breaks a rule. The message starts with ``<file>: <key path>:``."""

    kind = "spec"

    def __init__(self, message: str, *, path: str = "", source: str | None = None) -> None:
        self.path = path
        self.source = source
        prefix = ""
        if source:
            prefix += f"{source}: "
        if path:
            prefix += f"{path}: "
        super().__init__(prefix + message)
        self.rule = message


class HierarchyError(SpecError):
    """A hierarchy is malformed, ragged, or does not cover the data."""

    kind = "hierarchy"


class UnsupportedError(SqlanonError):
    """The target dialect or engine cannot do what was asked."""

    kind = "unsupported"


class CompileError(SqlanonError):
    """A SQL tree could not be rendered for a dialect."""

    kind = "compile"


class EngineError(SqlanonError):
    """The database failed, or could not be opened.

    The message names what the statement was for and the engine's first line, never the statement:
    it holds salts, hierarchy labels and data values. ``sql`` is the statement with its salts
    redacted (shown by the command line's ``--debug`` only); the driver's error is the cause.
    """

    kind = "database"

    def __init__(self, message: str, *, sql: str | None = None, purpose: str | None = None,
                 detail: str | None = None) -> None:
        super().__init__(message)
        self.sql = sql
        self.purpose = purpose
        self.detail = detail if detail is not None else message
        """The engine's own words (first line, values removed)."""


class InfeasibleError(SqlanonError):
    """The privacy models cannot be met by the transformation within the suppression limit."""

    kind = "infeasible"


class RollbackRequiredError(SqlanonError):
    """A write failed in a way that may have left data in an inconsistent state."""

    kind = "rollback"


class InternalError(SqlanonError, AssertionError):
    """An invariant of sqlanon itself broke."""

    kind = "bug"

    def __init__(self, message: str) -> None:
        super().__init__(message + " This is probably a bug in sqlanon; please report it.")


def did_you_mean(name: str, choices: Iterable[str]) -> str:
    """Return `` Did you mean 'x'?`` for the closest choice, or an empty string.

    >>> did_you_mean("k_anonimity", ["k_anonymity", "l_diversity"])
    " Did you mean 'k_anonymity'?"
    """
    match = difflib.get_close_matches(str(name), list(choices), n=1, cutoff=0.6)
    return f" Did you mean {match[0]!r}?" if match else ""
