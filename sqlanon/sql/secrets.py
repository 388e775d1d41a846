"""Secret literals (identifier salts) and SQL shown to people with those secrets redacted.

A salt has to be in the SQL that hashes with it, but never in an error message or a log. Salts are
built with :func:`secret`, which marks the literal and remembers its value for this process; SQL shown
to a person goes through :func:`redacted_sql`, which replaces every such literal in the parsed tree
(so a salt is found by what it is in the statement, not by matching text).
"""

from __future__ import annotations

from sqlglot import exp, parse
from sqlglot.errors import SqlglotError

PLACEHOLDER = "<redacted salt>"

_secrets: set[str] = set()
"""Every secret built in this process: statements run as text (output scripts) lose the tree's marks."""


def secret(value: str) -> exp.Literal:
    """A string literal holding a secret (shown as ``'<redacted salt>'`` by :func:`redacted_sql`)."""
    _secrets.add(value)
    literal = exp.Literal.string(value)
    literal.meta["secret"] = True
    return literal


def _is_secret(node: exp.Expression) -> bool:
    return isinstance(node, exp.Literal) and node.is_string and (
        bool(node.meta.get("secret")) or node.this in _secrets)


def _redact(tree: exp.Expression) -> exp.Expression:
    return tree.copy().transform(
        lambda node: exp.Literal.string(PLACEHOLDER) if _is_secret(node) else node, copy=False)


def redacted_sql(statement: exp.Expression | str, dialect: str) -> str:
    """The statement as SQL with every secret literal replaced by ``'<redacted salt>'``.

    SQL text is parsed first; text that cannot be parsed is not shown at all (a message says so),
    since its secrets could not be found.
    """
    if isinstance(statement, exp.Expression):
        return _redact(statement).sql(dialect=dialect, pretty=True)
    if not _secrets:
        return statement
    try:
        trees = [t for t in parse(statement, read=dialect) if isinstance(t, exp.Expression)]
    except SqlglotError:
        return "(the statement is not shown: it could not be parsed to redact its salts)"
    return ";\n".join(_redact(t).sql(dialect=dialect, pretty=True) for t in trees)
