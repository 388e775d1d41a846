"""Differentially private aggregates: the exact value in SQL, the noise in Python.

Each aggregate builds one sqlglot query for its exact value (identifiers quoted by sqlglot, values
as literals) and turns that value into a noisy release with a mechanism of
:mod:`sqlanon.noise.mechanisms`. Neighbouring tables differ by **adding or removing one row**
(unbounded DP); the row count is therefore private too.

============  ============================================  ==========================================
aggregate     exact SQL                                     release (sensitivity Δ)
============  ============================================  ==========================================
count         ``COUNT(*)``                                  discrete Laplace, Δ = 1
sum           ``SUM(LEAST(GREATEST(x, lo), hi))``           snapped Laplace, Δ = max(|lo|, |hi|)
mean          ``SUM(clamped x - mid)``, ``COUNT(x)``        ε/2 each: sum Δ = (hi - lo)/2, count Δ = 1
histogram     ``COUNT(*)`` joined to the public keys         discrete Laplace per key, Δ = 1 (parallel)
============  ============================================  ==========================================

With ``mechanism="gaussian"`` (δ > 0) the same sensitivities are used as l2 sensitivities (for a
histogram one row changes one count by 1, so l1 = l2 = 1) and the analytic Gaussian mechanism adds
the noise on a grid (:func:`~sqlanon.noise.mechanisms.gaussian`): counts get integer noise, sums
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

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
from sqlglot import exp

from sqlanon.compile.sql import alias, as_double, as_text, col, count_star, internal, lit, table
from sqlanon.errors import SpecError
from sqlanon.noise import mechanisms
from sqlanon.noise.dp_bounds import Bounds, parse_bounds

MECHANISMS = ("laplace", "gaussian")
_SUM_BOUND_UNITS = 2.0 ** 40
"""The snapped Laplace clamps a noisy sum to ±2^40·Δ (a public bound the sum cannot reach in any
table of fewer than 2^40 rows); the guarantee of snapping needs such a bound."""


@dataclass(frozen=True)
class Noise:
    """How to noise one release: the mechanism, its share of the budget and the generator."""

    mechanism: str
    epsilon: float
    delta: float
    rng: np.random.Generator

    def split(self, parts: int) -> Noise:
        return Noise(self.mechanism, self.epsilon / parts, self.delta / parts, self.rng)

    def integer(self, values: np.ndarray, sensitivity: int) -> np.ndarray:
        if self.mechanism == "gaussian":
            noisy = mechanisms.gaussian(values, sensitivity, self.epsilon, self.delta, self.rng)
            return np.rint(noisy).astype(np.int64)
        return mechanisms.discrete_laplace(values, sensitivity, self.epsilon, self.rng)

    def describe(self, part: str, sensitivity: float, *, integer: bool) -> dict[str, Any]:
        """The public parameters of one noisy value: what a user needs to judge its accuracy."""
        out: dict[str, Any] = {"part": part, "sensitivity": sensitivity, "epsilon": self.epsilon}
        if self.mechanism == "gaussian":
            # real values are released one at a time; integer ones need no rounding whatever d
            grid, sigma = mechanisms.gaussian_parameters(sensitivity, self.epsilon, self.delta,
                                                         integer=integer)
            out.update(mechanism="gaussian", delta=self.delta, sigma=sigma, grid=grid)
        else:
            out.update(mechanism="discrete laplace" if integer else "laplace (snapping)",
                       scale=sensitivity / self.epsilon)
        return out

    def real(self, values: np.ndarray, sensitivity: float) -> np.ndarray:
        if self.mechanism == "gaussian":
            return mechanisms.gaussian(values, sensitivity, self.epsilon, self.delta, self.rng)
        units = min(_SUM_BOUND_UNITS, 2.0 ** 44 / self.epsilon)
        return mechanisms.laplace(values, sensitivity, self.epsilon, self.rng,
                                  bound=units * sensitivity)


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


@dataclass(frozen=True)
class Sum(_Clamped):
    """The sum of a numeric column clamped to public bounds (Δ = max(|lower|, |upper|)).

    >>> from sqlanon.compile.render import render
    >>> print(render(Sum("x", -1, 5).query("t"), "postgres"))  # doctest: +NORMALIZE_WHITESPACE
    SELECT CAST(COALESCE(SUM(CASE WHEN NOT "x" IS NULL THEN LEAST(GREATEST(CAST("x" AS
    DOUBLE PRECISION), -1.0), 5.0) END), 0.0) AS DOUBLE PRECISION) AS "__sa_s" FROM "t"
    """

    kind: ClassVar[str] = "sum"

    @property
    def sensitivity(self) -> float:
        return max(abs(float(self.lower)), abs(float(self.upper)))

    def query(self, relation: str) -> exp.Select:
        clamped = self.bounds()[self.column].clamp(col(self.column))
        total = exp.Coalesce(this=exp.Sum(this=clamped), expressions=[lit(0.0)])
        return exp.select(alias(as_double(total), internal("s"))).from_(table(relation))

    def release(self, rows: list[tuple[Any, ...]], noise: Noise) -> float:
        if self.sensitivity == 0:  # bounds (0, 0) are refused, so Δ > 0; kept for clarity
            return 0.0
        return float(noise.real(np.array([float(rows[0][0])]), self.sensitivity)[0])

    def noise_parameters(self, noise: Noise) -> list[dict[str, Any]]:
        return [noise.describe("sum", self.sensitivity, integer=False)]

    def describe(self) -> str:
        return f"sum({self.column!r} clamped to [{self.lower:g}, {self.upper:g}])"


@dataclass(frozen=True)
class Mean(_Clamped):
    """The mean of a numeric column clamped to public bounds: noisy centred sum / noisy count."""

    kind: ClassVar[str] = "mean"

    @property
    def midpoint(self) -> float:
        return (float(self.lower) + float(self.upper)) / 2.0

    def query(self, relation: str) -> exp.Select:
        clamped = self.bounds()[self.column].clamp(col(self.column))
        centred = exp.Sub(this=clamped, expression=lit(self.midpoint))
        total = exp.Coalesce(this=exp.Sum(this=centred), expressions=[lit(0.0)])
        return exp.select(alias(as_double(total), internal("s")),
                          alias(exp.Count(this=col(self.column)), internal("n"))
                          ).from_(table(relation))

    def release(self, rows: list[tuple[Any, ...]], noise: Noise) -> float:
        half = noise.split(2)
        centred_sum, n = float(rows[0][0]), int(rows[0][1])
        noisy_sum = float(half.real(np.array([centred_sum]),
                                    (float(self.upper) - float(self.lower)) / 2.0)[0])
        noisy_n = max(int(half.integer(np.array([n]), 1)[0]), 1)
        return float(min(max(self.midpoint + noisy_sum / noisy_n, self.lower), self.upper))

    def noise_parameters(self, noise: Noise) -> list[dict[str, Any]]:
        half = noise.split(2)
        width = (float(self.upper) - float(self.lower)) / 2.0
        return [half.describe("centred sum", width, integer=False),
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
        cols = (group_by,) if isinstance(group_by, str) else tuple(group_by)
        if not cols:
            raise SpecError("a histogram needs at least one column", path="histogram")
        if keys is None or isinstance(keys, str) or len(keys) == 0:
            raise SpecError(
                "a histogram needs the public list of keys to count (keys=[...], CLI: --keys); "
                "sqlanon does not read the keys from the data, since which keys occur is itself "
                "private", path="histogram.keys")
        parsed = []
        for i, k in enumerate(keys):
            values = (k,) if len(cols) == 1 and not isinstance(k, (tuple, list)) else tuple(k)
            if len(values) != len(cols):
                raise SpecError(f"key {i} has {len(values)} value(s) for {len(cols)} column(s)",
                                path=f"histogram.keys[{i}]")
            if any(v is None for v in values):
                raise SpecError("keys cannot be NULL", path=f"histogram.keys[{i}]")
            parsed.append(tuple(str(v) for v in values))
        if len(set(parsed)) != len(parsed):
            raise SpecError("keys must be distinct", path="histogram.keys")
        object.__setattr__(self, "group_by", cols)
        object.__setattr__(self, "keys", tuple(parsed))

    def columns(self) -> tuple[str, ...]:
        return self.group_by

    def query(self, relation: str) -> exp.Select:
        names = [internal(f"k{i}") for i in range(len(self.group_by))]
        keys = exp.values([tuple(lit(v) for v in k) for k in self.keys], alias=internal("keys"),
                          columns=names)
        on = exp.and_(*[exp.EQ(this=as_text(col(c, internal("t"))),
                               expression=col(n, internal("keys")))
                        for c, n in zip(self.group_by, names)])
        source = exp.alias_(table(relation), internal("t"), table=True, quoted=True)
        key_cols = [col(n, internal("keys")) for n in names]
        return (exp.select(*[alias(c, n) for c, n in zip(key_cols, names)],
                           alias(count_star(), internal("n")))
                .from_(source).join(keys, on=on).group_by(*[c.copy() for c in key_cols]))

    def release(self, rows: list[tuple[Any, ...]], noise: Noise) -> list[dict[str, Any]]:
        exact = {tuple(r[:-1]): int(r[-1]) for r in rows}
        counts = np.array([exact.get(k, 0) for k in self.keys], dtype=np.int64)
        noisy = noise.integer(counts, 1)
        return [{"key": dict(zip(self.group_by, k)) if len(self.group_by) > 1 else k[0],
                 "count": int(c)} for k, c in zip(self.keys, noisy)]

    def noise_parameters(self, noise: Noise) -> list[dict[str, Any]]:
        return [noise.describe("count per key", 1, integer=True)]

    def describe(self) -> str:
        return f"histogram over {list(self.group_by)!r} of {len(self.keys)} public keys"


def check_mechanism(mechanism: str, delta: float) -> None:
    """Raise unless ``mechanism`` is known and fits δ (Gaussian needs δ > 0, Laplace spends none)."""
    if mechanism not in MECHANISMS:
        raise SpecError(f"unknown mechanism {mechanism!r}; use one of {', '.join(MECHANISMS)}",
                        path="mechanism")
    if mechanism == "gaussian" and not 0 < delta < 1:
        raise SpecError(f"the Gaussian mechanism needs 0 < delta < 1, got {delta!r}", path="delta")
    if mechanism == "laplace" and delta != 0:
        raise SpecError(f"the Laplace mechanism is pure ε-DP and spends no delta; got delta={delta!r}"
                        " (use mechanism='gaussian' to spend delta)", path="delta")
    if not math.isfinite(delta):
        raise SpecError(f"delta must be finite, got {delta!r}", path="delta")
