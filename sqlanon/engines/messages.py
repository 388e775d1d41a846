"""Engine errors in a few words: the step that failed and the driver's first line, without values."""

from __future__ import annotations

import re

from sqlglot import exp

from sqlanon.sql.nodes import INTERNAL_PREFIX

_QUOTED = re.compile(r"'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"")
_SINGLE_QUOTED = re.compile(r"'(?:[^']|'')*'")
# the failure the output SQL raises itself past the suppression limit: counts only, no data
_NOT_ANONYMOUS = re.compile(r"sqlanon: not anonymous: \d+ rows [^'\"]*? of \d+ rows")
_NUMBER = re.compile(r"(?<![\w.])[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?(?![\w.])")
# DB-API and driver classes whose messages quote the data (or the statement's text) they failed on
_ECHOING = {"DataError", "IntegrityError", "InvalidInputException", "ConstraintException",
            "ConversionException", "OutOfRangeException", "ParserException", "SyntaxException",
            "SyntaxError"}


def driver_message(error: BaseException) -> str:
    """The first line of a driver's error, without the values it quotes from the statement or data.

    Engines add context lines (DuckDB's ``LINE 1: <statement>``, PostgreSQL's ``DETAIL: Key
    (...)=(...)``) and quote literals (``'S3cretSalt!'``) and data values (``Could not convert string
    'Alice'``): only the first line stays, single-quoted text always becomes ``'…'``, and for errors
    about data or syntax double-quoted text and numbers become ``…`` too.
    """
    own = _NOT_ANONYMOUS.search(str(error))
    if own:
        return own.group(0)
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    first = lines[0] if lines else type(error).__name__
    if _ECHOING & {c.__name__ for c in type(error).__mro__}:
        return _NUMBER.sub("…", _QUOTED.sub("…", first))
    return _SINGLE_QUOTED.sub("'…'", first)


def describe(statement: exp.Expression | str) -> str:
    """A short name for what a statement does (``create table people_anon``), without its literals.

    >>> import sqlglot
    >>> describe(sqlglot.parse_one("DROP TABLE IF EXISTS people_anon"))
    'drop table people_anon'
    >>> describe(sqlglot.parse_one("CREATE TABLE people_anon AS SELECT 1"))
    'create table people_anon'
    >>> describe(sqlglot.parse_one("DROP TABLE __sa_0_verdict"))
    'drop a working table'
    """
    if not isinstance(statement, exp.Expression):
        return "a statement"
    target = statement.this if isinstance(statement, (exp.Create, exp.Insert, exp.Alter)) else None
    if isinstance(target, exp.Schema):
        target = target.this
    if isinstance(statement, exp.Drop):  # sqlglot keeps a DROP's tables under "tables" (older: "this")
        dropped = statement.args.get("tables") or statement.expressions or [statement.this]
        target = dropped[0]
    name = target.name if isinstance(target, exp.Table) else ""
    if name.startswith(INTERNAL_PREFIX):
        verb = "insert into" if isinstance(statement, exp.Insert) else type(statement).__name__.lower()
        return f"{verb} a working table"
    if isinstance(statement, exp.Create):
        return f"create {str(statement.args.get('kind') or 'relation').lower()} {name}".strip()
    if isinstance(statement, exp.Insert):
        return f"insert into {name}".strip()
    if isinstance(statement, exp.Drop):
        return f"drop {str(statement.args.get('kind') or '').lower()} {name}".strip()
    if isinstance(statement, exp.Alter):
        return f"alter {name}".strip()
    if isinstance(statement, exp.Query):
        return "a query"
    return "a statement"
