"""PostgreSQL loads Arrow data into a table with ``COPY``.

PostgreSQL cannot read Arrow in place: the rows are copied, each value converted to its Python form
and sent by psycopg's binary-safe ``COPY ... FROM STDIN``, column types following the Arrow types.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pyarrow as pa
from sqlglot import exp

from sqlanon.sql.nodes import ident, table
from sqlanon.sql.render import render

if TYPE_CHECKING:
    from sqlanon.engines.postgres import PostgresEngine

_TYPES = {pa.float64(): "DOUBLE PRECISION", pa.float32(): "REAL", pa.int64(): "BIGINT",
          pa.int32(): "INTEGER", pa.int16(): "SMALLINT", pa.int8(): "SMALLINT", pa.bool_(): "BOOLEAN",
          pa.string(): "TEXT", pa.large_string(): "TEXT", pa.date32(): "DATE", pa.binary(): "BYTEA"}


def sql_type(kind: pa.DataType) -> exp.DataType:
    """The PostgreSQL column type of an Arrow type (text for types without a counterpart)."""
    if pa.types.is_timestamp(kind):
        name = "TIMESTAMPTZ" if kind.tz else "TIMESTAMP"
    elif pa.types.is_decimal(kind):
        name = f"NUMERIC({kind.precision}, {kind.scale})"
    else:
        name = _TYPES.get(kind, "TEXT")
    return exp.DataType.build(name, dialect="postgres")


def copy_arrow(engine: PostgresEngine, name: str, data: pa.Table, *, temporary: bool,
               schema: str | None) -> None:
    """Create ``name`` with ``data``'s columns and copy its rows in."""
    columns = [exp.ColumnDef(this=ident(f.name), kind=sql_type(f.type)) for f in data.schema]
    engine.execute(exp.Create(this=exp.Schema(this=table(name, schema), expressions=columns),
                              kind="TABLE", properties=exp.Properties(
                                  expressions=[exp.TemporaryProperty()]) if temporary else None))
    arrays = [data.column(i).to_pylist() for i in range(data.num_columns)]
    quoted = render(table(name, schema), engine.dialect)
    with engine.con.cursor() as cur, cur.copy(f"COPY {quoted} FROM STDIN") as copy:
        for row in zip(*arrays):
            copy.write_row(row)
