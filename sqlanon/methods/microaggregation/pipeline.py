"""Microaggregation of a table inside the database (docs/microaggregation.md).

Two kinds of algorithm:

* **SQL methods** (``individual_ranking``, ``projection``) are one query over the source; nothing is
  pulled (``projection`` first reads the attributes' means and covariances with one aggregate query).
* **Pulled algorithms** (``mdav``, ``vmdav``, ``optimal_univariate`` and every partitioner in
  :mod:`sqlanon.methods.microaggregation.algorithms.registry`): the attributes are pulled once, ``ORDER BY``
  the row key (:mod:`sqlanon.methods.microaggregation.rows`), grouped in numpy (optionally within blocks,
  :mod:`sqlanon.methods.microaggregation.algorithms.blocking`), the ``(key, group)`` pairs go back into the
  database as a group table, and one SELECT joins it and replaces each attribute by its group's mean or median
  (:mod:`sqlanon.methods.microaggregation.masking`). Ordinal attributes take the value of their group's median
  rank (Domingo-Ferrer J, Torra V. Ordinal, continuous and heterogeneous k-anonymity through
  microaggregation. DMKD 11(2), 2005), nominal ones their group's centroid
  (:data:`~sqlanon.methods.microaggregation.algorithms.registry.CENTROIDS`, the mode by default).
  On an engine that keeps its rows to itself (capability ``grouped_arrow_map``: Spark) nothing is
  pulled: each block of ``block_by`` is grouped inside the engine
  (:mod:`sqlanon.methods.microaggregation.in_engine`), and without blocking the algorithm is refused.

Confidential and insensitive columns pass unchanged, identifiers are dropped, hashed or masked as in
the generalization outputs. NULLs in a microaggregated attribute are refused, naming the column and the
count (individual ranking alone keeps them: a NULL stays NULL and is ranked apart).
"""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from sqlglot import exp

from sqlanon.compile.hash_text import parse_types
from sqlanon.compile.released import OutputQuery
from sqlanon.domain.metrics.numeric import is_numeric_type
from sqlanon.engines.base import Engine
from sqlanon.engines.staging import new_token, staging_name
from sqlanon.errors import SpecError, UnsupportedError, did_you_mean
from sqlanon.methods.base import KEPT_TABLE_SUFFIX as GROUPS_SUFFIX
from sqlanon.methods.dataset import Dataset
from sqlanon.methods.microaggregation import grouping, in_engine, masking, numbered, rows
from sqlanon.methods.microaggregation.algorithms import blocking
from sqlanon.methods.microaggregation.algorithms.projection import projection_axis, projection_query
from sqlanon.methods.microaggregation.algorithms.registry import get_algorithm, traits
from sqlanon.methods.microaggregation.algorithms.sql_ranking import individual_ranking
from sqlanon.methods.microaggregation.progress import ProgressLine
from sqlanon.methods.microaggregation.quality import group_sizes, information_loss
from sqlanon.methods.microaggregation.records import Records
from sqlanon.methods.microaggregation.settings import MicroaggregationSettings
from sqlanon.spec.schema import Spec
from sqlanon.sql.dialects import DialectProfile
from sqlanon.sql.nodes import count_star

PULL_PROGRESS_ROWS = 20_000
"""Runs on more rows than this draw a progress line on a terminal."""
RECORD_LINKAGE_MAX_ROWS = 2_000_000
"""Record linkage (rows pulled into memory) is computed up to this many rows."""


@dataclass
class Masking:
    """A microaggregation ready to be written: the released rows as SQL, and what the groups are."""

    settings: MicroaggregationSettings
    columns: list[str]
    key: rows.RowKey
    keyed: exp.Expression
    """The source with its row key."""
    released: exp.Expression
    """Every source column and the key, microaggregated (reads the group table, if any)."""
    output_source: exp.Expression
    """What the output selects from: ``released``, or for SQL methods the same without a row key."""
    rows: int
    groups: int | dict[str, int]
    min_group_size: int
    max_group_size: int
    numeric: list[str]
    group_table: str | None = None
    group_schema: str | None = None
    warnings: list[str] = field(default_factory=list)
    types: dict[str, exp.DataType] = field(default_factory=dict)
    """The source columns' types (identifiers are hashed in their type's canonical text)."""
    persons_table: exp.Expression | None = None
    """With a privacy unit: the person-level records grouped (a temporary table, or inline)."""

    def summary(self) -> dict[str, Any]:
        s = self.settings
        return {"method": "microaggregation", "algorithm": s.algorithm, "k": s.k,
                "attributes": list(s.attributes), "statistic": s.statistic,
                **({"projection": s.projection} if s.algorithm == "projection" or s.block_size else {}),
                **({"block_by": list(s.block_by)} if s.block_by else {}),
                **({"block_size": s.block_size} if s.block_size else {}),
                **({"key": list(s.key)} if s.key else {}),
                **({k: v for k, v in s.partitioner_options.items()})}


def _check_columns(settings: MicroaggregationSettings, columns: list[str]) -> None:
    for label, names in (("key", settings.key), ("block_by", settings.block_by)):
        for i, c in enumerate(names):
            if c not in columns:
                raise SpecError(f"{c!r} is not a column of the source; columns: {', '.join(columns)}."
                                + did_you_mean(c, columns), path=f"transformation.{label}[{i}]")


def _attribute_paths(spec: Spec, attributes: tuple[str, ...]) -> dict[str, str]:
    if "attributes" in spec.transformation.options:
        return {a: f"transformation.attributes[{i}]" for i, a in enumerate(attributes)}
    return {a: f"attributes.{a}" for a in attributes}


def prepare(spec: Spec, ds: Dataset, *, group_table: str | None = None, group_schema: str | None = None,
            temporary: bool = True, progress: bool = False, standalone: bool = False) -> Masking:
    """Check the source, group its rows and return the released rows as SQL.

    Pulled algorithms create their group table (``group_table``, default a temporary
    ``__sa_stage_<random>_groups``); the caller drops it (:func:`drop_group_table`). So does
    individual ranking on an engine that numbers rows itself
    (:mod:`sqlanon.methods.microaggregation.numbered`), unless the SQL must be ``standalone``
    (a view or printed SQL, read after the run).

    Raises:
        SpecError: an attribute is not numeric (and not ordinal or nominal with a hierarchy where the
            algorithm allows it), holds NULLs, the key is not unique, k exceeds the rows, ...
    """
    if spec.privacy_unit is not None:
        from sqlanon.methods.microaggregation.persons import person_masking

        return person_masking(spec, ds, lambda s, d: prepare(
            s, d, group_table=group_table, group_schema=group_schema, temporary=temporary,
            progress=progress, standalone=standalone))
    settings: MicroaggregationSettings = spec.microaggregation
    engine = ds.engine
    columns = ds.column_names
    types = dict(ds.columns)
    _check_columns(settings, columns)
    if engine.capabilities.grouped_arrow_map:
        in_engine.refuse_unblocked(settings, engine)
    attributes = settings.attributes
    kinds = {a: rows.attribute_kind(spec, a, types[a]) for a in attributes}
    in_sql = settings.in_sql
    pulled_traits = None if in_sql else traits(settings.algorithm)
    if in_sql:
        for a in attributes:
            if not is_numeric_type(types[a]):
                raise SpecError(f"{a!r} is not numeric (type {types[a]}); {settings.algorithm} orders and "
                                "averages numbers in SQL (cast the column to a number first)",
                                path=_attribute_paths(spec, attributes)[a])
    else:
        rows.check_kinds(spec, attributes, kinds, nominal_ok=bool(pulled_traits and pulled_traits.nominal),
                         algorithm=settings.algorithm)
    key = rows.RowKey.of(settings.key, columns)
    keyed = rows.keyed_source(ds.relation, columns, key)
    if not key.synthetic:
        rows.refuse_nulls(engine, ds.relation, key.columns, "a key",
                          {c: "transformation.key" for c in key.columns})
    nulls = rows.count_nulls(engine, ds.relation, attributes)
    n = _count(engine, ds.relation)
    if settings.k > n:
        raise SpecError(f"k = {settings.k} is larger than the number of rows ({n})", path="transformation.k")
    if settings.algorithm != "individual_ranking":
        for a in attributes:
            if nulls[a]:
                raise SpecError(f"column {a!r} has {nulls[a]} NULL value{'s' if nulls[a] != 1 else ''}; "
                                f"{settings.algorithm} needs a value in every row (impute or filter them "
                                "first; nothing was written)", path=_attribute_paths(spec, attributes)[a])
    if in_sql:
        m = _sql_masking(spec, ds, settings, key, keyed, n, nulls, standalone)
    elif engine.capabilities.grouped_arrow_map:
        m = _engine_masking(spec, ds, settings, key, keyed, kinds, n, group_table, group_schema, temporary)
    else:
        m = _pulled_masking(spec, ds, settings, key, keyed, kinds, n, group_table, group_schema,
                            temporary, progress)
    m.types = parse_types(ds.columns, engine.dialect.sqlglot)
    m.warnings += [f"privacy model {model} is not checked by microaggregation; the report gives the "
                   "achieved k only" for model in spec.privacy if getattr(model, "name", "") != "k_anonymity"]
    return m


def _count(engine: Engine, relation: exp.Expression) -> int:
    return int(engine.fetch(exp.select(count_star()).from_(relation.copy()))[1][0][0])


def _sql_query(settings: MicroaggregationSettings, source: exp.Expression, columns: list[str],
               key: list[str] | None, axis: Any) -> exp.Select:
    if settings.algorithm == "individual_ranking":
        return individual_ranking(source, columns, list(settings.attributes), settings.k, key=key,
                                  statistic=settings.statistic)
    return projection_query(source, columns, list(settings.attributes), settings.k, axis, key=key,
                            statistic=settings.statistic)


def _sql_masking(spec: Spec, ds: Dataset, settings: MicroaggregationSettings, key: rows.RowKey,
                 keyed: exp.Expression, n: int, nulls: dict[str, int], standalone: bool) -> Masking:
    columns = ds.column_names
    axis = projection_axis(ds.engine, ds.relation, settings.attributes, settings.projection) \
        if settings.algorithm == "projection" else None
    declared = list(key.columns) if not key.synthetic else None
    k = settings.k
    present = {a: n - nulls[a] for a in settings.attributes}
    ranks = None
    if numbered.wanted(ds.engine, settings.algorithm, standalone):
        ranks = numbered.numbered_ranking(ds.engine, ds.relation, columns, settings.attributes, k,
                                          declared, settings.statistic, list(present.values()), n)
    output_source = ranks.query if ranks else _sql_query(settings, ds.relation, columns, declared, axis)
    with_key = [*columns, *key.columns] if key.synthetic else columns
    # with a declared key the released rows are the output's rows
    released = output_source if ranks and declared else \
        _sql_query(settings, keyed, with_key, declared or [*columns, *key.columns], axis)
    counts = {a: m // k for a, m in present.items()}
    sizes = [size for m in present.values() for size in _run_sizes(m, k)]
    warnings = [f"{a!r}: {nulls[a]} NULL value{'s' if nulls[a] != 1 else ''} stay NULL"
                + (f"; fewer than k = {k} values are present, so every value becomes NULL" if m < k else "")
                for a, m in present.items() if nulls[a]]
    # one value for a multivariate algorithm; its own variable, since mypy 1.x infers next()'s type
    # from the conditional's declared type and reports the dict's values as not iterable
    first: int = next(iter(counts.values()), 0)
    groups: int | dict[str, int] = counts if settings.algorithm == "individual_ranking" else first
    return Masking(settings, columns, key, keyed, released, output_source, n, groups,
                   min(sizes) if sizes else 0, max(sizes) if sizes else 0,
                   list(settings.attributes), group_table=ranks.table if ranks else None,
                   warnings=warnings)


def _run_sizes(m: int, k: int) -> tuple[int, ...]:
    """Group sizes of ``m`` ranked values in runs of ``k``, the remainder joining the last run."""
    if m < k:
        return ()
    if m < 2 * k:
        return (m,)
    return (k, k + m % k)


def _confidential_defaults(spec: Spec, settings: MicroaggregationSettings,
                           sensitive: list[str]) -> dict[str, Any]:
    """Options a confidential-attribute algorithm takes from the spec unless set: the attribute's
    declared ``order`` and the ``distance`` of the spec's t-closeness model on it, so that the release
    is built for the distance the model checks."""
    from sqlanon.domain.models.t_closeness import TCloseness

    options = settings.partitioner_options
    params = inspect.signature(get_algorithm(settings.algorithm)).parameters
    attribute = options.get("attribute") or (sensitive[0] if len(sensitive) == 1 else None)
    if attribute is None or attribute not in spec.attributes:
        return {}
    out: dict[str, Any] = {}
    order = spec.attributes[attribute].order
    if "order" in params and "order" not in options and order:
        out["order"] = tuple(order)
    models = [m for m in spec.privacy if isinstance(m, TCloseness) and m.attribute == attribute]
    if "distance" in params and "distance" not in options and models:
        out["distance"] = models[0].distance
    return out


def _partition(records: Records, settings: MicroaggregationSettings, line: ProgressLine,
               block_values: list[np.ndarray], defaults: dict[str, Any] | None = None) -> np.ndarray:
    options = {**(defaults or {}), **settings.partitioner_options}

    def run(r: Records) -> np.ndarray:
        return grouping.partition(r, settings, options)

    if settings.block_by:
        blocks = blocking.strata_blocks(block_values, settings.k)
    elif settings.block_size:
        scores = blocking.projection_scores(records.x, settings.projection)
        blocks = blocking.projection_blocks(scores, settings.block_size, settings.k)
    else:
        line.update("grouping")
        return run(records)
    return blocking.partition_blocks(records, blocks, run,
                                     lambda i, b: line.update(f"block {i + 1} of {b}"))


def _sensitive(spec: Spec, ds: Dataset, settings: MicroaggregationSettings) -> dict[str, str]:
    """The confidential attributes the algorithm reads (NULLs refused), and their kinds."""
    if not traits(settings.algorithm).sensitive:
        return {}
    sensitive = [s for s in spec.sensitive if s not in settings.attributes]
    if sensitive:
        rows.refuse_nulls(ds.engine, ds.relation, sensitive, settings.algorithm, {})
    return {s: rows.attribute_kind(spec, s, dict(ds.columns)[s]) for s in sensitive}


def _engine_masking(spec: Spec, ds: Dataset, settings: MicroaggregationSettings, key: rows.RowKey,
                    keyed: exp.Expression, kinds: dict[str, str], n: int, group_table: str | None,
                    group_schema: str | None, temporary: bool) -> Masking:
    """Blocks grouped inside the engine (:mod:`sqlanon.methods.microaggregation.in_engine`)."""
    engine, columns, attributes = ds.engine, ds.column_names, settings.attributes
    sensitive_kinds = _sensitive(spec, ds, settings)
    sensitive = list(sensitive_kinds)
    nominal = [a for a, kind in {**kinds, **sensitive_kinds}.items() if kind == rows.NOMINAL]
    options = {**(_confidential_defaults(spec, settings, sensitive) if sensitive else {}),
               **settings.partitioner_options}
    needed = in_engine.Needed(spec, settings, key.columns, kinds, tuple(sensitive), sensitive_kinds, options,
                              in_engine.distinct_values(engine, keyed, nominal),
                              tuple(a for a in attributes if kinds[a] != rows.NUMERIC), n)
    g = in_engine.group_in_engine(engine, keyed, key, dict(ds.columns), needed, name=group_table,
                                  temporary=temporary, schema=group_schema)
    released = masking.released_query(keyed, columns, key, g.name, g.layout, settings.statistic,
                                      group_schema=group_schema)
    return Masking(settings, columns, key, keyed, released, released, n, g.groups, g.min_group_size,
                   g.max_group_size, [a for a in attributes if kinds[a] == rows.NUMERIC],
                   group_table=g.name, group_schema=group_schema)


def _pulled_masking(spec: Spec, ds: Dataset, settings: MicroaggregationSettings, key: rows.RowKey,
                    keyed: exp.Expression, kinds: dict[str, str], n: int, group_table: str | None,
                    group_schema: str | None, temporary: bool, progress: bool) -> Masking:
    engine, columns = ds.engine, ds.column_names
    t = traits(settings.algorithm)
    attributes = settings.attributes
    sensitive_kinds = _sensitive(spec, ds, settings)
    sensitive = list(sensitive_kinds)
    wanted = [*attributes, *sensitive, *[c for c in settings.block_by if c not in attributes]]
    pulled = rows.pull(engine, keyed, key, wanted)
    records = rows.records(pulled, spec, attributes, kinds, sensitive, sensitive_kinds)
    block_values = [pulled.columns[c] for c in settings.block_by]
    label = f"{settings.algorithm} on {n} rows"
    with ProgressLine(label, enabled=progress and n > PULL_PROGRESS_ROWS) as line:
        if t.per_attribute:
            labels_of = {}
            for j, a in enumerate(records.names):
                line.update(f"attribute {j + 1} of {len(records.names)}")
                one = Records(np.ascontiguousarray(records.x[:, [j]]), (a,))
                labels_of[a] = _partition(one, settings, line, block_values)
        else:
            shared = _partition(records, settings, line, block_values,
                                _confidential_defaults(spec, settings, sensitive) if sensitive else None)
            labels_of = {a: shared for a in attributes}
    numeric = tuple(a for a in attributes if kinds[a] == rows.NUMERIC)
    valued = tuple(a for a in attributes if kinds[a] != rows.NUMERIC)
    values = [grouping.group_values(records, settings, a, kinds[a], labels_of[a],
                                    spec.attributes[a].order or ()) for a in valued]
    partitions = tuple((a,) for a in numeric) if t.per_attribute else (numeric,)
    labels = [labels_of[p[0]] for p in partitions if p]
    layout = masking.GroupLayout(tuple(p for p in partitions if p), valued)
    name = group_table or staging_name(new_token(), "groups")
    masking.create_group_table(engine, name, keyed, key, layout, temporary=temporary, schema=group_schema)
    try:
        masking.fill_group_table(engine, name, pulled.keys, labels, values, schema=group_schema)
    except BaseException:
        engine.drop(name, schema=group_schema)
        raise
    released = masking.released_query(keyed, columns, key, name, layout, settings.statistic,
                                      group_schema=group_schema)
    sizes = {a: group_sizes(g) for a, g in labels_of.items()}
    groups: int | dict[str, int] = {a: int(len(s)) for a, s in sizes.items()} if t.per_attribute \
        else int(len(sizes[attributes[0]]))
    return Masking(settings, columns, key, keyed, released, released, n, groups,
                   int(min(s.min() for s in sizes.values())), int(max(s.max() for s in sizes.values())),
                   [a for a in attributes if kinds[a] == rows.NUMERIC], group_table=name,
                   group_schema=group_schema)


def drop_group_table(ds: Dataset, m: Masking) -> None:
    if m.group_table:
        ds.engine.drop(m.group_table, schema=m.group_schema)
    if isinstance(m.persons_table, exp.Table):
        ds.engine.drop(m.persons_table.name)


@contextmanager
def temporary_masking(spec: Spec, ds: Dataset, *, progress: bool = False) -> Iterator[Masking]:
    """A masking whose group table (if any) is temporary and dropped on exit."""
    m = prepare(spec, ds, progress=progress)
    try:
        yield m
    finally:
        drop_group_table(ds, m)


def output_query(spec: Spec, m: Masking, target: DialectProfile) -> OutputQuery:
    return masking.output_rows(spec, m.output_source, m.columns, target, m.types)


def quality(ds: Dataset, m: Masking) -> dict[str, Any]:
    """SSE, SST, 100·SSE/SST, IL1s and record linkage over the numeric attributes (none: empty).

    Record linkage pulls every row's original and released values; above
    :data:`RECORD_LINKAGE_MAX_ROWS` rows it is left out, with a warning.
    """
    if not m.numeric:
        return {}
    linkage = m.rows <= RECORD_LINKAGE_MAX_ROWS
    if not linkage:
        m.warnings.append(f"record_linkage is left out above {RECORD_LINKAGE_MAX_ROWS:,} rows (it pulls "
                          "every row into memory)")
    return information_loss(ds.engine, m.keyed, m.released, m.numeric, m.key.columns, linkage=linkage)


def refuse_compile(settings: MicroaggregationSettings) -> None:
    """Pulled algorithms have no SQL of their own: their SQL reads the group table ``apply`` creates."""
    if not settings.in_sql:
        raise UnsupportedError(f"algorithm {settings.algorithm} groups rows outside SQL, so its SQL reads "
                               "a group table; `apply` with output mode sql or view creates it as "
                               f"<output>{GROUPS_SUFFIX} and prints or creates the statement that reads it")
