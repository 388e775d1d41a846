"""The engine interface: run SQL, fetch results, create tables and views, transactions."""

from __future__ import annotations

import abc
import contextlib
import logging
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from sqlglot import exp

from sqlanon.compile.dialects import DialectProfile, adapt, profile
from sqlanon.compile.render import render
from sqlanon.compile.sql import ident, table
from sqlanon.errors import EngineError

if TYPE_CHECKING:
    import numpy as np
    import pyarrow as pa

log = logging.getLogger("sqlanon")

Statement = "exp.Expression | str"


class Engine(abc.ABC):
    """A connection to one database.

    Statements are sqlglot trees (rendered here for the engine's dialect) or SQL text that sqlanon
    rendered itself. Subclasses implement the ``_``-prefixed hooks.
    """

    name: ClassVar[str]
    dialect_name: ClassVar[str]

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

    # -- public API -------------------------------------------------------------------------------
    def execute(self, statement: exp.Expression | str) -> None:
        sql = self.sql(statement)
        log.debug("%s: %s", self.name, sql)
        try:
            self._execute(sql)
        except Exception as e:  # driver errors differ per engine; keep the cause
            raise EngineError(f"{self.name} failed on:\n{sql}\n{type(e).__name__}: {e}") from e

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

    def fetch(self, query: exp.Expression | str) -> tuple[list[str], list[tuple[Any, ...]]]:
        """Column names and rows of a query."""
        sql = self.sql(query)
        log.debug("%s: %s", self.name, sql)
        try:
            return self._fetch_rows(sql)
        except Exception as e:
            raise EngineError(f"{self.name} failed on:\n{sql}\n{type(e).__name__}: {e}") from e

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
        cols = list(zip(*rows)) if rows else [[] for _ in names]
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
