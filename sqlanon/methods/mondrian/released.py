"""Released rows read from a table of boxes: the labels of every distinct quasi-identifier tuple (a
strict partitioning made in memory) or of every row key (a relaxed one), joined to the source.

A strict partitioning's SQL can stand alone as a CASE over its cuts, but the CASE of thousands of
partitions costs more to build and render than the whole in-memory run; a table written as it
(output ``table`` or ``in_place``) joins the tuples' labels instead: one statement.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
from sqlglot import exp

from sqlanon.methods.mondrian import rounds
from sqlanon.sql.nodes import col, internal

if TYPE_CHECKING:
    from sqlanon.engines.base import Engine
    from sqlanon.methods.mondrian.pipeline import Mondrian


def label_column(i: int) -> str:
    return internal(f"box{i}")


def labelled_tuples(m: Mondrian) -> pa.Table:
    """Per distinct tuple: its values as the source holds them (a coded attribute's as text), or per
    row its key, and its partition's released values (``__sa_box0``, ...)."""
    tuples = m.result.tuples
    assert tuples is not None
    pids = np.asarray([p.pid for p in m.result.partitions], dtype=np.int64)
    at = pa.array(np.searchsorted(pids, np.asarray(tuples.column(rounds.PID).chunk(0))))
    columns: dict[str, pa.Array] = {}
    if rounds.KEY in tuples.column_names:
        columns[rounds.KEY] = tuples.column(rounds.KEY)
    for i, a in enumerate(m.attributes if rounds.KEY not in columns else ()):
        values = tuples.column(rounds.q(i))
        if not a.numeric:
            values = pa.array([str(v) for v in a.domain], pa.string()).take(values.chunk(0))
        columns[rounds.q(i)] = values
    width = len(m.labels[0]) if m.labels else 0
    for j in range(width):
        columns[label_column(j)] = pa.array([labels[j] for labels in m.labels]).take(at)
    return pa.table(columns)


def join_condition(m: Mondrian, source: str, boxes: str, engine: Engine) -> exp.Condition:
    """A source row meets its tuple's (or its key's) row of :func:`labelled_tuples`."""
    tuples = m.result.tuples
    if tuples is not None and rounds.KEY in tuples.column_names:
        return exp.EQ(this=engine.row_key(source), expression=col(rounds.KEY, boxes))
    parts: list[exp.Expression] = []
    for i, a in enumerate(m.attributes):
        value: exp.Expression = col(a.name, source)
        if not a.numeric:
            value = exp.cast(value, exp.DataType.build("varchar"))
        parts.append(exp.EQ(this=value, expression=col(rounds.q(i), boxes)))
    return exp.and_(*parts) if parts else exp.true()
