"""Differentially private aggregates: the exact value in SQL, the noise in Python.

Each aggregate builds one sqlglot query for its exact value (identifiers quoted by sqlglot, values
as literals) and turns that value into a noisy release with a mechanism of
:mod:`sqlanon.methods.dp.mechanisms`. Neighbouring tables differ by **adding or removing one row**
(unbounded DP); the row count is therefore private too. At a privacy unit they differ by one
person's rows, bounded first (:mod:`sqlanon.methods.dp.contribution`), and the sensitivities below
are multiplied by the bounds (:attr:`~sqlanon.methods.dp.aggregate_noise.Noise.factors`).

============  ============================================  ==========================================
aggregate     exact SQL                                     release (sensitivity Δ)
============  ============================================  ==========================================
count         ``COUNT(*)``                                  discrete Laplace, Δ = 1
sum           ``SUM(LEAST(GREATEST(x, lo), hi))``           snapped Laplace, Δ = max(|lo|, |hi|)
mean          ``SUM(clamped x - mid)``, ``COUNT(x)``        ε/2 each: sum Δ = (hi - lo)/2, count Δ = 1
histogram     ``COUNT(*)`` joined to the public keys         discrete Laplace per key, Δ = 1 (parallel)
grouped       a sum's or mean's SQL per public key           as the sum or mean, per key (parallel)
============  ============================================  ==========================================

With ``mechanism="gaussian"`` (δ > 0) the same sensitivities are used as l2 sensitivities (for a
histogram one row changes one count by 1, so l1 = l2 = 1) and the analytic Gaussian mechanism adds
the noise on a grid (:func:`~sqlanon.methods.dp.mechanisms.gaussian`): counts get integer noise, sums
are released on a power-of-two grid about Δ/1024 fine.

NULLs: a sum ignores NULL values (they add 0), a mean averages the non-NULL values (its count is
``COUNT(x)``), a histogram does not count rows whose key columns are NULL or outside the keys.

The mean is the noisy centred sum over the noisy count plus the interval's midpoint, clamped to the
bounds; a noisy count below 1 is taken as 1. Centring halves the sum's sensitivity. (Seed 000 does
not treat means of a query interface; this is the standard split by sequential composition.)

Group keys must be public. A ``GROUP BY`` over keys read from the data would publish which keys
exist, something no noise on the counts hides. :class:`Histogram` therefore takes the full list of
keys from the caller (a declared domain), counts only those, and releases a noisy count for every
one of them, zeros included.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
from sqlglot import exp

from sqlanon.errors import SpecError
from sqlanon.methods.dp.aggregate_noise import Noise
from sqlanon.methods.dp.bounds import Bounds, parse_bounds
from sqlanon.sql.nodes import alias, as_double, as_text, col, count_star, internal, lit, table


class Aggregate:
    """One DP aggregate: the exact query and how its value is released."""

    kind: ClassVar[str]

    def columns(self) -> tuple[str, ...]:
        """The source columns it reads."""
        return ()

    def bounds(self) -> dict[str, Bounds]:
        """The public bounds it clamps to, by column."""
        return {}

    def query(self, relation: str) -> exp.Select:
        raise NotImplementedError

    def release(self, row: list[tuple[Any, ...]], noise: Noise) -> Any:
        raise NotImplementedError

    def noise_parameters(self, noise: Noise) -> list[dict[str, Any]]:
        """The mechanism, sensitivity and scale of each noisy part of the answer."""
        raise NotImplementedError

    def describe(self) -> str:
        raise NotImplementedError


@dataclass(frozen=True)
class Count(Aggregate):
    """The number of rows (Δ = 1)."""

    kind: ClassVar[str] = "count"

    def query(self, relation: str) -> exp.Select:
        return exp.select(alias(count_star(), internal("n"))).from_(table(relation))

    def release(self, rows: list[tuple[Any, ...]], noise: Noise) -> int:
        return int(noise.integer(np.array([int(rows[0][0])]), 1)[0])

    def noise_parameters(self, noise: Noise) -> list[dict[str, Any]]:
        return [noise.describe("count", 1, integer=True)]

    def describe(self) -> str:
        return "count(*)"


@dataclass(frozen=True)
class _Clamped(Aggregate):
    """An aggregate of one numeric column clamped to public bounds (checked when built)."""

    column: str
    lower: float
    upper: float

    def __post_init__(self) -> None:
        parse_bounds((self.lower, self.upper), self.column)

    def columns(self) -> tuple[str, ...]:
        return (self.column,)

    def bounds(self) -> dict[str, Bounds]:
        return {self.column: Bounds(float(self.lower), float(self.upper))}

    def exact(self) -> list[exp.Expression]:
        """The aliased aggregate expressions of the exact value (one row per table or group)."""
        raise NotImplementedError

    def empty(self) -> tuple[float, ...]:
        """The exact values of a group without rows."""
        return (0.0,) * len(self.exact())

    def release_vector(self, exact: np.ndarray, noise: Noise) -> np.ndarray:
        """Noisy values for the rows of ``exact`` (one per group, one column per expression)."""
        raise NotImplementedError

    def query(self, relation: str) -> exp.Select:
        return exp.select(*self.exact()).from_(table(relation))

    def release(self, rows: list[tuple[Any, ...]], noise: Noise) -> float:
        return float(self.release_vector(np.array(rows, dtype=float), noise)[0])


@dataclass(frozen=True)
class Sum(_Clamped):
    """The sum of a numeric column clamped to public bounds (Δ = max(|lower|, |upper|)).

    >>> from sqlanon.sql.render import render
    >>> print(render(Sum("x", -1, 5).query("t"), "postgres"))  # doctest: +NORMALIZE_WHITESPACE
    SELECT CAST(COALESCE(SUM(CASE WHEN NOT "x" IS NULL THEN LEAST(GREATEST(CAST("x" AS
    DOUBLE PRECISION), -1.0), 5.0) END), 0.0) AS DOUBLE PRECISION) AS "__sa_s" FROM "t"
    """

    kind: ClassVar[str] = "sum"

    @property
    def sensitivity(self) -> float:
        return max(abs(float(self.lower)), abs(float(self.upper)))

    def exact(self) -> list[exp.Expression]:
        clamped = self.bounds()[self.column].clamp(col(self.column))
        total = exp.Coalesce(this=exp.Sum(this=clamped), expressions=[lit(0.0)])
        return [alias(as_double(total), internal("s"))]

    def release_vector(self, exact: np.ndarray, noise: Noise) -> np.ndarray:
        return noise.real(exact[:, 0], self.sensitivity)

    def noise_parameters(self, noise: Noise, coordinates: int = 1) -> list[dict[str, Any]]:
        return [noise.describe("sum", self.sensitivity, integer=False, coordinates=coordinates)]

    def describe(self) -> str:
        return f"sum({self.column!r} clamped to [{self.lower:g}, {self.upper:g}])"


@dataclass(frozen=True)
class Mean(_Clamped):
    """The mean of a numeric column clamped to public bounds: noisy centred sum / noisy count."""

    kind: ClassVar[str] = "mean"

    @property
    def midpoint(self) -> float:
        return (float(self.lower) + float(self.upper)) / 2.0

    def exact(self) -> list[exp.Expression]:
        clamped = self.bounds()[self.column].clamp(col(self.column))
        centred = exp.Sub(this=clamped, expression=lit(self.midpoint))
        total = exp.Coalesce(this=exp.Sum(this=centred), expressions=[lit(0.0)])
        return [alias(as_double(total), internal("s")),
                alias(exp.Count(this=col(self.column)), internal("n"))]

    def release_vector(self, exact: np.ndarray, noise: Noise) -> np.ndarray:
        half = noise.split(2)
        noisy_sum = half.real(exact[:, 0], (float(self.upper) - float(self.lower)) / 2.0)
        noisy_n = np.maximum(half.integer(exact[:, 1].astype(np.int64), 1), 1)
        return np.clip(self.midpoint + noisy_sum / noisy_n, float(self.lower), float(self.upper))

    def noise_parameters(self, noise: Noise, coordinates: int = 1) -> list[dict[str, Any]]:
        half = noise.split(2)
        width = (float(self.upper) - float(self.lower)) / 2.0
        return [half.describe("centred sum", width, integer=False, coordinates=coordinates),
                half.describe("count", 1, integer=True)]

    def describe(self) -> str:
        return f"mean({self.column!r} clamped to [{self.lower:g}, {self.upper:g}])"


@dataclass(frozen=True, init=False)
class Histogram(Aggregate):
    """Counts of rows per key of one or more columns, for a public list of keys.

    ``keys`` lists every key to release, each a value (one column) or a tuple of values (several);
    they are compared with the columns' values as text (``CAST(column AS VARCHAR)``). Keys are
    public: they must come from a declared domain, never from the data.
    """

    group_by: tuple[str, ...]
    keys: tuple[tuple[str, ...], ...] = field(default=())
    kind: ClassVar[str] = "histogram"

    def __init__(self, group_by: str | Sequence[str], keys: Sequence[Any]) -> None:
        cols, parsed = _public_keys(group_by, keys, "histogram", "count")
        object.__setattr__(self, "group_by", cols)
        object.__setattr__(self, "keys", parsed)

    def columns(self) -> tuple[str, ...]:
        return self.group_by

    def query(self, relation: str) -> exp.Select:
        return _per_key(relation, self.group_by, self.keys, [alias(count_star(), internal("n"))])

    def release(self, rows: list[tuple[Any, ...]], noise: Noise) -> list[dict[str, Any]]:
        exact = {tuple(r[:-1]): int(r[-1]) for r in rows}
        counts = np.array([exact.get(k, 0) for k in self.keys], dtype=np.int64)
        noisy = noise.integer(counts, 1)
        return [{"key": _key(self.group_by, k), "count": int(c)} for k, c in zip(self.keys, noisy)]

    def noise_parameters(self, noise: Noise) -> list[dict[str, Any]]:
        return [noise.describe("count per key", 1, integer=True)]

    def describe(self) -> str:
        return f"histogram over {', '.join(self.group_by)} of {len(self.keys)} public keys"


@dataclass(frozen=True, init=False)
class Grouped(Aggregate):
    """A sum or mean per key of one or more columns, for a public list of keys.

    Every row lies in one group at most, so the groups' values are released together at the whole
    ε (parallel composition, seed 000 Thm 8.3): adding or removing a row moves one group's sum by
    at most Δ, so the vector of sums has l1 (and l2) sensitivity Δ, and each gets the noise of a
    single sum; a mean's centred sum and count take ε/2 each, per group. Keys with no rows are
    released too (sum 0, count 0, plus noise), since which keys occur is private; rows whose key
    columns are NULL or outside the keys count nowhere.
    """

    inner: Sum | Mean
    group_by: tuple[str, ...]
    keys: tuple[tuple[str, ...], ...]

    def __init__(self, inner: Sum | Mean, group_by: str | Sequence[str], keys: Sequence[Any]) -> None:
        if not isinstance(inner, (Sum, Mean)):
            raise SpecError(f"a grouped aggregate is a Sum or a Mean, got {inner!r} (counts per "
                            "key are a Histogram)", path="aggregate")
        cols, parsed = _public_keys(group_by, keys, "group_by", inner.kind)
        object.__setattr__(self, "inner", inner)
        object.__setattr__(self, "group_by", cols)
        object.__setattr__(self, "keys", parsed)

    @property
    def kind(self) -> str:  # type: ignore[override]
        return f"{self.inner.kind} per key"

    def columns(self) -> tuple[str, ...]:
        return self.inner.columns() + tuple(c for c in self.group_by if c not in self.inner.columns())

    def bounds(self) -> dict[str, Bounds]:
        return self.inner.bounds()

    def query(self, relation: str) -> exp.Select:
        return _per_key(relation, self.group_by, self.keys, self.inner.exact())

    def release(self, rows: list[tuple[Any, ...]], noise: Noise) -> list[dict[str, Any]]:
        width = len(self.group_by)
        exact = {tuple(r[:width]): tuple(float(v) for v in r[width:]) for r in rows}
        matrix = np.array([exact.get(k, self.inner.empty()) for k in self.keys], dtype=float)
        noisy = self.inner.release_vector(matrix, noise)
        return [{"key": _key(self.group_by, k), self.inner.kind: float(v)}
                for k, v in zip(self.keys, noisy)]

    def noise_parameters(self, noise: Noise) -> list[dict[str, Any]]:
        # the keys' values are one vector: a Gaussian release rounds it to a grid finer by √keys
        return [dict(p, part=f"{p['part']} per key")
                for p in self.inner.noise_parameters(noise, coordinates=len(self.keys))]

    def describe(self) -> str:
        return (f"{self.inner.describe()} per key of {', '.join(self.group_by)} "
                f"({len(self.keys)} public keys)")


def _public_keys(group_by: str | Sequence[str], keys: Sequence[Any], what: str, released: str
                 ) -> tuple[tuple[str, ...], tuple[tuple[str, ...], ...]]:
    """The key columns and the keys as tuples of text, checked: one value per column, no NULL,
    no repeats, at least one key."""
    cols = (group_by,) if isinstance(group_by, str) else tuple(group_by)
    if not cols:
        raise SpecError(f"a {what} needs at least one column", path=what)
    if keys is None or isinstance(keys, str) or len(keys) == 0:
        raise SpecError(
            f"a {what} needs the public list of keys to release a {released} for (keys=[...], "
            "CLI: --keys); sqlanon does not read the keys from the data, since which keys occur "
            "is itself private", path=f"{what}.keys")
    parsed = []
    for i, k in enumerate(keys):
        values = (k,) if len(cols) == 1 and not isinstance(k, (tuple, list)) else tuple(k)
        if len(values) != len(cols):
            raise SpecError(f"key {i} has {len(values)} value(s) for {len(cols)} column(s)",
                            path=f"{what}.keys[{i}]")
        if any(v is None for v in values):
            raise SpecError("keys cannot be NULL", path=f"{what}.keys[{i}]")
        parsed.append(tuple(str(v) for v in values))
    if len(set(parsed)) != len(parsed):
        raise SpecError("keys must be distinct", path=f"{what}.keys")
    return cols, tuple(parsed)


def _per_key(relation: str, group_by: tuple[str, ...], keys: tuple[tuple[str, ...], ...],
             values: list[exp.Expression]) -> exp.Select:
    """``SELECT key, values FROM relation JOIN (VALUES keys) ON columns as text = key GROUP BY key``."""
    names = [internal(f"k{i}") for i in range(len(group_by))]
    listed = exp.values([tuple(lit(v) for v in k) for k in keys], alias=internal("keys"),
                        columns=names)
    on = exp.and_(*[exp.EQ(this=as_text(col(c, internal("t"))), expression=col(n, internal("keys")))
                    for c, n in zip(group_by, names)])
    source = exp.alias_(table(relation), internal("t"), table=True, quoted=True)
    key_cols = [col(n, internal("keys")) for n in names]
    return (exp.select(*[alias(c, n) for c, n in zip(key_cols, names)], *values)
            .from_(source).join(listed, on=on).group_by(*[c.copy() for c in key_cols]))


def _key(group_by: tuple[str, ...], key: tuple[str, ...]) -> Any:
    return dict(zip(group_by, key)) if len(group_by) > 1 else key[0]
