"""Information loss on numeric attributes: SSE, SST, IL1s and the change of moments.

The comparison runs over a *paired* relation: per record (or per group of equal records, with a
weight), the original value and the released one of every numeric column. :func:`compare_numeric`
builds it from an original and an anonymized relation joined on a row key (microaggregation, noise);
:func:`generalization_pairs` builds it from a checked node, where a generalized value is represented
by the mean of the original values of its equivalence class and the suppressed records, released as
one all-``*`` class, by their own mean.

Domingo-Ferrer & Mateo-Sanz, Practical data-oriented microaggregation for statistical disclosure
control, TKDE 14(1), 2002 (SSE, SST); Yancey, Winkler & Creecy, Disclosure risk assessment in
perturbative microdata protection, LNCS 2316, 2002 (IL1s); Domingo-Ferrer & Torra, A quantitative
comparison of disclosure control methods for microdata, 2001 (moment changes).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from sqlglot import exp

from sqlanon.domain.metrics.base import Metric, MetricContext, register
from sqlanon.domain.models.base import KEEP, N
from sqlanon.errors import SpecError
from sqlanon.sql.nodes import alias, as_double, as_expression, col, div, internal, lit, nullsafe_join, table

if TYPE_CHECKING:
    from sqlanon.engines.base import Engine

W = internal("w")
_NUMERIC_TYPES = frozenset({
    "TINYINT", "SMALLINT", "INTEGER", "INT", "INT2", "INT4", "INT8", "BIGINT", "HUGEINT", "UTINYINT",
    "USMALLINT", "UINTEGER", "UBIGINT", "UHUGEINT", "FLOAT", "FLOAT4", "FLOAT8", "REAL", "DOUBLE",
    "DOUBLE PRECISION", "DECIMAL", "NUMERIC",
})


def original_column(i: int) -> str:
    return internal(f"o{i}")


def released_column(i: int) -> str:
    return internal(f"a{i}")


@dataclass(frozen=True)
class NumericComparison:
    """Moments of the original and released numeric columns; every figure derives from these.

    Variances and covariances are sample moments (divided by n − 1). A correlation involving a
    constant column is 0. Relative changes are |new − old| / |old|, or |new − old| when old = 0 (for
    covariances: within 1e-12 of the columns' standard deviations' product).
    """

    columns: tuple[str, ...]
    n: float
    mean_original: tuple[float, ...]
    mean_released: tuple[float, ...]
    products_original: tuple[tuple[float, ...], ...]
    """Σ w·(x_i − x̄_i)·(x_j − x̄_j) over the original values."""
    products_released: tuple[tuple[float, ...], ...]
    sse_by_column: tuple[float, ...]
    abs_error_by_column: tuple[float, ...]

    def _cov(self, products: tuple[tuple[float, ...], ...], i: int, j: int) -> float:
        return products[i][j] / (self.n - 1) if self.n > 1 else 0.0

    def covariance(self, i: int, j: int, *, released: bool = False) -> float:
        """Sample covariance of columns i and j (a variance when i = j)."""
        return self._cov(self.products_released if released else self.products_original, i, j)

    def correlation(self, i: int, j: int, *, released: bool = False) -> float:
        d = self.covariance(i, i, released=released) * self.covariance(j, j, released=released)
        return self.covariance(i, j, released=released) / math.sqrt(d) if d > 0 else 0.0

    @property
    def sse(self) -> float:
        """Σ over records and columns of (x − x̂)²."""
        return math.fsum(self.sse_by_column)

    @property
    def sst(self) -> float:
        """Σ over records and columns of (x − x̄)², x̄ the column mean of the original data."""
        return math.fsum(self.products_original[i][i] for i in range(len(self.columns)))

    @property
    def il1s(self) -> float:
        """(1/(n·m)) Σ_j Σ_i |x_ij − x̂_ij| / (√2·S_j), S_j the original column's standard deviation.

        sdcMicro's ``dUtility(method = "IL1")`` multiplies by √2 instead of dividing (twice this value).
        """
        m = len(self.columns)
        terms = [e / (math.sqrt(2) * math.sqrt(self.covariance(j, j)))
                 for j, e in enumerate(self.abs_error_by_column) if self.covariance(j, j) > 0]
        return math.fsum(terms) / (self.n * m) if self.n and m else 0.0

    def per_attribute(self) -> dict[str, dict[str, float]]:
        """Each column's SSE and IL1s (its term of :attr:`il1s`, times m: the IL1s of that column alone)."""
        out = {}
        for j, c in enumerate(self.columns):
            sd = math.sqrt(self.covariance(j, j)) if self.covariance(j, j) > 0 else 0.0
            il1s = self.abs_error_by_column[j] / (math.sqrt(2) * sd) / self.n if sd and self.n else 0.0
            out[c] = {"sse": self.sse_by_column[j], "il1s": il1s}
        return out

    def _pairs(self) -> list[tuple[int, int]]:
        m = len(self.columns)
        return [(i, j) for i in range(m) for j in range(i + 1, m)]

    @property
    def mean_change(self) -> dict[str, float]:
        return {c: change(self.mean_original[i], self.mean_released[i]) for i, c in enumerate(self.columns)}

    @property
    def variance_change(self) -> dict[str, float]:
        return {c: change(self.covariance(i, i), self.covariance(i, i, released=True))
                for i, c in enumerate(self.columns)}

    @property
    def covariance_change(self) -> dict[tuple[str, str], float]:
        def scale(i: int, j: int) -> float:
            return math.sqrt(max(self.covariance(i, i), 0.0) * max(self.covariance(j, j), 0.0))

        return {(self.columns[i], self.columns[j]):
                change(self.covariance(i, j), self.covariance(i, j, released=True), scale(i, j))
                for i, j in self._pairs()}

    @property
    def correlation_change(self) -> dict[tuple[str, str], float]:
        return {(self.columns[i], self.columns[j]):
                abs(self.correlation(i, j, released=True) - self.correlation(i, j)) for i, j in self._pairs()}

    def as_dict(self) -> dict[str, Any]:
        """Every figure, per attribute and per pair of attributes (pairs as ``"a,b"``)."""
        def pairs(d: dict[tuple[str, str], float]) -> dict[str, float]:
            return {",".join(k): v for k, v in d.items()}

        return {
            "n": self.n, "sse": self.sse, "sst": self.sst, "il1s": self.il1s,
            "mean": {c: {"original": self.mean_original[i], "released": self.mean_released[i]}
                     for i, c in enumerate(self.columns)},
            "variance": {c: {"original": self.covariance(i, i),
                             "released": self.covariance(i, i, released=True)}
                         for i, c in enumerate(self.columns)},
            "mean_change": self.mean_change, "variance_change": self.variance_change,
            "covariance_change": pairs(self.covariance_change),
            "correlation_change": pairs(self.correlation_change),
        }


def change(old: float, new: float, scale: float = 0.0) -> float:
    """|new − old| / |old|, or |new − old| when old is 0 — or within rounding of 0 relative to ``scale``
    (a covariance of 1e-18 between columns of variance 1 is a zero that floating point did not reach)."""
    if abs(old) <= 1e-12 * scale or old == 0:
        return abs(new - old)
    return abs(new - old) / abs(old)


def _relation(rel: str | exp.Expression, name: str) -> exp.Expression:
    source = table(rel) if isinstance(rel, str) else rel.copy()
    if isinstance(source, (exp.Table, exp.Subquery)):  # an aliased subquery takes the new alias
        return as_expression(exp.alias_(source, name, table=True, quoted=True))
    return as_expression(exp.alias_(exp.Subquery(this=source), name, quoted=True))


def paired_query(original: str | exp.Expression, released: str | exp.Expression, columns: Sequence[str],
                 key: str | Sequence[str]) -> exp.Select:
    """Original and released values of ``columns`` side by side, joined on the row ``key`` (weight 1)."""
    keys = [key] if isinstance(key, str) else list(key)
    on = exp.and_(*[exp.EQ(this=col(k, "o"), expression=col(k, "r")) for k in keys])
    return exp.select(*[alias(as_double(col(c, "o")), original_column(i)) for i, c in enumerate(columns)],
                      *[alias(as_double(col(c, "r")), released_column(i)) for i, c in enumerate(columns)],
                      alias(lit(1), W)) \
        .from_(_relation(original, "o")).join(_relation(released, "r"), on=on)


class NoNumericRecords(SpecError):
    """No record has a value in every compared column: there are no moments to compare."""


def compare_pairs(engine: Engine, pairs: exp.Select, columns: Sequence[str]) -> NumericComparison:
    """Moments of a paired relation (columns ``__sa_o<i>``, ``__sa_a<i>``, weight ``__sa_w``), in SQL.

    Rows with a NULL in any numeric column are left out. Two passes: the means, then the central
    sums of squares and products around them.
    """
    m = len(columns)
    o = [col(original_column(i)) for i in range(m)]
    a = [col(released_column(i)) for i in range(m)]
    w = as_double(col(W))
    complete = exp.and_(*[exp.Not(this=exp.Is(this=x.copy(), expression=exp.Null())) for x in o + a])
    rel = exp.alias_(exp.Subquery(this=pairs.copy()), internal("pairs"))

    def total(x: exp.Expression) -> exp.Expression:
        return exp.Sum(this=exp.Mul(this=w.copy(), expression=x))

    first = engine.fetch(exp.select(exp.Sum(this=w.copy()), *[total(x.copy()) for x in o + a],
                                    *[exp.Min(this=x.copy()) for x in o + a],
                                    *[exp.Max(this=x.copy()) for x in o + a])
                         .from_(rel.copy()).where(complete.copy()))[1][0]
    n = float(first[0] or 0.0)
    if n == 0:
        raise NoNumericRecords("no records with numeric values to compare", path="metrics.options.numeric")
    # a constant column's mean is its value exactly, so that its deviations are exactly 0
    lows, highs = first[1 + 2 * m:1 + 4 * m], first[1 + 4 * m:]
    means = [float(lo) if lo == hi else float(s) / n for s, lo, hi in zip(first[1:1 + 2 * m], lows, highs)]
    do = [exp.Paren(this=exp.Sub(this=x.copy(), expression=lit(mu))) for x, mu in zip(o, means[:m])]
    da = [exp.Paren(this=exp.Sub(this=x.copy(), expression=lit(mu))) for x, mu in zip(a, means[m:])]
    upper = [(i, j) for i in range(m) for j in range(i, m)]
    err = [exp.Paren(this=exp.Sub(this=o[i].copy(), expression=a[i].copy())) for i in range(m)]
    proj = [total(exp.Mul(this=d[i].copy(), expression=d[j].copy())) for d in (do, da) for i, j in upper]
    proj += [total(exp.Mul(this=e.copy(), expression=e.copy())) for e in err]
    proj += [total(exp.Abs(this=e.copy())) for e in err]
    row = [float(x or 0.0) for x in engine.fetch(exp.select(*proj).from_(rel).where(complete))[1][0]]
    k = len(upper)

    def matrix(values: list[float]) -> tuple[tuple[float, ...], ...]:
        out = [[0.0] * m for _ in range(m)]
        for (i, j), v in zip(upper, values):
            out[i][j] = out[j][i] = v
        return tuple(tuple(r) for r in out)

    return NumericComparison(tuple(columns), n, tuple(means[:m]), tuple(means[m:]), matrix(row[:k]),
                             matrix(row[k:2 * k]), tuple(row[2 * k:2 * k + m]), tuple(row[2 * k + m:]))


def compare_numeric(engine: Engine, original: str | exp.Expression, released: str | exp.Expression,
                    columns: Sequence[str], key: str | Sequence[str]) -> NumericComparison:
    """Compare ``columns`` of an original relation with an anonymized one, rows matched on ``key``."""
    return compare_pairs(engine, paired_query(original, released, columns, key), columns)


def is_numeric_type(sql_type: str) -> bool:
    """True for integer, decimal and floating-point column types (``DECIMAL(9,2)`` included).

    >>> is_numeric_type("DECIMAL(9,2)"), is_numeric_type("double precision"), is_numeric_type("INTERVAL")
    (True, True, False)
    """
    return sql_type.split("(")[0].strip().upper() in _NUMERIC_TYPES


def numeric_columns(ctx: MetricContext) -> list[str]:
    """The ``numeric`` option, else the numeric QIs: declared integer/decimal, or of a numeric type."""
    p = ctx.evaluator.p
    chosen = ctx.options.get("numeric")
    if chosen is None:
        declared = p.attribute_types
        types = p.column_types
        found = [q for q in p.qis if (declared[q] in ("integer", "decimal") if declared.get(q)
                                      else is_numeric_type(str(types.get(q, ""))))]
        if not found:
            raise SpecError("numeric metrics need numeric quasi-identifiers; none of "
                            f"{', '.join(p.qis)} is declared integer or decimal or has a numeric column "
                            "type (set the metric option 'numeric')", path="metrics.options.numeric")
        return found
    if isinstance(chosen, str) or not isinstance(chosen, Sequence) or not chosen:
        raise SpecError(f"numeric must be a non-empty list of quasi-identifiers, got {chosen!r}",
                        path="metrics.options.numeric")
    declared = p.attribute_types
    types = p.column_types
    for i, c in enumerate(chosen):
        if c not in p.qis:
            raise SpecError(f"{c!r} is not a quasi-identifier; numeric metrics compare generalized "
                            f"quasi-identifiers ({', '.join(p.qis)})", path="metrics.options.numeric")
        sql_type = str(types.get(c, ""))
        text = sql_type.split("(")[0].strip().upper() in ("", "VARCHAR", "TEXT", "STRING", "CHAR",
                                                          "CHARACTER VARYING", "CHARACTER", "BPCHAR")
        if declared.get(c) not in ("integer", "decimal") and not is_numeric_type(sql_type) and not text:
            raise SpecError(f"{c!r} is not numeric (column type {sql_type}); numeric metrics compare "
                            "numbers", path=f"metrics.options.numeric[{i}]")
    return list(chosen)


def generalization_pairs(ctx: MetricContext, columns: Sequence[str]) -> exp.Select:
    """Per frequency-table row: original values, their class mean, and the row count as weight."""
    ev, qis = ctx.evaluator, ctx.qis
    rel = internal("src")
    gen = ev.generalizer.select(ev.freq, ctx.node.levels, keep=[N], relation=rel,
                                extra=[alias(as_double(col(c, rel)), original_column(i))
                                       for i, c in enumerate(columns)])
    joined = exp.select(*[col(q, "g") for q in qis], col(N, "g"),
                        *[col(original_column(i), "g") for i in range(len(columns))], col(KEEP, "v")) \
        .from_(exp.alias_(exp.Subquery(this=gen), "g", quoted=True)) \
        .join(exp.alias_(ctx.node.verdict.copy(), "v", table=True, quoted=True),
              on=nullsafe_join("g", "v", qis))
    kept = ctx.kept()
    part = [kept.copy(), *[exp.Case().when(kept.copy(), col(q)) for q in qis]]
    means = []
    for i in range(len(columns)):
        x = col(original_column(i))
        present = exp.Not(this=exp.Is(this=x.copy(), expression=exp.Null()))
        weighted = exp.Window(this=exp.Sum(this=exp.Mul(this=col(N), expression=x.copy())),
                              partition_by=[p.copy() for p in part])
        count = exp.Window(this=exp.Sum(this=exp.Case().when(present, col(N))),
                           partition_by=[p.copy() for p in part])
        means.append(alias(div(weighted, count), released_column(i)))
    return exp.select(*[col(original_column(i)) for i in range(len(columns))], *means, alias(col(N), W)) \
        .from_(exp.alias_(exp.Subquery(this=joined), internal("j")))


def node_comparison(ctx: MetricContext) -> NumericComparison:
    """The numeric comparison for the checked node (computed once per metric context)."""
    def compute() -> NumericComparison:
        columns = numeric_columns(ctx)
        return compare_pairs(ctx.engine, generalization_pairs(ctx, columns), columns)

    return ctx.memo("numeric", compute)


class NumericMetric(Metric):
    monotonic_with_generalization: ClassVar[bool] = False
    options: ClassVar[tuple[str, ...]] = ("numeric",)


@register
class SSE(NumericMetric):
    """Sum of squared errors Σ (x − x̂)² over records and numeric QIs (x̂: the class mean)."""

    name: ClassVar[str] = "sse"
    monotonic_with_generalization: ClassVar[bool] = True

    def compute(self, ctx: MetricContext) -> float:
        return node_comparison(ctx).sse


@register
class SST(NumericMetric):
    """Total sum of squares Σ (x − x̄)² over records and numeric QIs (independent of the node)."""

    name: ClassVar[str] = "sst"

    def compute(self, ctx: MetricContext) -> float:
        return node_comparison(ctx).sst


@register
class IL1s(NumericMetric):
    """IL1s: mean absolute error scaled by √2 times each column's standard deviation."""

    name: ClassVar[str] = "il1s"

    def compute(self, ctx: MetricContext) -> float:
        return node_comparison(ctx).il1s


def _max(values: dict[Any, float]) -> float:
    return max(values.values(), default=0.0)


@register
class MeanChangeMax(NumericMetric):
    """Largest relative change of a numeric QI's mean."""

    name: ClassVar[str] = "mean_change_max"

    def compute(self, ctx: MetricContext) -> float:
        return _max(node_comparison(ctx).mean_change)


@register
class VarianceChangeMax(NumericMetric):
    """Largest relative change of a numeric QI's variance."""

    name: ClassVar[str] = "variance_change_max"

    def compute(self, ctx: MetricContext) -> float:
        return _max(node_comparison(ctx).variance_change)


@register
class CovarianceChangeMax(NumericMetric):
    """Largest relative change of a covariance between two numeric QIs."""

    name: ClassVar[str] = "covariance_change_max"

    def compute(self, ctx: MetricContext) -> float:
        return _max(node_comparison(ctx).covariance_change)


@register
class CorrelationChangeMax(NumericMetric):
    """Largest absolute change of a correlation between two numeric QIs."""

    name: ClassVar[str] = "correlation_change_max"

    def compute(self, ctx: MetricContext) -> float:
        return _max(node_comparison(ctx).correlation_change)
