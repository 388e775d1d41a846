"""Render sqlglot trees to SQL text for a target, strictly."""

from __future__ import annotations

from sqlglot import ErrorLevel, exp
from sqlglot.errors import SqlglotError

from sqlanon.errors import CompileError
from sqlanon.sql.dialects import DialectProfile, profile, stored_names


def check_functions(tree: exp.Expression, target: DialectProfile) -> None:
    for node in tree.find_all(exp.Func):
        name = node.name if isinstance(node, exp.Anonymous) else None
        cls = type(node).__name__
        if isinstance(node, (exp.Connector, exp.Binary, exp.Predicate, exp.Unary)):
            continue  # operators, not functions
        target.check_function(cls, name)


def render(tree: exp.Expression, dialect: str | DialectProfile = "duckdb", *, pretty: bool = False,
           copy: bool = True) -> str:
    """SQL text for ``tree`` on ``dialect``; raises if the target lacks a function used by the tree.
    ``copy`` False: the generator works on ``tree`` itself (see
    :attr:`~sqlanon.sql.dialects.DialectProfile.renders_in_place`).

    Names are written in the case the target stores them (:func:`~sqlanon.sql.dialects.stored_case`).

    >>> from sqlanon.sql.nodes import col
    >>> render(exp.select(col("age")).from_("t"), "postgres")
    'SELECT "age" FROM t'
    """
    target = dialect if isinstance(dialect, DialectProfile) else profile(dialect)
    check_functions(tree, target)
    tree = stored_names(tree, target)
    try:
        return tree.sql(dialect=target.sqlglot, copy=copy, pretty=pretty, unsupported_level=ErrorLevel.RAISE)
    except SqlglotError as e:
        raise CompileError(f"Cannot render SQL for {target.name}: {e}") from e
