"""Which DuckDB views read a given table.

DuckDB keeps a view as SQL text and binds it when queried; it records no dependency on the tables
the view reads, so it lets such a table be dropped and replaced, and the view then reads whatever
took the name. The views' SQL (``duckdb_views().sql``) is parsed with sqlglot and every table it
reads is resolved the way DuckDB binds a view: a name without schema is looked up in the view's own
schema first, then along the search path. A view whose SQL cannot be parsed counts as reading the
table when the table's name appears in it (refusing is safer than breaking the view).
"""

from __future__ import annotations

import string
from collections.abc import Iterable

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.optimizer.scope import traverse_scope

Relation = tuple[str, str, str]
"""(catalog, schema, name)."""

_ASCII_LOWER = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)


def _fold(name: str) -> str:
    return name.translate(_ASCII_LOWER)  # DuckDB compares names ignoring ASCII case only


def _tables_read(sql: str) -> list[exp.Table] | None:
    """The tables a view's query reads (CTE names excluded), or None when sqlglot cannot tell."""
    try:
        tree = sqlglot.parse_one(sql, read="duckdb")
        query = tree.expression if isinstance(tree, exp.Create) else tree
        found: list[exp.Table] = []
        for scope in traverse_scope(query):
            found += [s for s in scope.sources.values() if isinstance(s, exp.Table) and s.name]
        return found
    except (SqlglotError, RecursionError, ValueError, KeyError, AttributeError):
        return None


def _candidates(ref: exp.Table, view: Relation, current: tuple[str, str],
                relations: set[Relation]) -> set[tuple[str, str]]:
    """The (catalog, schema) pairs, folded, that ``ref`` in a view stored in ``view`` may resolve to."""
    catalog, schema = _fold(ref.catalog), _fold(ref.db)
    view_catalog, view_schema = _fold(view[0]), _fold(view[1])
    if catalog:
        return {(catalog, schema)}
    if schema:  # `a.t`: schema a of the view's or the current database, or database a's main schema
        return {(view_catalog, schema), (_fold(current[0]), schema), (schema, "main")}
    if (view_catalog, view_schema, _fold(ref.name)) in relations:
        return {(view_catalog, view_schema)}
    return {(view_catalog, view_schema), ("temp", "main"), (_fold(current[0]), _fold(current[1])),
            (_fold(current[0]), "main"), (view_catalog, "main")}


def views_reading(source: Relation, views: Iterable[tuple[str, str, str, str]], current: tuple[str, str],
                  relations: set[Relation]) -> list[str]:
    """``schema.view`` of each view in ``views`` (catalog, schema, name, SQL) that reads ``source``.

    ``current`` is the session's (database, schema); ``relations`` every (catalog, schema, name) of
    the database, folded.
    """
    catalog, schema, name = (_fold(p) for p in source)
    found = []
    for view in views:
        view_catalog, view_schema, view_name, sql = view
        refs = _tables_read(sql)
        if refs is None:
            reads = name in _fold(sql)
        else:
            reads = any(_fold(r.name) == name
                        and (catalog, schema) in _candidates(r, view[:3], current, relations)
                        for r in refs)
        if reads and (_fold(view_catalog), _fold(view_schema), _fold(view_name)) != (catalog, schema, name):
            found.append(f"{view_schema}.{view_name}")
    return found
