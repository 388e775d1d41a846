"""The released rows of a microaggregation, as one SELECT over the source (and its group table).

Pulled algorithms (MDAV, ...) leave a *group table* in the database: the row key, one group number
per partition (``__sa_g<p>``: one partition for multivariate algorithms, one per attribute for
univariate ones) and, for ordinal and nominal attributes, the group's value (``__sa_c<i>``). The
SELECT joins the source to it on the key and replaces every microaggregated attribute by its group's
statistic, computed in the same statement.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from sqlglot import exp

from sqlanon.compile.released import OutputQuery
from sqlanon.engines.base import Engine
from sqlanon.methods.microaggregation.group_sql import GROUP, statistics_query, value_name
from sqlanon.methods.microaggregation.rows import RowKey, as_relation
from sqlanon.spec.schema import Spec
from sqlanon.sql.dialects import DialectProfile
from sqlanon.sql.nodes import alias, col, internal, lit, table

ROWS = internal("rows")


def group_column(p: int) -> str:
    return internal(f"g{p}")


def centroid_column(i: int) -> str:
    return internal(f"c{i}")


@dataclass(frozen=True)
class GroupLayout:
    """Which attributes each partition groups, and which attributes take a value from the table."""

    partitions: tuple[tuple[str, ...], ...]
    """Numeric attributes replaced by a statistic, per partition."""
    valued: tuple[str, ...] = ()
    """Ordinal and nominal attributes whose group value is stored in the table."""


def create_group_table(engine: Engine, name: str, keyed: exp.Expression, key: RowKey, layout: GroupLayout,
                       *, temporary: bool, schema: str | None = None) -> None:
    """An empty group table whose key and value columns have the source's types."""
    projections = [alias(col(c), c) for c in key.columns]
    projections += [alias(exp.cast(lit(None), exp.DataType.build("bigint")), group_column(p))
                    for p in range(len(layout.partitions))]
    projections += [alias(col(a), centroid_column(i)) for i, a in enumerate(layout.valued)]
    query = exp.select(*projections).from_(as_relation(keyed, internal("s"))).where(exp.false())
    engine.create_table_as(name, query, temporary=temporary, schema=schema)


def fill_group_table(engine: Engine, name: str, keys: Mapping[str, np.ndarray], labels: Sequence[np.ndarray],
                     values: Sequence[np.ndarray], *, schema: str | None = None) -> None:
    """Insert one row per source row: key, group numbers, values (bound, never pasted)."""
    columns = [np.asarray(v).tolist() for v in keys.values()]
    columns += [np.asarray(g, dtype=np.int64).tolist() for g in labels]
    columns += [list(v) for v in values]
    engine.insert_rows(name, list(zip(*columns)), schema=schema)


def released_query(keyed: exp.Expression, columns: Sequence[str], key: RowKey, group_table: str,
                   layout: GroupLayout, statistic: str, *, group_schema: str | None = None) -> exp.Select:
    """Every source column (and the key) with the microaggregated attributes replaced."""
    g = internal("t")
    joined = exp.select(*[col(c, internal("s")) for c in dict.fromkeys([*columns, *key.columns])],
                        *[col(group_column(p), g) for p in range(len(layout.partitions))],
                        *[col(centroid_column(i), g) for i in range(len(layout.valued))]) \
        .from_(as_relation(keyed, internal("s"))) \
        .join(exp.alias_(table(group_table, group_schema), g, table=True, quoted=True),
              on=exp.and_(*[exp.EQ(this=col(c, internal("s")), expression=col(c, g)) for c in key.columns]),
              join_type="inner")
    value: dict[str, exp.Expression] = {}
    stats_names = []
    for p, attributes in enumerate(layout.partitions):
        if not attributes:
            continue
        stats = internal(f"stats{p}")
        stats_names.append((p, stats, attributes))
        for i, a in enumerate(attributes):
            value[a] = col(value_name(i), stats)
    for i, a in enumerate(layout.valued):
        value[a] = col(centroid_column(i), ROWS)
    out = exp.select(*[alias(value.get(c, col(c, ROWS)), c)
                       for c in dict.fromkeys([*columns, *key.columns])]).from_(table(ROWS))
    for p, stats, _ in stats_names:
        out = out.join(table(stats), on=exp.EQ(this=col(group_column(p), ROWS), expression=col(GROUP, stats)),
                       join_type="inner")
    out = out.with_(exp.to_identifier(ROWS, quoted=True), as_=joined)
    for p, stats, attributes in stats_names:
        out = out.with_(exp.to_identifier(stats, quoted=True),
                        as_=statistics_query(ROWS, group_column(p), attributes, statistic, key.columns))
    return out


def output_rows(spec: Spec, released: exp.Expression, columns: Sequence[str],
                target: DialectProfile, types: dict[str, exp.DataType] | None = None) -> OutputQuery:
    """The output SELECT: released rows with identifiers treated by their action (as generalization
    does, hashed by their source ``types``), undeclared columns copied with a warning, the synthetic
    key left out."""
    out = OutputQuery(exp.select(), types=dict(types or {}))
    projections = []
    rel = internal("r")
    for c in columns:
        if (column := out.released(spec, c, col(c, rel), target)) is not None:
            projections.append(column)
    out.query = exp.select(*projections).from_(as_relation(released, rel))
    return out
