"""Pulled algorithms (MDAV, V-MDAV, ...) inside an engine that runs Python on groups of rows
(capability ``grouped_arrow_map``, Spark): the rows never reach sqlanon's process.

The engine cuts the rows into the blocks of ``block_by``
(:mod:`sqlanon.methods.microaggregation.algorithms.blocking`) and runs the algorithm on each block where
the block is (on Spark, in one task of the executors): the same numpy code on the same rows in the same
(key) order as a pull into sqlanon's process, so the groups are the same. Each block returns its rows'
keys and group numbers, and the engine keeps them as the group table the released SELECT joins.

What sqlanon's process reads is aggregated: the strata of ``block_by`` and their sizes (blocks are
numbered from them in sqlanon, then joined to the rows as a small table), the distinct values of
nominal attributes (so that every block codes them as a pull of the whole table would), the number of
groups and their sizes.

Without ``block_by`` the algorithm would need every row in one process: it is refused, saying how to
block (:func:`refuse_unblocked`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
from sqlglot import exp

from sqlanon.engines.base import Engine
from sqlanon.engines.staging import new_token, staging_name
from sqlanon.errors import EngineError, SpecError, UnsupportedError
from sqlanon.methods.microaggregation import grouping, masking, rows
from sqlanon.methods.microaggregation.algorithms.blocking import pooled_strata, stratum_order
from sqlanon.methods.microaggregation.algorithms.registry import traits
from sqlanon.methods.microaggregation.settings import MicroaggregationSettings
from sqlanon.spec.schema import Spec
from sqlanon.sql.nodes import alias, col, count_star, internal, table

BLOCK = internal("block")
STRATA, SOURCE = internal("b"), internal("s")
SQL_ALGORITHMS = "individual_ranking or projection, which run as SQL"


def refuse_unblocked(settings: MicroaggregationSettings, engine: Engine) -> None:
    """A pulled algorithm without ``block_by`` would read every row into one process: refuse it on
    an engine whose rows stay in the engine, saying what to do instead."""
    if settings.in_sql or settings.block_by:
        return
    where = f"on {engine.name} the rows stay in the engine"
    if traits(settings.algorithm).per_attribute:
        raise UnsupportedError(f"algorithm {settings.algorithm} groups each attribute over all rows at "
                               f"once, in one process; {where}: use algorithm {SQL_ALGORITHMS}")
    if settings.block_size:
        raise UnsupportedError(f"transformation.block_size orders all rows on one axis before cutting "
                               f"blocks, which needs them in one process; {where}: block by columns "
                               "instead (transformation.block_by: [column, ...])")
    raise UnsupportedError(f"algorithm {settings.algorithm} groups rows in numpy, which needs all rows on "
                           f"one machine; {where}, and it runs the algorithm on each block of rows: set "
                           "transformation.block_by to columns whose values split the rows into blocks "
                           "(blocks of fewer than k rows are pooled), or use algorithm "
                           f"{SQL_ALGORITHMS}")


@dataclass(frozen=True)
class Needed:
    """What each block's grouping reads, besides its rows."""

    spec: Spec
    settings: MicroaggregationSettings
    key: tuple[str, ...]
    kinds: Mapping[str, str]
    sensitive: tuple[str, ...]
    sensitive_kinds: Mapping[str, str]
    options: Mapping[str, Any]
    distinct: Mapping[str, tuple[Any, ...]]
    valued: tuple[str, ...]
    rows: int
    """All rows of the table: group numbers are ``block * rows + group within the block``."""


class BlockGrouping:
    """The algorithm on one block's rows (an Arrow table), where the engine runs it: returns the
    rows' keys, group numbers and, for ordinal and nominal attributes, their group's value."""

    def __init__(self, needed: Needed) -> None:
        self.needed = needed

    def __call__(self, data: pa.Table) -> pa.Table:
        w = self.needed
        data = data.sort_by([(c, "ascending") for c in w.key])  # the order a pull reads them in
        arrays = {name: data.column(name).to_numpy(zero_copy_only=False) for name in data.column_names}
        pulled = rows.Pulled({c: arrays[c] for c in w.key}, arrays)
        attributes = w.settings.attributes
        records = rows.records(pulled, w.spec, attributes, w.kinds, w.sensitive, w.sensitive_kinds,
                               w.distinct)
        labels = grouping.partition(records, w.settings, dict(w.options))
        block = int(arrays[BLOCK][0])
        out: dict[str, Any] = {c: data.column(c) for c in w.key}
        out[masking.group_column(0)] = pa.array(block * w.rows + labels, pa.int64())
        for i, a in enumerate(w.valued):
            values = grouping.group_values(records, w.settings, a, w.kinds[a], labels,
                                           tuple(w.spec.attributes[a].order or ()))
            out[masking.centroid_column(i)] = pa.array(values.tolist()).cast(data.schema.field(a).type)
        return pa.table(out)


@dataclass(frozen=True)
class EngineGroups:
    """The group table the engine wrote, and what its groups are."""

    name: str
    layout: masking.GroupLayout
    groups: int
    min_group_size: int
    max_group_size: int


def group_in_engine(engine: Engine, keyed: exp.Expression, key: rows.RowKey, types: Mapping[str, str],
                    needed: Needed, *, name: str | None = None, temporary: bool = True,
                    schema: str | None = None) -> EngineGroups:
    """Group the rows of ``keyed`` block by block inside the engine into the group table ``name``."""
    settings = needed.settings
    if not key.synthetic:
        refuse_repeated_keys(engine, keyed, key.columns)
    strata = staging_name(new_token(), "strata")
    engine.create_table_from_arrow(strata, _strata_blocks(engine, keyed, settings), temporary=True)
    try:
        wanted = list(dict.fromkeys([*key.columns, *settings.attributes, *needed.sensitive]))
        on = exp.and_(*[exp.NullSafeEQ(this=_text(col(c, SOURCE)), expression=col(_stratum(i), STRATA))
                        for i, c in enumerate(settings.block_by)])
        query = exp.select(*[col(c, SOURCE) for c in wanted], col(BLOCK, STRATA)) \
            .from_(rows.as_relation(keyed, SOURCE)) \
            .join(exp.alias_(table(strata), STRATA, table=True, quoted=True), on=on, join_type="inner")
        name = name or staging_name(new_token(), "groups")
        columns = [(c, "bigint" if key.synthetic else types[c]) for c in key.columns]
        columns += [(masking.group_column(0), "bigint")]
        columns += [(masking.centroid_column(i), types[a]) for i, a in enumerate(needed.valued)]
        try:
            engine.map_arrow_groups(name, query, [BLOCK], BlockGrouping(needed), columns,
                                    temporary=temporary, schema=schema)
        except EngineError as e:
            refused = _refused_values(e)
            if refused is None:
                raise
            raise refused from e
    except BaseException:
        engine.drop(strata)
        raise
    # the strata stay until the run ends: the group table's plan may read them again
    numeric = tuple(a for a in settings.attributes if needed.kinds[a] == rows.NUMERIC)
    layout = masking.GroupLayout((numeric,) if numeric else (), needed.valued)
    groups, smallest, largest = _group_sizes(engine, name, schema)
    return EngineGroups(name, layout, groups, smallest, largest)


def distinct_values(engine: Engine, relation: exp.Expression, columns: Sequence[str]
                    ) -> dict[str, tuple[Any, ...]]:
    """Each column's distinct values, sorted as text (as a nominal column codes them)."""
    out = {}
    for c in columns:
        q = exp.select(col(c)).distinct().from_(rows.as_relation(relation, SOURCE))
        out[c] = tuple(sorted((r[0] for r in engine.fetch(q)[1]), key=str))
    return out


def refuse_repeated_keys(engine: Engine, relation: exp.Expression, key: Sequence[str]) -> None:
    """A declared key names one row each (NULLs are refused before); the same message as a pull's."""
    count = internal("n")
    repeated = exp.select(*[col(c) for c in key], alias(count_star(), count)) \
        .from_(rows.as_relation(relation, SOURCE)).group_by(*[col(c) for c in key]) \
        .having(exp.GT(this=count_star(), expression=exp.Literal.number(1)))
    shared = rows.as_relation(repeated, internal("r"))
    total = engine.fetch(exp.select(exp.Sum(this=col(count))).from_(shared))[1][0][0]
    if total:
        example = engine.fetch(exp.select(*[col(c) for c in key]).from_(shared.copy()).limit(1))[1][0]
        raise SpecError(f"the key ({', '.join(key)}) is not unique: {int(total)} rows share a value, "
                        f"e.g. {tuple(example)!r}", path="transformation.key")


_SPEC_ERROR = re.compile(r"^(?:sqlanon\.errors\.)?SpecError: "
                         r"(?:((?:attributes|transformation)\.[^:]*): )?(.+)$")


def _refused_values(error: EngineError) -> SpecError | None:
    """A block's values refused by the grouping (a NaN, an ordinal value not in its order), as the
    error a pull of the rows raises: the engine reports it as the function's error."""
    found = _SPEC_ERROR.match(error.detail or "")
    return SpecError(found.group(2), path=found.group(1) or "") if found else None


def _stratum(i: int) -> str:
    return internal(f"t{i}")


def _text(expression: exp.Expression) -> exp.Expression:
    return exp.cast(expression, exp.DataType.build("text"))


def _strata_blocks(engine: Engine, relation: exp.Expression, settings: MicroaggregationSettings) -> pa.Table:
    """Each stratum of ``block_by`` (its values as text) and its block, as the blocking of pulled
    rows numbers them; read from one GROUP BY."""
    texts = [alias(_text(col(c)), _stratum(i)) for i, c in enumerate(settings.block_by)]
    q = exp.select(*texts, alias(count_star(), internal("n"))) \
        .from_(rows.as_relation(relation, SOURCE)).group_by(*[_text(col(c)) for c in settings.block_by])
    strata = sorted(engine.fetch(q)[1], key=lambda r: tuple(stratum_order(t) for t in r[:-1]))
    blocks = pooled_strata([int(r[-1]) for r in strata], settings.k)
    m = len(settings.block_by)
    return pa.table({**{_stratum(i): pa.array([r[i] for r in strata], pa.string()) for i in range(m)},
                     BLOCK: pa.array(blocks, pa.int64())})


def _group_sizes(engine: Engine, name: str, schema: str | None) -> tuple[int, int, int]:
    size = internal("size")
    g = col(masking.group_column(0))
    per_group = exp.select(alias(count_star(), size)).from_(table(name, schema)).group_by(g)
    row = engine.fetch(exp.select(count_star(), exp.Min(this=col(size)), exp.Max(this=col(size)))
                       .from_(rows.as_relation(per_group, internal("g"))))[1][0]
    return int(row[0]), int(row[1] or 0), int(row[2] or 0)
