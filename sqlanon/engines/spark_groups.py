"""Spark's ``grouped_arrow_map``: ``groupBy(...).applyInArrow(...)`` on a query's rows, on the executors.

The same DataFrame calls work on a classic session and on a Spark Connect session. What the function
returns is cast to the declared columns' Arrow types on the executor, so that a function may return
the plain Arrow types of numpy arrays.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from sqlglot import exp

if TYPE_CHECKING:
    import pyarrow as pa

    from sqlanon.engines.grouped import ArrowFunction
    from sqlanon.engines.spark import SparkEngine

_RAISED = re.compile(r"^[A-Za-z_][\w.]*(Error|Exception|Warning)\b: .+")
"""The last line of a Python traceback: the exception's class and message."""


def function_error(error: BaseException) -> str | None:
    """What a function run on the executors raised (its class and message), when ``error`` is
    pyspark's report of it; pyspark's own first line says only that a Python worker failed."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    if not lines or "Python worker" not in lines[0]:
        return None
    raised = [line for line in lines if _RAISED.match(line)]
    return raised[-1] if raised else None


def _on_executor(function: ArrowFunction, schema: pa.Schema) -> Callable[[pa.Table], pa.Table]:
    def run(data: pa.Table) -> pa.Table:
        out = function(data)
        return out.select(schema.names).cast(schema)

    return run


def grouped_frame(engine: SparkEngine, query: exp.Expression, by: list[str], function: ArrowFunction,
                  columns: list[tuple[str, str]]) -> Any:
    """The DataFrame of ``function`` run on each group of ``query``'s rows sharing ``by`` (lazy)."""
    from pyspark.sql.pandas.types import to_arrow_schema

    session = engine.session
    ddl = ", ".join(f"{engine.sql(exp.to_identifier(c, quoted=True))} {t}" for c, t in columns)
    spark_schema = session.createDataFrame([], ddl).schema
    frame = session.sql(engine.sql(query))
    grouped: Any = frame.groupBy(*[frame[c] for c in by])
    return grouped.applyInArrow(_on_executor(function, to_arrow_schema(spark_schema)), spark_schema)
