"""``transformation: {method: noise}``: perturb a table inside the engine and report what it cost.

The noise is drawn in numpy from a cryptographically seeded generator (or the spec's seed) and meets
the rows in one ``CREATE TABLE ... AS SELECT`` (:mod:`sqlanon.engines.row_values`); in place, the new
table replaces the source inside one transaction, so a failure leaves the source as it was. A DP
release whose spec names a ledger ``dataset`` is charged to it in that same transaction
(:class:`~sqlanon.methods.dp.release_budget.ReleaseBudget`), except on DuckDB's block writer, whose
blocks commit one by one, and on an engine without transactions (Spark, whose ledger then lives in
a database of its own): there the spend is committed before the first row is written and refunded
if the write fails (noisy rows are never readable under no spend, even after a SIGKILL). Every run first
removes the staging tables of interrupted runs (:mod:`sqlanon.engines.staging`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np
from sqlglot import exp

from sqlanon.compile.hash_text import parse_types
from sqlanon.compile.released import OutputQuery
from sqlanon.domain.metrics.numeric import W, is_numeric_type, original_column, released_column
from sqlanon.engines.row_values import ROW_KEY, SOURCE, VALUES, Block, schema_name
from sqlanon.engines.staging import StagingArea, remove_leftovers
from sqlanon.errors import InternalError, SpecError
from sqlanon.methods.base import Sink, TableWriter
from sqlanon.methods.dataset import Dataset
from sqlanon.methods.dp.person_microdata import neighbours, release_microdata
from sqlanon.methods.dp.release_budget import ReleaseBudget, open_ledger
from sqlanon.methods.microaggregation.quality import ORIGINAL, RELEASED, numeric_quality
from sqlanon.methods.perturbation.categorical import (
    categorical_draw,
    categorical_in_numpy,
    categorical_quality,
    in_sql,
    original_name,
    released_name,
    transitions,
    value_counts,
)
from sqlanon.methods.perturbation.draws import Draw, additive, noise_column, per_row, sampling
from sqlanon.methods.perturbation.mapped import refuse_large_matrices, refuse_unmapped, write_mapped
from sqlanon.methods.perturbation.moments import statistics_of
from sqlanon.methods.perturbation.options import (
    ADDITIVE,
    CATEGORICAL,
    CHARGEABLE,
    DP_MICRODATA,
    NoiseOptions,
    dp_cost,
    parse,
)
from sqlanon.methods.perturbation.result import NoiseReport
from sqlanon.methods.rng import RowKey, make_rng
from sqlanon.spec.schema import Spec
from sqlanon.sql.nodes import alias, as_double, as_expression, col, lit, table

if TYPE_CHECKING:
    from sqlanon.engines.base import Engine

CONTINUOUS = frozenset({"uncorrelated", "correlated", "gaussian", "staircase"})
"""Mechanisms whose outputs are continuous doubles (stored uncompressed: sqlanon.engines.duckdb_blocks)."""

_INTEGER_TYPES = frozenset({"TINYINT", "SMALLINT", "INTEGER", "INT", "INT2", "INT4", "INT8", "BIGINT",
                            "HUGEINT", "UTINYINT", "USMALLINT", "UINTEGER", "UBIGINT"})


def run_noise(spec: Spec, ds: Dataset, sink: Sink, *, dry_run: bool = False,
              quality: bool = True) -> NoiseReport:
    """Perturb the opened source as the spec's transformation says and write the output through
    ``tables`` (the output was checked before: :meth:`~sqlanon.methods.base.Sink.check`).

    ``quality`` False skips the utility and risk metrics (two more scans of both tables).

    Raises:
        SpecError: bad noise settings, attributes that are not columns of the right type.
    """
    opts = options_of(spec)
    try:
        with open_ledger(opts.ledger.ledger if opts.ledger else None) as books:
            return _apply(spec, ds, opts, dry_run, quality, sink, books)
    except SpecError as e:
        if e.source is not None or spec.path is None:
            raise
        raise type(e)(e.rule, path=e.path, source=spec.path) from None


def _apply(spec: Spec, ds: Dataset, opts: NoiseOptions, dry_run: bool, quality: bool,
           sink: Sink, books: Engine | None) -> NoiseReport:
    refuse_unmapped(ds.engine, opts)
    removed = [] if dry_run else remove_leftovers(ds.engine)
    if opts.mechanism == DP_MICRODATA:
        report = _dp_microdata(spec, ds, opts, dry_run, quality, sink, books)
    else:
        report = _perturb(spec, ds, opts, dry_run, quality, sink, books)
    if removed:
        report.outputs["staging_removed"] = removed
    return report


def _perturb(spec: Spec, ds: Dataset, opts: NoiseOptions, dry_run: bool, quality: bool,
             sink: Sink, books: Engine | None) -> NoiseReport:
    types = _check_columns(spec, ds, opts)
    rng = make_rng(opts.seed)
    n = ds.engine.row_count(ds.name, schema=schema_name(ds.relation))
    report = NoiseReport(opts.mechanism, opts.attributes, n, _public(opts))
    if dry_run:
        return report
    name, exists = sink.destination()  # refused before anything is drawn, set or spent
    budget = _release_budget(spec, ds, opts, books)
    budget.check()
    report.outputs, report.metrics, report.guarantee = _write(spec, ds, opts, rng, n, types, quality,
                                                              name, exists, budget,
                                                              sink.tables(ds))
    if opts.mechanism in CHARGEABLE:
        report.guarantee["ledger"] = budget.as_dict()
    return report


def _release_budget(spec: Spec, ds: Dataset, opts: NoiseOptions, books: Engine | None
                    ) -> ReleaseBudget:
    """The ledger charge of a DP release under substitution: the per-record (m·ε, m·δ)
    (:func:`~sqlanon.methods.perturbation.options.dp_cost`). Without a ledger dataset, none."""
    if opts.ledger is None:
        return ReleaseBudget(ds.engine, None, 0)
    cost = dp_cost(opts)
    assert cost is not None  # options.parse takes a dataset only for the DP mechanisms
    mode = "in place" if spec.output.mode == "in_place" else \
        f"into {spec.output.name or ds.name + '_anon'!r}"
    return ReleaseBudget(ds.engine, opts.ledger.dataset, cost[0], cost[1],
                         budget_epsilon=opts.ledger.budget_epsilon,
                         budget_delta=opts.ledger.budget_delta, ledger=books,
                         release_key=opts.ledger.release_key,
                         description=f"{opts.mechanism} noise on {', '.join(opts.attributes)} of table "
                                     f"{ds.name!r} {mode}")


def _dp_microdata(spec: Spec, ds: Dataset, opts: NoiseOptions, dry_run: bool,
                  quality: bool, sink: Sink, books: Engine | None) -> NoiseReport:
    """ε-DP microdata: numeric attributes (those with bounds) and nominal ones (their hierarchy is
    the taxonomy); see :mod:`sqlanon.methods.dp.microdata`. The metrics compare the numeric ones."""
    p = opts.params
    categorical = {}
    for a in opts.attributes:
        if a in p["bounds"]:
            continue
        attribute = spec.attributes.get(a)
        if attribute is None or attribute.hierarchy is None:
            raise SpecError(f"{a!r} has no bounds, so it is nominal, and a nominal attribute needs a "
                            "taxonomy: give it a hierarchy covering its whole domain (or give a "
                            "numeric attribute its public bounds under transformation.bounds)",
                            path=f"attributes.{a}.hierarchy", source=spec.path)
        categorical[a] = attribute.hierarchy
    n = ds.engine.row_count(ds.name, schema=schema_name(ds.relation))
    report = NoiseReport(opts.mechanism, opts.attributes, n, _public(opts))
    if dry_run:
        return report
    name = spec.output.name or f"{ds.name}_anon"
    ledger = opts.ledger
    unit = None if spec.privacy_unit is None else spec.privacy_unit.column
    released = release_microdata(ds.engine, ds.name, name, unit, k=p["k"], epsilon=p["epsilon"],
                                 bounds=p["bounds"], categorical=categorical, method=p["order"],
                                 seed=opts.seed, trust_bounds=p["trust_bounds"],
                                 replace=spec.output.replace, quality=quality,
                                 linkage=opts.linkage,
                                 dataset=ledger.dataset if ledger else None,
                                 budget_epsilon=ledger.budget_epsilon if ledger else None,
                                 budget_delta=ledger.budget_delta if ledger else 0.0,
                                 schema=ds.schema, tables=sink.tables(ds), ledger=books,
                                 release_key=ledger.release_key if ledger else None)
    report.guarantee = {key: v for key, v in released.as_dict().items()
                        if key not in ("output", "metrics")}
    report.metrics = released.metrics
    report.guarantee["neighbours"] = neighbours(unit)
    report.outputs = {"mode": "table", "relation": name, "rows": released.rows}
    return report


def options_of(spec: Spec) -> NoiseOptions:
    try:
        return parse(spec.transformation.options)
    except SpecError as e:
        raise SpecError(e.rule, path=e.path, source=spec.path) from None


def _public(opts: NoiseOptions) -> dict[str, Any]:
    """The parameters as given (matrices as nested lists), with the seed only said to be present."""
    params = {k: v for k, v in opts.params.items() if k != "matrix"}
    if "matrix" in opts.params:
        params["matrix"] = {a: {"categories": [str(c) for c in cats], "rows": rows}
                            for a, (cats, rows) in opts.params["matrix"].items()}
    params["seeded"] = opts.seed is not None
    return params


def _check_columns(spec: Spec, ds: Dataset, opts: NoiseOptions) -> dict[str, str]:
    types = dict(ds.columns)
    for a in opts.attributes:
        where = f"transformation.attributes.{a}"
        if a not in types:
            raise SpecError(f"{a!r} is not a column of {ds.name!r}", path=where, source=spec.path)
        attribute = spec.attributes.get(a)
        if attribute is not None and attribute.role == "identifier":
            raise SpecError(f"{a!r} is an identifier; identifiers are dropped, masked or hashed, not "
                            "perturbed", path=where, source=spec.path)
        if opts.mechanism not in CATEGORICAL and not is_numeric_type(types[a]):
            raise SpecError(f"{opts.mechanism} needs a numeric column; {a!r} has type {types[a]}",
                            path=where, source=spec.path)
        if opts.mechanism == "discrete_laplace" and types[a].upper() not in _INTEGER_TYPES:
            raise SpecError(f"discrete_laplace needs an integer column; {a!r} has type {types[a]}",
                            path=where, source=spec.path)
    return types


def _draw(ds: Dataset, opts: NoiseOptions, rng: np.random.Generator, n: int,
          types: dict[str, str]) -> tuple[Draw, np.ndarray | None]:
    """The draw, and the row keys its values belong to when it read them with the values."""
    if opts.mechanism in ADDITIVE:
        integers = frozenset(a for a in opts.attributes if types[a].upper() in _INTEGER_TYPES)
        return additive(opts, RowKey.of(rng), statistics_of(ds, opts), integers), None
    if opts.mechanism == "sampling":
        return sampling(opts.params["fraction"], n, rng), None
    if opts.mechanism in CATEGORICAL:
        settings = transitions(opts, rng, lambda a: value_counts(ds.engine, ds.relation, a))
        if in_sql(settings):
            return categorical_draw(settings, RowKey.of(rng), types, ds.engine.dialect.name), None
        refuse_large_matrices(ds.engine, opts, settings)
        data = ds.engine.read_columns(ds.relation, list(opts.attributes))
        return categorical_in_numpy(settings, rng, data, types, ds.engine.dialect.name), data.get(ROW_KEY)
    data = ds.engine.read_columns(ds.relation, list(opts.attributes))
    keys = data.get(ROW_KEY)
    return per_row(opts, rng, data, types, ds.engine.dialect.name), keys


def _projection(spec: Spec, ds: Dataset, draw: Draw) -> list[exp.Expression]:
    released = OutputQuery(exp.select(), types=parse_types(ds.columns, ds.engine.dialect.sqlglot))
    out = []
    for c in ds.column_names:
        if c in draw.expressions:
            out.append(alias(draw.expressions[c], c))
        elif (value := released.released(spec, c, col(c, SOURCE), ds.engine.dialect)) is not None:
            out.append(value)
    return out


def _write(spec: Spec, ds: Dataset, opts: NoiseOptions, rng: np.random.Generator, n: int,
           types: dict[str, str], quality: bool, name: str, exists: bool, budget: ReleaseBudget,
           tables: TableWriter) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """Draw and write the output; its final transaction is ``budget``'s (charged or plain)."""
    draw, keys = _draw(ds, opts, rng, n, types)
    engine = ds.engine
    schema = schema_name(ds.relation)
    blocks = engine.row_blocks(ds.relation) if draw.independent is not None \
        and engine.capabilities.row_block_writes else None
    if draw.independent is not None and engine.capabilities.row_stream_map:
        metrics = write_mapped(ds, draw, name, exists, tables, budget,
                               lambda rows: rows.select(*_projection(spec, ds, draw), append=False),
                               lambda rows: _figures(ds, opts, draw, n, rows, lambda a: col(a, SOURCE),
                                                     lambda a: draw.expressions[a].copy())
                               if quality else {})
    elif blocks is not None:
        metrics = _write_blocks(spec, ds, opts, draw, n, blocks, name, exists, quality, budget, tables)
    else:
        metrics = _write_joined(spec, ds, opts, draw, keys, n, name, exists, quality, budget, tables)
    outputs = {"mode": spec.output.mode, "relation": name,
               "rows": engine.row_count(name, schema=schema)}
    return outputs, metrics, _per_record(draw.guarantee, opts.attributes)


def _write_joined(spec: Spec, ds: Dataset, opts: NoiseOptions, draw: Draw, keys: np.ndarray | None,
                  n: int, name: str, exists: bool, quality: bool, budget: ReleaseBudget,
                  tables: TableWriter) -> dict[str, Any]:
    """One CREATE TABLE AS joining the values to the rows (by position, or by key on PostgreSQL)."""
    engine, schema = ds.engine, schema_name(ds.relation)
    positional = engine.positional_rows()
    if not positional and keys is None:
        keys = engine.read_columns(ds.relation, [])[ROW_KEY]
    area = StagingArea(engine)
    staging = area.name() if exists else name

    def write() -> dict[str, Any]:
        metrics: dict[str, Any] = {}
        select = skeleton.select(*_projection(spec, ds, draw), append=False)
        if not positional:
            select = select.select(alias(engine.row_key(SOURCE), ROW_KEY))
        if opts.mechanism == "sampling":
            select = select.where(col(noise_column(0), VALUES))
        tables.create(staging, select)
        if quality:
            metrics = _quality(ds, opts, draw, staging, n)
        if not positional:
            engine.execute(exp.Alter(this=table(staging, schema), kind="TABLE", actions=[
                exp.Drop(tables=[col(ROW_KEY)], kind="COLUMN")]))
        if exists:
            tables.move_into_place(staging, name, replace=True)
        return metrics

    # the values are attached outside the transaction, so that they are released after a rollback;
    # DuckDB streams them once, so a transaction that lost a ledger conflict is not run again
    with area, engine.join_row_values(ds.relation, n, draw.schema, draw.batches, keys) as skeleton:
        return budget.write(write, once=positional)


def _write_blocks(spec: Spec, ds: Dataset, opts: NoiseOptions, draw: Draw,
                  n: int, blocks: list[Block], name: str, exists: bool, quality: bool,
                  budget: ReleaseBudget, tables: TableWriter) -> dict[str, Any]:
    """Row blocks written in parallel into a staging table, renamed into place in one transaction.

    The blocks commit one by one, so a DP release is charged before the first of them
    (:meth:`~sqlanon.methods.dp.release_budget.ReleaseBudget.charged_ahead`): a killed process leaves noisy
    rows only under a committed spend, and its staging table to the next run to remove
    (:mod:`sqlanon.engines.staging`).
    """
    engine, schema = ds.engine, schema_name(ds.relation)
    independent = draw.independent
    if independent is None:
        raise InternalError("a row-block write needs a draw whose noise each block can redraw on its own")
    with StagingArea(engine) as area:
        staging = area.name()

        def write() -> dict[str, Any]:
            engine.write_row_blocks(ds.relation, staging, blocks, draw.schema, independent,
                                    lambda skeleton: skeleton.select(
                                        *_projection(spec, ds, draw), append=False),
                                    uncompressed=frozenset(opts.attributes)
                                    if opts.mechanism in CONTINUOUS else frozenset())
            with engine.transaction():
                metrics = _quality(ds, opts, draw, staging, n) if quality else {}
                tables.move_into_place(staging, name, replace=exists)
            return metrics

        return budget.charged_ahead(write, discard=lambda: engine.discard_row_blocks(staging, schema))


def _per_record(guarantee: dict[str, Any], attributes: tuple[str, ...]) -> dict[str, Any]:
    """Adds what a whole record's perturbed values guarantee together.

    Each value is private for its own attribute; a changed record changes all its m values, so by
    sequential composition they are (Σε, Σδ)-DP together (seed 000 Thm 8.2 with erratum E7), and
    the records compose in parallel (Thm 8.3).
    """
    out = dict(guarantee)
    if "epsilon" in guarantee:
        out["epsilon_per_record"] = guarantee["epsilon"] * len(attributes)
        if "delta" in guarantee:
            out["delta_per_record"] = guarantee["delta"] * len(attributes)
    elif guarantee and all(isinstance(g, dict) and "epsilon" in g for g in guarantee.values()):
        out["epsilon_per_record"] = sum(g["epsilon"] for g in guarantee.values())
    return out


def _quality(ds: Dataset, opts: NoiseOptions, draw: Draw, released: str, n: int) -> dict[str, Any]:
    """The figures from the source and the table written, side by side (by position or row key)."""
    schema = schema_name(ds.relation)
    original = as_expression(exp.alias_(table(ds.name, schema), ORIGINAL, table=True, quoted=True))
    result = as_expression(exp.alias_(table(released, schema), RELEASED, table=True, quoted=True))
    if ds.engine.positional_rows():
        both = exp.select().from_(original).join(exp.Join(this=result, method="POSITIONAL"))
    else:
        both = exp.select().from_(original).join(result, on=exp.EQ(
            this=ds.engine.row_key(ORIGINAL), expression=col(ROW_KEY, RELEASED)))
    return _figures(ds, opts, draw, n, both, lambda a: col(a, ORIGINAL), lambda a: col(a, RELEASED))


def _figures(ds: Dataset, opts: NoiseOptions, draw: Draw, n: int, rows: exp.Select,
             original: Callable[[str], exp.Expression], released: Callable[[str], exp.Expression]
             ) -> dict[str, Any]:
    """Utility and risk from ``rows``, where ``original`` and ``released`` give each attribute's
    value before and after."""
    if opts.mechanism == "sampling" or n == 0:
        return {}
    attrs = opts.attributes
    if draw.categorical:
        pairs = rows.select(*[x for i, a in enumerate(attrs) for x in (
            alias(original(a), original_name(i)), alias(released(a), released_name(i)))], append=False)
        return categorical_quality(ds.engine, pairs, draw, opts.mechanism)
    pairs = rows.select(*[alias(as_double(original(a)), original_column(i)) for i, a in enumerate(attrs)],
                        *[alias(as_double(released(a)), released_column(i)) for i, a in enumerate(attrs)],
                        alias(lit(1), W), append=False)
    return numeric_quality(ds.engine, pairs, attrs, n, linkage=opts.linkage)
