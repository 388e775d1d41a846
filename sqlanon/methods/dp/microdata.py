"""Differentially private microdata through microaggregation, computed in the database.

Domingo-Ferrer, Sánchez, Soria-Comas, *Database Anonymization*, 2016, chapters 9 and 10. Two
methods, both ε-DP for neighbouring tables that differ by the **substitution** of one record (the
book's relation; the row count n is public and is released anyway, since the output has n rows):

``insensitive`` (§9.2, Algorithm 8 with insensitive MDAV, Prop. 9.3)
    Records are grouped k at a time along a data-independent total order (:mod:`dp_order`), each
    numeric attribute of a group is replaced by the group mean, and Laplace noise is added to the
    means. Sensitivity: the conservative §10.1 figure of erratum E11. Replacing one record changes
    each of the G = ⌊n/k⌋ groups by at most one record, so each group mean of attribute i moves by
    at most Δ_i/k (Δ_i = the public width) and the list of G means by at most G·Δ_i/k in l1. The
    book's §9.2 per-record figure Δ_i/k is not used: §10.1 shows it is not proven for multivariate
    orders. Nominal attributes: one centroid per group by the exponential mechanism (Algorithm 9),
    the attribute's ε divided over the G groups (each may change by one record).

``individual_ranking`` (§10.2, Algorithm 10, Lemmas 10.1-10.2)
    Every attribute is grouped on its own order; **one** Laplace draw per group is shared by all
    its records, at sensitivity Δ_i/k for the whole list of group means (Lemma 10.1). Nominal
    attributes: one exponential-mechanism draw per group (Algorithm 9) with the attribute's ε
    divided by min(G, |Dom| − 1): changing one value shifts a chain of groups, each losing its
    first value to the previous one; the groups' quality changes sum to at most the sum of δ
    between consecutive values of that (ordered) chain, and the chain can change value at most
    |Dom| − 1 times, each change costing at most the diameter (the sensitivity used). This bound is
    sqlanon's, not the book's, which gives no budget for categorical individual ranking.

The budget ε is split equally over the m released attributes (sequential composition, §10.3):
ε/m each. Values are clamped to the public bounds, which are required (:mod:`dp_bounds`); the
snapped Laplace mechanism clamps its output to them too.

Only the released attributes are written to the output table: any other column would be released
without protection. Caveat for ``individual_ranking``: the output keeps each record's attributes
together, as Algorithm 10 does; Lemma 10.2 treats the attributes as separate queries and does not
account for which group of one attribute meets which group of another within a record.

Given a ledger ``dataset``, the release is charged ε under substitution to that dataset's budget
(:class:`~sqlanon.methods.dp.release_budget.ReleaseBudget`), in the transaction that writes the output: the
output appears if and only if the budget is charged. A budget kept under add/remove neighbours (DP
queries) refuses it, since the release reveals the row count.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
from sqlglot import exp

from sqlanon.domain.metrics.numeric import W, original_column, released_column
from sqlanon.engines.staging import new_token, staging_name
from sqlanon.errors import SpecError, did_you_mean
from sqlanon.methods.dp import mechanisms
from sqlanon.methods.dp.amounts import ROW
from sqlanon.methods.dp.bounds import check_not_data_range, parse_all_bounds, require_columns
from sqlanon.methods.dp.order import METHODS, group_column, grouped_rows, label_column, value_column
from sqlanon.methods.dp.release_budget import ReleaseBudget
from sqlanon.methods.dp.taxonomy import NominalDomain
from sqlanon.methods.microaggregation.quality import numeric_quality
from sqlanon.methods.notebook import NotebookReport
from sqlanon.methods.rng import make_rng
from sqlanon.sql.nodes import (
    INTERNAL_PREFIX,
    alias,
    as_double,
    as_text,
    col,
    count_star,
    ident,
    internal,
    lit,
    table,
)

if TYPE_CHECKING:
    from sqlanon.engines.base import Engine
    from sqlanon.methods.base import TableWriter


@dataclass(frozen=True)
class AttributeRelease:
    """How one attribute was released."""

    attribute: str
    kind: str
    """``numeric`` or ``nominal``."""
    epsilon: float
    """The ε of this attribute (ε/m)."""
    sensitivity: float
    """l1 sensitivity of the list of group means (numeric) or of one group's quality (nominal)."""
    draw_epsilon: float
    """The ε of each draw: the attribute's ε for Laplace (one vector), ε/G or ε/min(G, |Dom|-1)
    per exponential-mechanism draw."""

    def as_dict(self) -> dict[str, Any]:
        return {"attribute": self.attribute, "kind": self.kind, "epsilon": self.epsilon,
                "sensitivity": self.sensitivity, "draw_epsilon": self.draw_epsilon}


@dataclass(frozen=True)
class MicrodataReport(NotebookReport):
    method: str
    k: int
    rows: int
    groups: int
    epsilon: float
    output: str
    attributes: list[AttributeRelease] = field(default_factory=list)
    metrics: dict[str, Any] = field(default_factory=dict)
    """Utility and risk of the numeric attributes
    (:func:`sqlanon.methods.microaggregation.quality.numeric_quality`): released against original values,
    record by record. Computed from the data, so not private."""
    ledger: dict[str, Any] = field(default_factory=dict)
    """The ledger dataset's state after the release was charged, or that it was not charged."""

    def as_dict(self) -> dict[str, Any]:
        return {"method": self.method, "k": self.k, "rows": self.rows, "groups": self.groups,
                "epsilon": self.epsilon, "output": self.output,
                "attributes": [a.as_dict() for a in self.attributes], "ledger": self.ledger,
                "metrics": self.metrics}


def dp_microaggregate(engine: Engine, source: str, output: str, *, k: int, epsilon: float,
                      bounds: Mapping[str, Any] | None = None,
                      categorical: Mapping[str, Any] | None = None,
                      method: str = "individual_ranking", seed: int | None = None,
                      trust_bounds: bool = False, replace: bool = False, quality: bool = True,
                      linkage: bool = True, dataset: str | None = None,
                      budget_epsilon: float | None = None, budget_delta: float = 0.0,
                      schema: str | None = None, tables: TableWriter | None = None,
                      ledger: Engine | None = None, release_key: str | None = None,
                      privacy_unit: str = ROW) -> MicrodataReport:
    """Write an ε-DP version of ``source``'s attributes to the table ``output``.

    Args:
        engine: an open engine.
        source: the table to read.
        output: the table to create with one column per released attribute.
        k: the group size (>= 2); groups hold k..2k-1 records.
        epsilon: the total ε of the release (split equally over the attributes).
        bounds: ``{numeric attribute: (lower, upper)}``, the public domain of each; required for
            every numeric attribute, never computed from the data.
        categorical: ``{nominal attribute: hierarchy}``, a taxonomy covering the whole domain.
        method: ``"individual_ranking"`` (Algorithm 10) or ``"insensitive"`` (Algorithm 8).
        seed: reproducible noise (warns); by default cryptographically seeded.
        trust_bounds: accept bounds equal to the data's exact minimum and maximum.
        replace: replace ``output`` if it exists.
        quality: compare the released numeric values with the original ones (SSE, IL1s, moment
            changes; ``linkage``: distance-based record linkage) in the report's ``metrics``.
        dataset: a privacy-budget ledger dataset (in ``engine``'s database) charged ε under
            substitution, atomically with the write of the output. None: not charged.
        budget_epsilon, budget_delta: the dataset's total budget, set once (under substitution)
            on first use.
        ledger, release_key: where the ledger lives when not in ``engine``'s database, and the key
            charging the release once (:class:`~sqlanon.methods.dp.release_budget.ReleaseBudget`).
        schema: the schema of ``source``, where ``output`` is written too (default: the
            connection's current one).
        privacy_unit: the unit the ledger records (a person column when ``source`` holds one
            record per person: :func:`~sqlanon.methods.dp.person_microdata.dp_microaggregate_persons`).
        tables: the output writer's table skeletons (``method: noise`` writes through them; the
            ``sqlanon dp`` command without, with ``CREATE OR REPLACE``).

    Raises:
        SpecError: missing or data-derived bounds, unknown columns, NULLs or values outside a
            taxonomy, fewer than k rows, bad k, ε or method. Nothing is written then.
        PrivacyBudgetError: no budget for ``dataset``, a budget kept under add/remove neighbours,
            or not enough of it left. Nothing is written or spent then.
    """
    numeric_names = list(bounds or {})
    nominal_names = list(categorical or {})
    _check_arguments(k, epsilon, method, numeric_names, nominal_names, output)
    public = parse_all_bounds(bounds if bounds is not None else {}, numeric_names) if numeric_names \
        else {}
    domains = {c: NominalDomain.from_hierarchy(c, h) for c, h in (categorical or {}).items()}
    require_columns(engine, source, numeric_names + nominal_names, relation_path="source",
                    column_path="attributes", schema=schema)
    if engine.relation_exists(output, schema) and not replace:
        raise SpecError(f"the output table {output!r} exists; pass replace=True to overwrite it",
                        path="output")
    n = _check_values(engine, source, numeric_names, domains, schema)
    if n < k:
        raise SpecError(f"the table has {n} rows, fewer than k = {k}", path="k")
    check_not_data_range(engine, source, public, trust_bounds=trust_bounds, schema=schema)
    budget = ReleaseBudget(engine, dataset, epsilon, budget_epsilon=budget_epsilon,
                           budget_delta=budget_delta, ledger=ledger, release_key=release_key,
                           description=f"dp_microaggregation ({method}, k={k}) of table {source!r} "
                                       f"into {output!r}", privacy_unit=privacy_unit)
    budget.check()
    rng = make_rng(seed)

    groups_total = n // k
    eps_attr = float(epsilon) / (len(numeric_names) + len(nominal_names))
    work = staging_name(new_token(), "dp")
    releases: list[AttributeRelease] = []
    released: list[tuple[str, str, list[Any]]] = []   # (group column, SQL type, value per group)
    engine.create_table_as(work, grouped_rows(source, public, domains, k, method=method,
                                              keep=numeric_names if quality else (), schema=schema),
                           temporary=True)
    noise_table = staging_name(new_token(), "dpn")
    expected_starts = [g * k for g in range(groups_total)]
    try:
        numeric_groups = [group_column() if method == "insensitive" else group_column(value_column(i))
                          for i in range(len(public))]
        all_means = _group_means(engine, work, numeric_groups,
                                 [value_column(i) for i in range(len(public))])
        for i, (a, b) in enumerate(public.items()):
            g = numeric_groups[i]
            starts, means = all_means[i]
            _check_starts(starts, expected_starts)
            sensitivity = b.width / k * (len(starts) if method == "insensitive" else 1)
            eps_draw = vector_epsilon(eps_attr, len(starts), b.width / 2 / sensitivity)
            noisy = mechanisms.laplace(means, sensitivity, eps_draw, rng, bound=(b.lower, b.upper))
            released.append((g, "double", noisy.tolist()))
            releases.append(AttributeRelease(a, "numeric", eps_attr, sensitivity, eps_draw))
        for j, (c, d) in enumerate(domains.items()):
            g = group_column() if method == "insensitive" else group_column(label_column(j))
            starts, counts = _group_counts(engine, work, g, label_column(j), d)
            _check_starts(starts, expected_starts)
            draws = len(starts) if method == "insensitive" else min(len(starts), len(d.leaves) - 1)
            labels = d.dp_centroids(counts, eps_attr / draws, rng)
            released.append((g, "varchar", labels))
            releases.append(AttributeRelease(c, "nominal", eps_attr, d.diameter, eps_attr / draws))
        _upload(engine, noise_table, expected_starts, released)
        groups = [g for g, _, _ in released]
        rows = _released(work, noise_table, numeric_names + nominal_names, groups)
        budget.write(lambda: _write(engine, tables, output, rows, replace=replace, schema=schema))
        metrics = {}
        if quality and numeric_names:
            pairs = _released(work, noise_table, numeric_names, groups[:len(numeric_names)],
                              originals=True)
            metrics = numeric_quality(engine, pairs, numeric_names, n, linkage=linkage)
    finally:
        engine.drop(work)
        engine.drop(noise_table)
    return MicrodataReport(method, k, n, groups_total, float(epsilon), output, releases, metrics,
                           budget.as_dict())


def _write(engine: Engine, tables: TableWriter | None, output: str, rows: exp.Select, *,
           replace: bool, schema: str | None) -> None:
    """The released rows as table ``output``, replacing it if it exists (and ``replace``)."""
    if tables is None:
        engine.create_table_as(output, rows, replace=replace, schema=schema)
    elif replace and engine.relation_exists(output, schema):
        staging = staging_name(new_token(), "out")
        tables.create(staging, rows)
        tables.move_into_place(staging, output, replace=True)
    else:
        tables.create(output, rows)


def vector_epsilon(epsilon: float, coordinates: int, half_width: float) -> float:
    """The ε to give :func:`mechanisms.laplace` so that a vector of ``coordinates`` is ``epsilon``-DP.

    The snapping mechanism's guarantee (Mironov 2012, Thm 1) is for one value: shifting it by the
    sensitivity costs 1/λ plus a floating-point slack of 2^-49·B/λ (B the clamping bound in units of
    the sensitivity). For a vector whose l1 shift is at most the sensitivity, the shifts' parts
    still sum to 1/λ, but each coordinate adds its slack: (1 + G·2^-49·B)/λ in all.
    :func:`mechanisms.laplace` sets λ for one slack, so ε is reduced by the factor 1 + G·2^-49·B
    (B taken at ε/2, which the reduction never reaches).
    """
    bound = max(half_width, 8.0 / epsilon)
    return epsilon / (1.0 + coordinates * 2.0 ** -49 * bound)


def _check_arguments(k: object, epsilon: object, method: str, numeric: list[str],
                     nominal: list[str], output: str) -> None:
    if isinstance(k, bool) or not isinstance(k, int) or k < 2:
        raise SpecError(f"k must be an integer >= 2, got {k!r}", path="k")
    if isinstance(epsilon, bool) or not isinstance(epsilon, (int, float)) \
            or not math.isfinite(epsilon) or epsilon <= 0:
        raise SpecError(f"epsilon must be a positive finite number, got {epsilon!r}", path="epsilon")
    if method not in METHODS:
        raise SpecError(f"unknown method {method!r}; use one of {', '.join(METHODS)}"
                        + did_you_mean(method, METHODS), path="method")
    if not numeric and not nominal:
        raise SpecError("nothing to release: give bounds for numeric attributes and/or "
                        "hierarchies for categorical ones", path="bounds")
    both = sorted(set(numeric) & set(nominal))
    if both:
        raise SpecError(f"{both} are given both bounds and a hierarchy", path="categorical")
    for name in [*numeric, *nominal, output]:
        if not isinstance(name, str) or not name or name.startswith(INTERNAL_PREFIX):
            raise SpecError(f"{name!r} is not a valid name (names starting with {INTERNAL_PREFIX!r} "
                            "are reserved)", path="attributes")


def _check_values(engine: Engine, source: str, numeric: list[str],
                  domains: Mapping[str, NominalDomain], schema: str | None = None) -> int:
    """The row count, after refusing NULLs and values outside a taxonomy (counts only in messages)."""
    selects: list[exp.Expression] = [alias(count_star(), "n")]
    names = [*numeric, *domains]
    for i, a in enumerate(names):
        selects.append(alias(exp.Count(this=col(a)), f"present{i}"))
    for j, (c, d) in enumerate(domains.items()):
        inside = exp.In(this=as_text(col(c)), expressions=[lit(v) for v in d.leaves])
        outside = exp.Case(ifs=[exp.If(this=exp.Not(this=inside), true=lit(1))], default=lit(0))
        selects.append(alias(exp.Sum(this=outside), f"outside{j}"))
    row = engine.fetch_one(exp.select(*selects).from_(table(source, schema)))
    n = int(row["n"])
    for i, a in enumerate(names):
        missing = n - int(row[f"present{i}"])
        if missing:
            raise SpecError(f"{missing} row(s) have NULL in {a!r}; DP microaggregation needs a value "
                            "in every row (filter or impute them first)", path=f"attributes.{a}")
    for j, c in enumerate(domains):
        outside_rows = int(row[f"outside{j}"] or 0)
        if outside_rows:
            raise SpecError(f"{outside_rows} row(s) of {c!r} hold values that are not leaves of its "
                            "taxonomy; the taxonomy must cover the whole public domain",
                            path=f"categorical.{c}")
    return n


def _group_means(engine: Engine, work: str, groups: list[str], values: list[str]
                 ) -> list[tuple[list[int], np.ndarray]]:
    """Per value column, its groups' starts and means, all from one scan of ``work``.

    Each value column has its group column (shared by all under ``insensitive``); one GROUPING SETS
    query groups by each distinct group column, and a row belongs to the set whose column is set
    (group starts are never NULL).
    """
    if not groups:
        return []
    distinct = list(dict.fromkeys(groups))
    means = [alias(exp.Avg(this=col(v)), f"m{i}") for i, v in enumerate(values)]
    q = exp.select(*[col(g) for g in distinct], *means).from_(table(work)).group_by(
        exp.GroupingSets(expressions=[exp.Paren(this=col(g)) for g in distinct]))
    data = engine.fetch_numpy(q)
    out = []
    for i, g in enumerate(groups):
        starts = np.ma.getdata(data[g])
        mine = ~np.ma.getmaskarray(data[g]) if np.ma.isMaskedArray(data[g]) else \
            np.array([v is not None for v in starts])
        order = np.argsort(starts[mine].astype(np.int64), kind="stable")
        out.append(([int(v) for v in starts[mine][order]],
                    np.asarray(np.ma.getdata(data[f"m{i}"])[mine][order], dtype=np.float64)))
    return out


def _group_counts(engine: Engine, work: str, group: str, label: str, domain: NominalDomain
                  ) -> tuple[list[int], np.ndarray]:
    q = (exp.select(col(group), col(label), alias(count_star(), "n")).from_(table(work))
         .group_by(col(group), col(label)))
    _, rows = engine.fetch(q)
    starts = sorted({int(r[0]) for r in rows})
    position = {s: i for i, s in enumerate(starts)}
    leaf = {v: i for i, v in enumerate(domain.leaves)}
    counts = np.zeros((len(starts), len(domain.leaves)))
    for g, v, c in rows:
        counts[position[int(g)], leaf[v]] += c
    return starts, counts


def _check_starts(starts: list[int], expected: list[int]) -> None:
    if starts != expected:
        from sqlanon.errors import InternalError

        raise InternalError(f"DP microaggregation formed {len(starts)} groups, expected "
                            f"{len(expected)} of the fixed sizes")


def _upload(engine: Engine, name: str, starts: list[int],
            released: list[tuple[str, str, list[Any]]]) -> None:
    """One temporary table: the group start ``g`` and the noisy value ``v<i>`` of each attribute."""
    engine.execute(exp.Create(this=exp.Schema(this=table(name), expressions=[
        exp.ColumnDef(this=ident("g"), kind=exp.DataType.build("bigint")),
        *[exp.ColumnDef(this=ident(f"v{i}"), kind=exp.DataType.build(kind))
          for i, (_, kind, _) in enumerate(released)]]), kind="TABLE",
        properties=exp.Properties(expressions=[exp.TemporaryProperty()])))
    engine.insert_rows(name, list(zip(starts, *[values for _, _, values in released])))


def _released(work: str, noise: str, names: list[str], groups: list[str], *,
              originals: bool = False) -> exp.Select:
    """Every row of ``work`` with its groups' noisy values, one join per group column.

    ``originals``: instead, the pairs :func:`sqlanon.methods.microaggregation.quality.numeric_quality`
    compares (the original numeric values were kept in ``work`` under their own names).
    """
    w = internal("w")
    aliases = {g: internal(f"n{i}") for i, g in enumerate(dict.fromkeys(groups))}
    noisy = [col(f"v{i}", aliases[g]) for i, g in enumerate(groups)]
    if originals:
        projection = [alias(as_double(col(a, w)), original_column(i)) for i, a in enumerate(names)]
        projection += [alias(v, released_column(i)) for i, v in enumerate(noisy)]
        projection.append(alias(lit(1), W))
    else:
        projection = [alias(v, name) for v, name in zip(noisy, names)]
    q = exp.select(*projection).from_(exp.alias_(table(work), w, table=True, quoted=True))
    for g, a in aliases.items():
        q = q.join(exp.alias_(table(noise), a, table=True, quoted=True),
                   on=exp.EQ(this=col(g, w), expression=col("g", a)))
    return q
