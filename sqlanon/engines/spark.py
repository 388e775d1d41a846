"""Apache Spark through pyspark: a local session (``spark://local[N]``), a Spark Connect server
(``sc://HOST:PORT``) or a ``SparkSession`` given from Python (classic or Connect).

Spark has no transactions and no atomic rename, so :meth:`Engine.transaction` and
:meth:`Engine.replace_table` refuse here; a table is replaced in recorded steps instead
(:mod:`sqlanon.engines.swap`, marks kept as table properties). It has no temporary tables
either: a temporary table (``CREATE TEMPORARY TABLE``, ``create_table_as(temporary=True)``)
becomes a temporary view of a DataFrame of the session, cached (computed once) when it is a
query's, and rows inserted into it are unioned to that DataFrame. Stored tables are catalog tables
(``db.table``), created by Spark in its default format.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from sqlglot import exp

from sqlanon.engines import spark_rows
from sqlanon.engines.arrow_numpy import plain, table_numpy
from sqlanon.engines.base import Engine
from sqlanon.engines.capabilities import Capabilities
from sqlanon.engines.row_values import RowsFrom
from sqlanon.engines.spark_groups import function_error, grouped_frame
from sqlanon.engines.spark_marks import SparkTableMarks
from sqlanon.engines.spark_numbering import CORES_PROBE_ROWS, numbered_frame, sorts_in_one_task
from sqlanon.engines.spark_sessions import local_session, pyspark_sql, remote_session
from sqlanon.errors import EngineError, UnsupportedError
from sqlanon.sql.nodes import table

if TYPE_CHECKING:
    import numpy as np
    import pyarrow as pa

    from sqlanon.engines.grouped import ArrowFunction

CONNECT_MODE = "SPARK_CONNECT_MODE_ENABLED"
"""The environment variable pyspark sets when a Spark Connect session opens in the process."""
BROADCAST_SENT_BYTES = 8 * 1024 * 1024
"""Rows sent from the driver into a temporary table up to about this size are broadcast to the joins
that read them (see :meth:`SparkEngine._keep`)."""
VALUE_BYTES = 16
"""The size counted per value of rows sent as Python tuples."""
_CSV_OPTIONS = {"header": "header", "delim": "sep"}
"""The file readers' options as sqlanon names them (DuckDB's names) -> Spark's CSV option."""


def _temporary(statement: exp.Create) -> bool:
    if str(statement.args.get("kind") or "").upper() != "TABLE":
        return False
    props = statement.args.get("properties")
    return props is not None and any(isinstance(p, exp.TemporaryProperty) for p in props.expressions)


class SparkEngine(Engine, SparkTableMarks):
    """A Spark session.

    Args:
        session: a running ``SparkSession`` to use (left running by :meth:`close`).
        master: the master of a session to start when none is given (``local[2]``).
        conf: settings of a session sqlanon starts.
        remote: a Spark Connect server (``sc://HOST:PORT``) to open a session on, instead of a
            local session; the session is closed by :meth:`close`, the server left running.
        one_task_sort_rows: individual ranking of a table of more rows numbers each attribute's
            rows across tasks (:mod:`sqlanon.engines.spark_numbering`) instead of sorting them with
            one window over the whole table, which Spark runs in one task; ``None``: always one
            window; ``"auto"`` (the default): by the table's rows and the session's cores
            (:func:`~sqlanon.engines.spark_numbering.sorts_in_one_task`).
    """

    name: ClassVar[str] = "spark"
    dialect_name: ClassVar[str] = "spark"
    capabilities: ClassVar[Capabilities] = Capabilities(file_registration=True, recoverable_swap=True,
                                                          grouped_arrow_map=True,
                                                          row_stream_map=True,
                                                          distributed_numbering=True)

    def __init__(self, session: Any = None, *, master: str = "local[2]",
                 conf: dict[str, str] | None = None, remote: str | None = None,
                 one_task_sort_rows: int | Literal["auto"] | None = "auto") -> None:
        pyspark_sql()
        self.one_task_sort_rows = one_task_sort_rows
        self._connect_mode: tuple[bool, str | None] | None = None
        if session is None and remote is not None:
            # pyspark marks the whole process as a Connect client when a remote session opens, and
            # a local session would then open as a remote one: the mark is undone at close
            self._connect_mode = (CONNECT_MODE in os.environ, os.environ.get(CONNECT_MODE))
            session, self._owns = remote_session(remote), True
        elif session is None:
            session, self._owns = local_session(master, conf)
        else:
            self._owns = False
        self.session = session
        from pyspark.errors import AnalysisException

        self._analysis_error = AnalysisException
        self._temps: dict[str, tuple[str, Any]] = {}
        """Folded name -> the name and the DataFrame of each temporary view this engine made."""
        self._sent: dict[str, int] = {}
        """Folded name -> the bytes sent from the driver into each temporary view made of such rows."""
        self._cores: int | None = None
        """The session's cores, once asked (:meth:`_session_cores`)."""

    # -- hooks ------------------------------------------------------------------------------------
    def _execute(self, sql: str) -> None:
        self.session.sql(sql).collect()  # commands run at once; collecting runs anything left lazy

    def _fetch_rows(self, sql: str) -> tuple[list[str], list[tuple[Any, ...]]]:
        frame = self.session.sql(sql)
        names = list(frame.columns)
        rows = [tuple(r) for r in frame.collect()]
        decimal = [i for i, f in enumerate(frame.schema.fields) if f.dataType.typeName() == "decimal"]
        if decimal:
            rows = [tuple(plain(v) if i in decimal else v for i, v in enumerate(r)) for r in rows]
        return names, rows

    def fetch_arrow(self, query: exp.Expression) -> pa.Table:
        sql = self.sql(query)
        self._log(query)
        try:
            return self.session.sql(sql).toArrow()
        except Exception as e:
            raise self.error(e, query) from e

    def fetch_numpy(self, query: exp.Expression) -> dict[str, np.ndarray]:
        """The columns of ``query`` read as Arrow: a list of rows (``collect``) costs the driver some
        hundred bytes per value (a frequency table of millions of rows, gigabytes), and the JVM the
        rows in its own form first."""
        return table_numpy(self.fetch_arrow(query))

    def _begin(self) -> None:  # never reached: transaction() requires transactional_ddl
        raise UnsupportedError("spark has no transactions")

    _commit = _rollback = _begin

    # -- temporary tables as cached temporary views --------------------------------------------------
    def execute(self, statement: exp.Expression, *, purpose: str | None = None) -> None:
        """Run one statement; a temporary table becomes a cached temporary view, and dropping
        one of those releases its cache."""
        if isinstance(statement, exp.Create) and _temporary(statement):
            create = statement
            self._guard(statement, purpose, lambda: self._create_temporary(create))
        elif isinstance(statement, exp.Drop) and self._temp_of(statement) is not None:
            self._guard(statement, purpose, lambda: self._drop_temporary(self._temp_of(statement) or ""))
        else:
            super().execute(statement, purpose=purpose)

    def _guard(self, statement: exp.Expression, purpose: str | None, action: Any) -> None:
        self._log(statement)
        try:
            action()
        except Exception as e:
            raise self.error(e, statement, purpose) from e

    def _temp_of(self, drop: exp.Drop) -> str | None:
        tables = drop.args.get("tables") or []
        if len(tables) != 1 or not isinstance(tables[0], exp.Table) or tables[0].db:
            return None
        key = self.dialect.fold(tables[0].name)
        return key if key in self._temps else None

    def _create_temporary(self, statement: exp.Create) -> None:
        target = statement.this
        if isinstance(target, exp.Schema):  # CREATE TEMPORARY TABLE t (columns): an empty frame
            columns = ", ".join(self.sql(exp.ColumnDef(this=c.this, kind=c.args["kind"]))
                                for c in target.expressions)
            frame = self.session.createDataFrame([], columns)
            name = target.this.name
        else:
            frame = self.session.sql(self.sql(statement.expression))
            name = target.name
        key = self.dialect.fold(name)
        if key in self._temps and not statement.args.get("replace"):
            raise EngineError(f"spark: the temporary table {name!r} already exists")
        if isinstance(target, exp.Schema):
            self._keep(name, frame, sent=0)
        else:
            self._keep(name, frame)

    def _keep(self, name: str, frame: Any, *, sent: int | None = None) -> None:
        """Register ``frame`` as the temporary view ``name``, cached: computed once, by the first
        statement that reads it. Rows sent from here (``sent``: their size in bytes) are left as they
        are, as Spark holds them already, and marked for broadcast when small: Spark does not know
        the size of rows a Python process sent, so without the mark a join of them with a large
        table plans a shuffle of the large table by the join key (at 100M rows, a GROUP BY through
        the leaf codes of nine hierarchies shuffled every row into the two partitions of ``sex``)."""
        if sent is None:
            self._register(name, frame.cache())
            return
        self._register(name, frame.hint("broadcast") if sent <= BROADCAST_SENT_BYTES else frame)
        self._sent[self.dialect.fold(name)] = sent

    def _register(self, name: str, frame: Any) -> None:
        key = self.dialect.fold(name)
        old = self._temps.pop(key, None)
        self._sent.pop(key, None)
        frame.createOrReplaceTempView(self.sql(table(name)))
        self._temps[key] = (name, frame)
        if old is not None:
            old[1].unpersist()

    def _drop_temporary(self, key: str) -> None:
        # released before the view goes: a Connect session sends the frame's query to the server,
        # which resolves the views it reads again to find the cached data
        name, frame = self._temps.pop(key)
        self._sent.pop(key, None)
        try:
            frame.unpersist()
        except Exception:  # noqa: BLE001 - Connect: a view the frame's query reads is gone already
            # (a table made from a temporary table dropped before it); the view's own stored plan
            # still finds the cached data
            self.session.catalog.uncacheTable(self.sql(table(name)))
        self._execute(self.sql(exp.Drop(tables=[table(name)], kind="VIEW", exists=True)))

    def create_table_as(self, name: str, query: exp.Expression, *, replace: bool = False,
                        temporary: bool = False, schema: str | None = None) -> None:
        """Spark's session catalog has no ``CREATE OR REPLACE TABLE``: replacing a stored table
        drops the old one first."""
        if replace and not temporary:
            self.drop(name, schema=schema)
            replace = False
        super().create_table_as(name, query, replace=replace, temporary=temporary, schema=schema)

    def insert_rows(self, name: str, rows: Sequence[tuple[Any, ...]], *, schema: str | None = None
                    ) -> None:
        """Append rows: a DataFrame of them, typed as the table's columns, written into a stored
        table or unioned to a temporary one."""
        if not rows:
            return
        relation = self.sql(table(name, schema))
        try:
            target = self.session.table(relation)
            frame = self.session.createDataFrame([tuple(r) for r in rows], target.schema)
            key = self.dialect.fold(name)
            if schema is None and key in self._temps:
                sent = self._sent.get(key, BROADCAST_SENT_BYTES + 1) \
                    + len(rows) * len(target.columns) * VALUE_BYTES
                self._keep(name, self._temps[key][1].union(frame), sent=sent)
            else:
                frame.write.insertInto(relation)
        except Exception as e:
            raise self.error(e, f"insert into {relation}", f"insert into {name}") from e

    def create_table_from_arrow(self, name: str, data: pa.Table, *, temporary: bool = False,
                                schema: str | None = None) -> None:
        try:
            frame = self.session.createDataFrame(data)
            if temporary:
                self._keep(name, frame, sent=data.nbytes)
            else:
                frame.write.saveAsTable(self.sql(table(name, schema)))
        except Exception as e:
            raise self.error(e, f"create table {name}", f"create table {name}") from e

    def _map_arrow_groups(self, name: str, query: exp.Expression, by: list[str], function: ArrowFunction,
                          columns: list[tuple[str, str]], temporary: bool, schema: str | None) -> None:
        """``groupBy(by).applyInArrow(function)`` on the executors; the groups are computed now, once:
        a temporary table is a cached view, a stored one is written by Spark."""
        target = self.sql(table(name, schema))
        try:
            frame = grouped_frame(self, query, by, function, columns)
            if temporary:
                cached = frame.cache()
                try:
                    cached.count()  # the function runs here, and its errors are raised here
                except BaseException:
                    cached.unpersist()
                    raise
                self._register(name, cached)
            else:
                frame.write.saveAsTable(target)
        except Exception as e:
            failed = self.error(e, f"create table {target} from groups", f"grouping rows into {name}")
            raised = function_error(e)
            if raised is not None:
                failed = EngineError(f"spark: grouping rows into {name} failed: {raised}", sql=failed.sql,
                                     purpose=failed.purpose, detail=raised)
            raise failed from e

    def _number_rows(self, name: str, query: exp.Expression, orders: list[tuple[str, list[str]]]) -> None:
        """Each order range-partitioned, sorted and counted on the executors
        (:mod:`sqlanon.engines.spark_numbering`); the table is a temporary view of the result."""
        try:
            self._register(name, numbered_frame(self, query, orders))
        except Exception as e:
            raise self.error(e, f"number the rows of {name}", f"numbering rows into {name}") from e

    def _sorts_in_one_task_by_default(self, rows: int) -> bool:
        return sorts_in_one_task(rows, self._session_cores)

    def _session_cores(self) -> int:
        """The tasks the session runs at once by default (its executors' cores, ``N`` of
        ``local[N]``): the partitions Spark cuts a range of rows into, which a classic and a Spark
        Connect session both tell."""
        if self._cores is None:
            from pyspark.sql import functions as f

            try:
                parts = self.session.range(CORES_PROBE_ROWS).select(f.spark_partition_id().alias("p"))
                last = parts.agg(f.max("p")).collect()
            except Exception as e:
                raise self.error(e, "count the session's cores", "counting the session's cores") from e
            self._cores = int(last[0][0]) + 1
        return self._cores

    def _register_file(self, name: str, path: str, *, kind: str, options: dict[str, Any]) -> None:
        """A temporary view reading the file: Spark scans it where it is, whenever it is read."""
        reader = self.session.read
        if kind == "csv":
            # RFC 4180 quoting ("" inside quotes), and typed columns unless all are to stay text
            reader = reader.option("escape", '"').option("inferSchema", not options.get("all_varchar"))
            for key, value in options.items():
                if key in _CSV_OPTIONS:
                    reader = reader.option(_CSV_OPTIONS[key], value)
        try:
            self._register(name, reader.csv(path) if kind == "csv" else reader.parquet(path))
        except Exception as e:
            raise self.error(e, f"read {path}", f"read {kind} file") from e

    def map_row_stream(self, relation: exp.Table, schema: pa.Schema, rows_from: RowsFrom
                       ) -> contextlib.AbstractContextManager[exp.Select]:
        """The rows with their values drawn by the executors, a scalar Arrow UDF of each row's id in
        the table's scan (:mod:`sqlanon.engines.spark_rows`)."""
        return spark_rows.mapped_rows(self, relation, schema, rows_from)

    # -- catalog ----------------------------------------------------------------------------------
    def _frame(self, relation: str, schema: str | None) -> Any:
        """The relation as Spark resolves the name, or None when it names nothing."""
        name = self.sql(table(relation, schema))
        # the catalog is asked first: pyspark logs (on stderr) each error a Connect session reports
        # with its query, a missing table's included, even when sqlanon expects and handles it
        if not self.session.catalog.tableExists(name):
            return None
        try:
            frame = self.session.table(name)
            frame.schema  # noqa: B018 - a Connect session resolves the name only when asked
            return frame
        except self._analysis_error:
            return None

    def columns(self, relation: str, schema: str | None = None) -> list[tuple[str, str]]:
        frame = self._frame(relation, schema)
        if frame is None:
            where = f"{schema}.{relation}" if schema else relation
            raise EngineError(f"spark: no table or view named {where!r}")
        return [(f.name, f.dataType.simpleString()) for f in frame.schema.fields]

    def relation_exists(self, relation: str, schema: str | None = None) -> bool:
        return self._frame(relation, schema) is not None

    def schema_exists(self, schema: str) -> bool:
        return bool(self.session.catalog.databaseExists(self.sql(exp.to_identifier(schema, quoted=True))))

    def dependent_views(self, relation: str, schema: str | None = None) -> list[str]:
        """Spark records no view dependencies: a view reads whatever table holds the name it
        names, and reads the new table after a replacement."""
        return []

    def close(self) -> None:
        for key in reversed(list(self._temps)):  # a working table before those it reads
            try:
                self._drop_temporary(key)
            except Exception:  # the session may already be stopped
                self._temps.pop(key, None)
        if self._owns:
            self.session.stop()
        if self._connect_mode is not None:
            was_set, value = self._connect_mode
            if was_set and value is not None:
                os.environ[CONNECT_MODE] = value
            else:
                os.environ.pop(CONNECT_MODE, None)
            self._connect_mode = None
