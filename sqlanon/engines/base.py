"""The engine interface: run SQL, fetch results, create tables and views, transactions."""

from __future__ import annotations

import abc
import contextlib
import logging
import uuid
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from sqlglot import exp

from sqlanon.engines.capabilities import Capabilities
from sqlanon.engines.grouped import ArrowGroups
from sqlanon.engines.messages import describe, driver_message
from sqlanon.engines.numbering import RowNumbering
from sqlanon.engines.row_keys import RowKeys
from sqlanon.engines.row_values import ROW_KEY, Batches, Block, Projection, RowsFrom, joined_by_key
from sqlanon.engines.session_locks import BetweenSessions
from sqlanon.errors import EngineError, InternalError, UnsupportedError
from sqlanon.sql.dialects import DialectProfile, adapt, profile
from sqlanon.sql.nodes import alias, col, ident, internal, table
from sqlanon.sql.render import render
from sqlanon.sql.secrets import redacted_sql

if TYPE_CHECKING:
    import numpy as np
    import pyarrow as pa

__all__ = ["Capabilities", "Engine", "describe", "driver_message"]

log = logging.getLogger("sqlanon")


class Engine(ArrowGroups, RowNumbering, RowKeys, BetweenSessions, abc.ABC):
    """A connection to one database.

    Statements are sqlglot trees, rendered here for the engine's dialect through
    :func:`~sqlanon.sql.render.render` (and its function allow-list); SQL text is refused, except by
    :meth:`execute_script` and :meth:`fetch_script`, which run statements sqlanon rendered from a
    template of ``sql_templates/``. What the engine can do beyond SQL is declared in :attr:`capabilities`;
    a method needing an undeclared capability refuses. Subclasses implement the ``_``-prefixed hooks.
    """

    name: ClassVar[str]
    dialect_name: ClassVar[str]
    capabilities: ClassVar[Capabilities]
    _purposes: list[str]

    @property
    def dialect(self) -> DialectProfile:
        return profile(self.dialect_name)

    def require(self, capability: str) -> None:
        """Refuse with a clear error when the engine does not declare ``capability``."""
        self.capabilities.require(capability, self.name)

    # -- rendering -------------------------------------------------------------------------------
    def sql(self, statement: exp.Expression) -> str:
        """The statement's text for this engine (the allow-list applies)."""
        if not isinstance(statement, exp.Expression):
            raise InternalError(f"{self.name}: statements are sqlglot trees; SQL text rendered from a "
                                "template runs through execute_script")
        return render(adapt(statement, self.dialect), self.dialect, copy=not self.dialect.renders_in_place)

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

    def closes_after_run(self) -> None:
        """The run that opened this connection closes it when done: what it commits may be made
        durable as the close would make it (nothing to do for most engines)."""

    def sized_for(self, relation: exp.Table) -> None:
        """The run that opened this connection reads ``relation``: settings that depend on its size
        (nothing to do for most engines)."""

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

    @contextlib.contextmanager
    def scratch_statements(self) -> Iterator[None]:
        """A run of many statements over small temporary tables, whose sizes the planner cannot know
        (the engine may plan them more simply; nothing changes their results)."""
        yield

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

    # -- statements -------------------------------------------------------------------------------
    def execute(self, statement: exp.Expression, *, purpose: str | None = None) -> None:
        """Run one statement, given as a sqlglot tree."""
        self._run(self.sql(statement), statement, purpose)

    def execute_script(self, sql: str, *, purpose: str | None = None) -> None:
        """Run one statement of SQL text rendered from a template of ``sql_templates/``: the one
        path that takes text (a template's parts were rendered by :func:`~sqlanon.sql.render.render`,
        names quoted by sqlglot)."""
        self._run(sql, sql, purpose)

    def _run(self, sql: str, statement: exp.Expression | str, purpose: str | None) -> None:
        self._log(statement)
        try:
            self._execute(sql)
        except Exception as e:  # driver errors differ per engine; keep the cause
            raise self.error(e, statement, purpose) from e

    def execute_many(self, statements: Sequence[exp.Expression]) -> None:
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

    def fetch(self, query: exp.Expression, *, purpose: str | None = None
              ) -> tuple[list[str], list[tuple[Any, ...]]]:
        """Column names and rows of a query."""
        return self._query(self.sql(query), query, purpose)

    def fetch_script(self, sql: str, *, purpose: str | None = None
                     ) -> tuple[list[str], list[tuple[Any, ...]]]:
        """Column names and rows of a query of SQL text sqlanon rendered (a template's or the
        ``sql`` output's), as :meth:`execute_script` runs statements."""
        return self._query(sql, sql, purpose)

    def _query(self, sql: str, query: exp.Expression | str, purpose: str | None
               ) -> tuple[list[str], list[tuple[Any, ...]]]:
        self._log(query)
        try:
            return self._fetch_rows(sql)
        except Exception as e:
            raise self.error(e, query, purpose) from e

    def fetch_dicts(self, query: exp.Expression) -> list[dict[str, Any]]:
        names, rows = self.fetch(query)
        return [dict(zip(names, r)) for r in rows]

    def fetch_one(self, query: exp.Expression) -> dict[str, Any]:
        rows = self.fetch_dicts(query)
        if len(rows) != 1:
            raise EngineError(f"expected one row, got {len(rows)}")
        return rows[0]

    def fetch_arrow(self, query: exp.Expression) -> pa.Table:
        """The query's result as an Arrow table (converted from rows where the driver has no Arrow)."""
        import pyarrow as pa

        names, rows = self.fetch(query)
        return pa.Table.from_pylist([dict(zip(names, r)) for r in rows], schema=None) if rows else \
            pa.table({n: [] for n in names})

    def fetch_numpy(self, query: exp.Expression) -> dict[str, np.ndarray]:
        import numpy as np

        names, rows = self.fetch(query)
        cols: list[tuple[Any, ...]] = list(zip(*rows)) if rows else [() for _ in names]
        return {n: np.asarray(c) for n, c in zip(names, cols)}

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        """All statements inside commit together, or none do (capability ``transactional_ddl``)."""
        self.require("transactional_ddl")
        self._begin()
        try:
            yield
        except BaseException:
            self._rollback()
            raise
        else:
            self._commit()

    # -- relations ---------------------------------------------------------------------------------
    def create_table_as(self, name: str, query: exp.Expression, *, replace: bool = False,
                        temporary: bool = False, schema: str | None = None) -> None:
        self.execute(exp.Create(this=table(name, schema), kind="TABLE", expression=query, replace=replace,
                                properties=exp.Properties(expressions=[exp.TemporaryProperty()])
                                if temporary else None))

    def create_view(self, name: str, query: exp.Expression, *, replace: bool = False,
                    temporary: bool = False) -> None:
        self.execute(exp.Create(this=table(name), kind="VIEW", expression=query, replace=replace,
                                properties=exp.Properties(expressions=[exp.TemporaryProperty()])
                                if temporary else None))

    def drop(self, name: str, *, kind: str = "TABLE", if_exists: bool = True,
             schema: str | None = None) -> None:
        self.execute(exp.Drop(tables=[table(name, schema)], kind=kind, exists=if_exists))

    def rename_table(self, old: str, new: str, *, schema: str | None = None) -> None:
        """Rename ``old`` (in ``schema``) to ``new``, which stays in the same schema."""
        self.execute(exp.Alter(this=table(old, schema), kind="TABLE",
                               actions=[exp.AlterRename(this=exp.Table(this=ident(new)))]))

    def replace_table(self, name: str, by: str, *, schema: str | None = None) -> None:
        """Drop ``name`` (when it exists) and rename ``by`` to it (capability ``atomic_rename``);
        inside :meth:`transaction` both take effect together: readers see the old or the new table."""
        self.require("atomic_rename")
        self.drop(name, schema=schema)
        self.rename_table(by, name, schema=schema)

    def row_count(self, relation: str, *, schema: str | None = None) -> int:
        q = exp.select(exp.alias_(exp.Count(this=exp.Star()), "n", quoted=True)) \
            .from_(table(relation, schema))
        return int(self.fetch_one(q)["n"])

    # -- data from outside -------------------------------------------------------------------------
    def create_table_from_arrow(self, name: str, data: pa.Table, *, temporary: bool = False,
                                schema: str | None = None) -> None:
        """A new table ``name`` holding a copy of ``data`` (columns typed from the Arrow types)."""
        raise NotImplementedError

    @contextlib.contextmanager
    def arrow_relation(self, data: pa.Table | pa.RecordBatchReader, name: str | None = None
                       ) -> Iterator[exp.Table]:
        """``data`` readable as a relation inside the block, without a copy (capability ``arrow_in``);
        a record batch reader is read once, by the first statement that scans it."""
        self.require("arrow_in")
        with self._arrow_relation(data, name or internal_name("arrow")) as relation:
            yield relation

    def _arrow_relation(self, data: Any, name: str) -> contextlib.AbstractContextManager[exp.Table]:
        raise NotImplementedError

    def register_file(self, name: str, path: str, *, kind: str, options: dict[str, Any] | None = None
                      ) -> None:
        """Load a CSV or Parquet file (``kind``) into a temporary table ``name`` (capability
        ``file_registration``); ``options`` are the reader's."""
        self.require("file_registration")
        self._register_file(name, path, kind=kind, options=options or {})

    def _register_file(self, name: str, path: str, *, kind: str, options: dict[str, Any]) -> None:
        raise NotImplementedError

    # -- per-row values (sqlanon.engines.row_values) ----------------------------------------------
    def positional_rows(self) -> bool:
        """Whether :meth:`join_row_values` matches rows by position (True) or by row key (False);
        refuses (:class:`UnsupportedError`) when the engine can do neither, or the session cannot
        keep the rows' order for a positional join."""
        if self.capabilities.positional_join:
            self._check_row_order()
            return True
        if self.capabilities.stable_row_key:
            return False
        raise UnsupportedError(f"{self.name} cannot join values drawn outside it to a table's rows (it "
                               "declares neither positional_join nor stable_row_key)")

    def _check_row_order(self) -> None:
        """Refuse a positional join the session's settings would break (nothing to check by default)."""
        return None

    def read_columns(self, relation: exp.Table, columns: list[str]) -> dict[str, np.ndarray]:
        """The columns' values in the table's row order, as :meth:`join_row_values` matches them
        (with the row keys under :data:`~sqlanon.engines.row_values.ROW_KEY` when it matches by key)."""
        projection: list[exp.Expression] = [col(c) for c in columns]
        if not self.positional_rows():
            projection.insert(0, alias(self.row_key(), ROW_KEY))
        return self.fetch_numpy(exp.select(*projection).from_(relation.copy()))

    @contextlib.contextmanager
    def join_row_values(self, relation: exp.Table, n: int, schema: pa.Schema, batches: Batches,
                        keys: np.ndarray | None = None) -> Iterator[exp.Select]:
        """A ``SELECT ... FROM relation AS s <join> values AS v`` skeleton, valid inside the block;
        ``batches``, called with row counts adding up to ``n``, gives the values of the table's rows
        in order (matched by key: of ``keys``, read by :meth:`read_columns`). The caller projects."""
        if self.positional_rows():
            with self._join_by_position(relation, n, schema, batches) as skeleton:
                yield skeleton
            return
        if keys is None:
            raise UnsupportedError(f"{self.name} matches rows by key: read the keys with read_columns first")
        with joined_by_key(self, relation, schema, batches(n), keys) as skeleton:
            yield skeleton

    def _join_by_position(self, relation: exp.Table, n: int, schema: pa.Schema, batches: Batches
                          ) -> contextlib.AbstractContextManager[exp.Select]:
        raise NotImplementedError

    def row_blocks(self, relation: exp.Table) -> list[Block] | None:
        """The table's row blocks for :meth:`write_row_blocks` (capability ``row_block_writes``),
        or None when this table cannot be written in blocks (a view, a temporary table...)."""
        self.require("row_block_writes")
        return self._row_blocks(relation)

    def _row_blocks(self, relation: exp.Table) -> list[Block] | None:
        raise NotImplementedError

    def write_row_blocks(self, relation: exp.Table, target: str, blocks: list[Block], schema: pa.Schema,
                         rows_from: RowsFrom, projection: Projection,
                         uncompressed: frozenset[str] = frozenset()) -> None:
        """Create ``target`` (in ``relation``'s schema) holding ``projection`` over every block of
        ``relation`` joined to its values, in order (capability ``row_block_writes``). A block's
        values are ``rows_from`` its first row's number; ``uncompressed`` names DOUBLE output
        columns the engine may store without compression. A failed block raises
        :class:`EngineError` after ``target`` was dropped."""
        self.require("row_block_writes")
        self._write_row_blocks(relation, target, blocks, schema, rows_from, projection, uncompressed)

    def _write_row_blocks(self, relation: exp.Table, target: str, blocks: list[Block],
                          schema: pa.Schema, rows_from: RowsFrom, projection: Projection,
                          uncompressed: frozenset[str]) -> None:
        raise NotImplementedError

    def map_row_stream(self, relation: exp.Table, schema: pa.Schema, rows_from: RowsFrom
                       ) -> contextlib.AbstractContextManager[exp.Select]:
        """A ``SELECT ... FROM relation AS s <join> values AS v`` skeleton, valid inside the block,
        whose values the engine draws where it reads the rows (capability ``row_stream_map``): each
        partition of the scan calls ``rows_from`` with its first row's number in scan order."""
        self.require("row_stream_map")
        raise NotImplementedError

    def discard_row_blocks(self, target: str, schema: str | None = None) -> None:
        """Drop what :meth:`write_row_blocks` may have left of ``target``."""
        self.drop(target, schema=schema)

    def __enter__(self) -> Engine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def internal_name(what: str) -> str:
    """A fresh name for a relation the engine creates for itself (``__sa_<what>_<token>``)."""
    return internal(f"{what}_{uuid.uuid4().hex[:12]}")
