"""The engine interface: run SQL, fetch results, create tables and views, transactions."""

from __future__ import annotations

import abc
import contextlib
import logging
import re
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from sqlglot import exp

from sqlanon.sql.dialects import DialectProfile, adapt, profile
from sqlanon.sql.render import render
from sqlanon.sql.secrets import redacted_sql
from sqlanon.sql.nodes import INTERNAL_PREFIX, ident, table
from sqlanon.errors import EngineError

if TYPE_CHECKING:
    import numpy as np
    import pyarrow as pa

log = logging.getLogger("sqlanon")

Statement = "exp.Expression | str"

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
    """A short name for what a statement does (``create table people_anon``), without its literals."""
    if not isinstance(statement, exp.Expression):
        return "a statement"
    target = statement.this if isinstance(statement, (exp.Create, exp.Insert, exp.Alter)) else None
    if isinstance(target, exp.Schema):
        target = target.this
    if isinstance(statement, exp.Drop) and statement.expressions:
        target = statement.expressions[0]
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


class Engine(abc.ABC):
    """A connection to one database.

    Statements are sqlglot trees (rendered here for the engine's dialect) or SQL text that sqlanon
    rendered itself. Subclasses implement the ``_``-prefixed hooks.
    """

    name: ClassVar[str]
    dialect_name: ClassVar[str]
    _purposes: list[str]

    @property
    def dialect(self) -> DialectProfile:
        return profile(self.dialect_name)

    # -- rendering -------------------------------------------------------------------------------
    def sql(self, statement: exp.Expression | str) -> str:
        return statement if isinstance(statement, str) else render(adapt(statement, self.dialect),
                                                                   self.dialect)

    # -- hooks ------------------------------------------------------------------------------------
    @abc.abstractmethod
    def _execute(self, sql: str) -> None: ...

    @abc.abstractmethod
    def _fetch_rows(self, sql: str) -> tuple[list[str], list[tuple[Any, ...]]]: ...

    @abc.abstractmethod
    def _begin(self) -> None: ...

    @abc.abstractmethod
    def _commit(self) -> None: ...

    @abc.abstractmethod
    def _rollback(self) -> None: ...

    @abc.abstractmethod
    def columns(self, relation: str, schema: str | None = None) -> list[tuple[str, str]]:
        """``(name, type)`` of a table or view's columns, in order; raises if it does not exist.

        Without ``schema`` the name is resolved as an unqualified name in SQL would be."""

    @abc.abstractmethod
    def relation_exists(self, relation: str, schema: str | None = None) -> bool:
        """Whether ``schema.relation`` (or ``relation`` resolved as in SQL) names a table or view,
        compared as the engine compares names."""

    @abc.abstractmethod
    def schema_exists(self, schema: str) -> bool: ...

    @abc.abstractmethod
    def dependent_views(self, relation: str, schema: str | None = None) -> list[str]:
        """``schema.view`` of every view that reads the table (and would break if it were replaced)."""

    @abc.abstractmethod
    def close(self) -> None: ...

    # -- errors -----------------------------------------------------------------------------------
    @contextlib.contextmanager
    def purpose(self, what: str) -> Iterator[None]:
        """Name the step the statements inside belong to (``class statistics``), for their errors."""
        if "_purposes" not in self.__dict__:
            self._purposes = []
        self._purposes.append(what)
        try:
            yield
        finally:
            self._purposes.pop()

    def _log(self, statement: exp.Expression | str) -> None:
        if log.isEnabledFor(logging.DEBUG):
            log.debug("%s: %s", self.name, redacted_sql(statement, self.dialect.sqlglot))

    def error(self, error: BaseException, statement: exp.Expression | str,
              purpose: str | None = None) -> EngineError:
        """An :class:`EngineError` for a driver error: the step and the engine's first line; the
        statement (salts redacted) only in its ``sql``."""
        what = purpose or (self.__dict__.get("_purposes") or [None])[-1] or describe(statement)
        detail = driver_message(error)
        return EngineError(f"{self.name}: {what} failed: {detail}",
                           sql=redacted_sql(statement, self.dialect.sqlglot), purpose=what,
                           detail=detail)

    # -- public API -------------------------------------------------------------------------------
    def execute(self, statement: exp.Expression | str, *, purpose: str | None = None) -> None:
        sql = self.sql(statement)
        self._log(statement)
        try:
            self._execute(sql)
        except Exception as e:  # driver errors differ per engine; keep the cause
            raise self.error(e, statement, purpose) from e

    def execute_many(self, statements: Sequence[exp.Expression | str]) -> None:
        for s in statements:
            self.execute(s)

    def insert_rows(self, name: str, rows: Sequence[tuple[Any, ...]], *, schema: str | None = None
                    ) -> None:
        """Append rows to a table, values bound as parameters (one statement, many rows)."""
        if not rows:
            return
        statement = self.sql(exp.insert(exp.values([tuple(exp.Placeholder() for _ in rows[0])]),
                                        table(name, schema)))
        self._execute_many(statement, rows)

    def _execute_many(self, sql: str, rows: Sequence[tuple[Any, ...]]) -> None:
        raise NotImplementedError

    def fetch(self, query: exp.Expression | str, *, purpose: str | None = None
              ) -> tuple[list[str], list[tuple[Any, ...]]]:
        """Column names and rows of a query."""
        sql = self.sql(query)
        self._log(query)
        try:
            return self._fetch_rows(sql)
        except Exception as e:
            raise self.error(e, query, purpose) from e

    def fetch_dicts(self, query: exp.Expression | str) -> list[dict[str, Any]]:
        names, rows = self.fetch(query)
        return [dict(zip(names, r)) for r in rows]

    def fetch_one(self, query: exp.Expression | str) -> dict[str, Any]:
        rows = self.fetch_dicts(query)
        if len(rows) != 1:
            raise EngineError(f"expected one row, got {len(rows)}")
        return rows[0]

    def fetch_arrow(self, query: exp.Expression | str) -> pa.Table:
        import pyarrow as pa

        names, rows = self.fetch(query)
        return pa.Table.from_pylist([dict(zip(names, r)) for r in rows], schema=None) if rows else \
            pa.table({n: [] for n in names})

    def fetch_numpy(self, query: exp.Expression | str) -> dict[str, np.ndarray]:
        import numpy as np

        names, rows = self.fetch(query)
        cols: list[tuple[Any, ...]] = list(zip(*rows)) if rows else [() for _ in names]
        return {n: np.asarray(c) for n, c in zip(names, cols)}

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        """All statements inside commit together, or none do."""
        self._begin()
        try:
            yield
        except BaseException:
            self._rollback()
            raise
        else:
            self._commit()

    def create_table_as(self, name: str, query: exp.Expression, *, replace: bool = False,
                        temporary: bool = False, schema: str | None = None) -> None:
        self.execute(exp.Create(this=table(name, schema), kind="TABLE", expression=query, replace=replace,
                                properties=exp.Properties(expressions=[exp.TemporaryProperty()])
                                if temporary else None))

    def create_view(self, name: str, query: exp.Expression, *, replace: bool = False) -> None:
        self.execute(exp.Create(this=table(name), kind="VIEW", expression=query, replace=replace))

    def drop(self, name: str, *, kind: str = "TABLE", if_exists: bool = True,
             schema: str | None = None) -> None:
        self.execute(exp.Drop(tables=[table(name, schema)], kind=kind, exists=if_exists))

    def rename_table(self, old: str, new: str, *, schema: str | None = None) -> None:
        """Rename ``old`` (in ``schema``) to ``new``, which stays in the same schema."""
        self.execute(exp.Alter(this=table(old, schema), kind="TABLE",
                               actions=[exp.AlterRename(this=exp.Table(this=ident(new)))]))

    def row_count(self, relation: str, *, schema: str | None = None) -> int:
        q = exp.select(exp.alias_(exp.Count(this=exp.Star()), "n", quoted=True)) \
            .from_(table(relation, schema))
        return int(self.fetch_one(q)["n"])

    def __enter__(self) -> Engine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
