"""Tables in memory — pandas and polars DataFrames, Arrow tables and record batch readers — as
relations of an embedded DuckDB, and results handed back as the kind that came in.

DuckDB scans an Arrow table where its buffers lie, so registering one copies no data. Each kind
reaches Arrow as cheaply as it can: an Arrow table as it is; a record batch reader by collecting its
batches (each is used as it comes); polars by handing its buffers over at its newest Arrow level
(strings as ``string_view``, what polars keeps in memory); pandas through ``pyarrow.Table.from_pandas``,
which takes columns of numbers, booleans, dates and times, and Arrow-backed strings as they are.
A NumPy ``object`` column of Python strings is the one exception: Arrow has no view of Python
objects, so its text is laid out once in Arrow's compact form (about a third of what pandas holds
for it). pandas and polars are imported only when such an object is given.

Results come back the same way round: pandas in, pandas out (a column whose values kept their Arrow
type keeps its pandas dtype, e.g. ``Int64`` with missing values); polars in, polars out; an Arrow
table or record batch reader in, the same out.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
from sqlglot import exp

from sqlanon.engines.duckdb import DuckDBEngine
from sqlanon.errors import SpecError, UnsupportedError
from sqlanon.sql.nodes import table

KINDS = ("pandas DataFrame", "polars DataFrame", "pyarrow Table", "pyarrow RecordBatchReader")


@dataclass(frozen=True)
class InMemoryTable:
    """An in-memory table as Arrow, and what is needed to hand a result back as its kind."""

    kind: str
    """``pandas``, ``polars``, ``arrow`` or ``reader``."""
    arrow: pa.Table
    pandas_dtypes: dict[str, tuple[Any, pa.DataType]] = field(default_factory=dict)
    """pandas only: each column's dtype and the Arrow type it became."""


def _loaded(module: str, name: str) -> type | None:
    """``module.name`` if ``module`` is already imported (an object of it can exist only then)."""
    found = sys.modules.get(module)
    return getattr(found, name, None) if found is not None else None


def _is(data: Any, module: str, name: str) -> bool:
    cls = _loaded(module, name)
    return cls is not None and isinstance(data, cls)


def in_memory_table(data: Any) -> InMemoryTable:
    """``data`` as an Arrow table, without copying it where its kind allows (see the module).

    Raises:
        UnsupportedError: ``data`` is of none of the kinds in :data:`KINDS`.
        SpecError: a pandas index with a name (data that would be lost), or column names that are
            not distinct text.
    """
    if isinstance(data, pa.Table):
        found = InMemoryTable("arrow", data)
    elif isinstance(data, pa.RecordBatchReader):
        found = InMemoryTable("reader", data.read_all())
    elif _is(data, "polars", "DataFrame"):
        found = InMemoryTable("polars", _polars_arrow(data))
    elif _is(data, "pandas", "DataFrame"):
        found = _from_pandas(data)
    else:
        lazy = " (collect() it first)" if _is(data, "polars", "LazyFrame") else ""
        raise UnsupportedError(f"data: a {type(data).__module__}.{type(data).__name__} is not a table "
                               f"sqlanon reads{lazy}; give a {', a '.join(KINDS)}")
    _require_distinct_names(found.arrow.column_names)
    return found


def _polars_arrow(frame: Any) -> pa.Table:
    import polars as pl

    newest = getattr(getattr(pl, "CompatLevel", None), "newest", None)
    return frame.to_arrow(compat_level=newest()) if newest is not None else frame.to_arrow()


def _from_pandas(frame: Any) -> InMemoryTable:
    named = [n for n in frame.index.names if n is not None]
    if named:
        raise SpecError(f"the DataFrame's index {', '.join(map(repr, named))} is not a column and would be "
                        "lost: call reset_index() to keep it as a column, or reset_index(drop=True)",
                        path="data")
    if any(not isinstance(c, str) for c in frame.columns):
        wrong = next(c for c in frame.columns if not isinstance(c, str))
        raise SpecError(f"column names must be text, got {wrong!r}: rename the columns (e.g. "
                        "df.columns = df.columns.astype(str))", path="data")
    _require_distinct_names(list(frame.columns))
    arrow = pa.Table.from_pandas(frame, preserve_index=False)
    dtypes = {name: (frame[name].dtype, arrow.schema.field(name).type) for name in arrow.column_names}
    return InMemoryTable("pandas", arrow, dtypes)


def _require_distinct_names(names: list[str]) -> None:
    seen: set[str] = set()
    for name in names:
        if name.lower() in seen:  # DuckDB compares column names ignoring case
            raise SpecError(f"column {name!r} appears twice (names are compared ignoring case): rename "
                            "one of them", path="data")
        seen.add(name.lower())


def register(engine: DuckDBEngine, name: str, data: InMemoryTable) -> None:
    """Make ``data`` the relation ``name`` (a temporary view) of ``engine``, without copying it."""
    if not isinstance(engine, DuckDBEngine):
        raise UnsupportedError(f"in-memory tables are scanned by DuckDB, not {engine.name}")
    engine.con.register(name, data.arrow)


def fetch_as(engine: DuckDBEngine, relation: str, like: InMemoryTable) -> Any:
    """The rows of ``relation`` as the kind of ``like``."""
    query = engine.sql(exp.select(exp.Star()).from_(table(relation)))
    with engine.purpose("read the output"):
        try:
            arrow = engine.con.sql(query).to_arrow_table()
        except Exception as e:  # noqa: BLE001 - driver errors, kept as the cause
            raise engine.error(e, query) from e
    if like.kind == "arrow":
        return arrow
    if like.kind == "reader":
        return pa.RecordBatchReader.from_batches(arrow.schema, arrow.to_batches())
    if like.kind == "polars":
        import polars as pl

        return pl.from_arrow(arrow)
    return _to_pandas(arrow, like.pandas_dtypes)


_TEXT = ("string", "large_string", "string_view")


def _to_pandas(arrow: pa.Table, dtypes: dict[str, tuple[Any, pa.DataType]]) -> Any:
    """``arrow`` as a DataFrame in which a column whose values kept their Arrow type (text counting
    as one type, whatever its offsets) has its input's pandas dtype: ``Int64`` with missing values,
    ``string[pyarrow]``, ``ArrowDtype`` ... (NumPy dtypes come back by themselves)."""
    frame = arrow.to_pandas()
    for name in arrow.column_names:
        dtype, arrow_type = dtypes.get(name, (None, None))
        column = arrow.column(name)
        if not hasattr(dtype, "__from_arrow__") or frame[name].dtype == dtype:
            continue
        if column.type != arrow_type:
            if not (str(column.type) in _TEXT and str(arrow_type) in _TEXT):
                continue
            column = column.cast(arrow_type)
        frame[name] = dtype.__from_arrow__(column)
    return frame


@dataclass
class Registered:
    """An embedded DuckDB holding one in-memory table under a name."""

    engine: DuckDBEngine
    data: InMemoryTable
    name: str

    def fetch(self, relation: str) -> Any:
        """``relation`` (an output written on :attr:`engine`) as the kind of the input."""
        return fetch_as(self.engine, relation, self.data)


@contextlib.contextmanager
def registered(data: Any, name: str) -> Iterator[Registered]:
    """A new in-memory DuckDB in which ``data`` is the relation ``name``; closed on exit (results
    fetched before then live on in Python)."""
    found = in_memory_table(data)
    engine = DuckDBEngine(":memory:")
    try:
        if found.kind == "polars":  # polars keeps strings as views: hand results over the same way
            engine.execute(exp.Set(expressions=[exp.SetItem(this=exp.EQ(
                this=exp.column("produce_arrow_string_view"), expression=exp.true()))]))
        register(engine, name, found)
        yield Registered(engine, found, name)
    finally:
        engine.close()
