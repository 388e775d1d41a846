"""What each mechanism adds to or makes of the rows: numpy draws and the SQL that applies them."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
from sqlglot import exp

from sqlanon.engines.row_values import SOURCE, VALUES
from sqlanon.errors import SpecError
from sqlanon.methods.dp import mechanisms as mech
from sqlanon.methods.perturbation import perturb
from sqlanon.methods.perturbation.options import NoiseOptions
from sqlanon.methods.perturbation.per_row_mechanisms import NUMERIC_REWRITES
from sqlanon.methods.perturbation.row_stream import RowDraws
from sqlanon.methods.rng import RowKey
from sqlanon.registry import Registry
from sqlanon.sql.nodes import as_double, col, internal


def noise_column(i: int) -> str:
    return internal(f"n{i}")


@dataclass
class Draw:
    """Per-row values for the rows of a table and how each perturbed column is computed from them."""

    schema: pa.Schema
    batches: Callable[[int], dict[str, Any]]
    expressions: dict[str, exp.Expression]
    guarantee: dict[str, Any] = field(default_factory=dict)
    categorical: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Per categorical attribute: its categories and the transition matrix used."""
    independent: Callable[[int], Callable[[int], dict[str, Any]]] | None = None
    """For noise that ignores the values: the ``batches`` of the rows from a given row number on,
    addressed by position (:mod:`~sqlanon.methods.perturbation.row_stream`), so that blocks and
    partitions of the rows draw apart (:mod:`sqlanon.engines.duckdb_blocks`, Spark's partitions)."""


def _source(c: str) -> exp.Expression:
    return col(c, SOURCE)


def _value(i: int) -> exp.Expression:
    return col(noise_column(i), VALUES)


def _clamp(x: exp.Expression, low: float, high: float) -> exp.Expression:
    """x clamped to [low, high] by CASE (NULL stays NULL: both comparisons are NULL then).

    Not GREATEST/LEAST: those skip NULLs (and sqlglot nests a CASE per call to keep them), and cost
    twice the comparisons in DuckDB (snapping one column of 10M rows: 25 ms against 59 ms).
    """
    hi, lo = exact_double(high), exact_double(low)
    return exp.Case(ifs=[exp.If(this=exp.GT(this=x.copy(), expression=hi), true=hi.copy()),
                         exp.If(this=exp.LT(this=x.copy(), expression=lo), true=lo.copy())],
                    default=x.copy())


def _float_schema(m: int, kind: pa.DataType | None = None) -> pa.Schema:
    kind = pa.float64() if kind is None else kind
    return pa.schema([(noise_column(i), kind) for i in range(m)])


def _unknown_additive(kind: str, name: str, known: Sequence[str]) -> SpecError:
    # options.parse admits only known mechanisms: reaching this is a bug
    return SpecError(f"unknown additive mechanism {name!r}", path="transformation.mechanism")


Batches = Callable[[np.random.Generator], Callable[[int], dict[str, Any]]]
AdditiveDraw = Callable[["AdditiveSetting"], Draw]

ADDITIVE_DRAWS: Registry[AdditiveDraw] = Registry("additive mechanism", unknown=_unknown_additive)
"""Mechanism -> its draw, for noise that does not depend on the values (drawn in numpy, added in SQL)."""


@dataclass(frozen=True)
class AdditiveSetting:
    """What an additive mechanism's draw reads."""

    opts: NoiseOptions
    key: RowKey
    """The run's key of the noise addressed by row position."""
    stats: dict[str, Any]
    """Variances or the covariance of the attributes, for the mechanisms scaled by them."""
    integers: frozenset[str]
    """The attributes of an integer type, which the DP mechanisms release on the grid 1."""


def additive(opts: NoiseOptions, key: RowKey, stats: dict[str, Any],
             integers: frozenset[str] = frozenset()) -> Draw:
    """Noise that does not depend on the values (given ``stats``: variances or the covariance),
    drawn by row position under ``key``.

    ``integers``: the attributes of an integer type, which the DP mechanisms release on the grid 1.
    """
    return ADDITIVE_DRAWS.get(opts.mechanism)(AdditiveSetting(opts, key, stats, integers))


def _independent(s: AdditiveSetting, schema: pa.Schema, make: Batches, exprs: dict[str, exp.Expression],
                 guarantee: dict[str, Any]) -> Draw:
    draws = RowDraws(make, s.key)
    return Draw(schema, draws.at(0), exprs, guarantee, independent=draws.at)


@ADDITIVE_DRAWS.register("uncorrelated")
def _uncorrelated(s: AdditiveSetting) -> Draw:
    m = len(s.opts.attributes)
    sd = perturb.uncorrelated_sd(s.stats["variances"], s.opts.params["alpha"])
    return _independent(s, _float_schema(m), _standard_normals(m), _linear(s.opts.attributes, np.diag(sd)),
                        {})


@ADDITIVE_DRAWS.register("correlated")
def _correlated(s: AdditiveSetting) -> Draw:
    m = len(s.opts.attributes)
    factor = perturb.correlated_factor(s.stats["covariance"], s.opts.params["alpha"])
    return _independent(s, _float_schema(m), _standard_normals(m), _linear(s.opts.attributes, factor), {})


@ADDITIVE_DRAWS.register("gaussian")
def _gaussian(s: AdditiveSetting) -> Draw:
    attrs, p, opts, integers = s.opts.attributes, s.opts.params, s.opts, s.integers
    grids, sigmas = zip(*(mech.gaussian_parameters(opts.sensitivity(a), p["epsilon"],
                                                   p["delta"], integer=a in integers)
                          for a in attrs))
    guarantee = {"epsilon": p["epsilon"], "delta": p["delta"], "calibration": "analytic",
                 "sigma": dict(zip(attrs, sigmas)), "grid": dict(zip(attrs, grids))}
    # the engine rounds σ/γ·z half up: a function of the draw alone, so the noise stays
    # independent of the values (see mechanisms.gaussian)
    exprs = {a: _on_grid(a, grid, _round_half_up(exp.Mul(this=exact_double(sigma / grid),
                                                         expression=_value(i))),
                         a in integers)
             for i, (a, grid, sigma) in enumerate(zip(attrs, grids, sigmas))}
    return _independent(s, _float_schema(len(attrs)), _standard_normals(len(attrs)), exprs, guarantee)


@ADDITIVE_DRAWS.register("staircase")
def _staircase(s: AdditiveSetting) -> Draw:
    attrs, p, opts, integers = s.opts.attributes, s.opts.params, s.opts, s.integers
    gamma = p.get("gamma", mech.staircase_optimal_gamma(p["epsilon"]))
    grids, sensitivities = zip(*(mech.release_grid(opts.sensitivity(a), integer=a in integers)
                                 for a in attrs))
    guarantee = {"epsilon": p["epsilon"], "gamma": gamma, "grid": dict(zip(attrs, grids))}
    exprs = {a: _on_grid(a, grid, _value(i), a in integers)
             for i, (a, grid) in enumerate(zip(attrs, grids))}

    def make(g: np.random.Generator) -> Callable[[int], dict[str, Any]]:
        def batches(n: int) -> dict[str, Any]:
            return {noise_column(i): mech.round_half_up(
                        mech.sample_staircase(g, (n,), sens, p["epsilon"], gamma) / grid)
                    for i, (sens, grid) in enumerate(zip(sensitivities, grids))}
        return batches
    return _independent(s, _float_schema(len(attrs)), make, exprs, guarantee)


@ADDITIVE_DRAWS.register("discrete_laplace")
def _discrete_laplace(s: AdditiveSetting) -> Draw:
    attrs, p, opts = s.opts.attributes, s.opts.params, s.opts
    exprs: dict[str, exp.Expression] = {
        a: exp.Add(this=exp.cast(_source(a), exp.DataType.build("bigint")), expression=_value(i))
        for i, a in enumerate(attrs)}

    def make(g: np.random.Generator) -> Callable[[int], dict[str, Any]]:
        def batches(n: int) -> dict[str, Any]:
            return {noise_column(i): mech.sample_discrete_laplace(
                g, (n,), p["epsilon"] / opts.sensitivity(a)) for i, a in enumerate(attrs)}
        return batches
    return _independent(s, _float_schema(len(attrs), pa.int64()), make, exprs, {"epsilon": p["epsilon"]})


def _round_half_up(x: exp.Expression) -> exp.Expression:
    return exp.Floor(this=exp.Add(this=x, expression=exact_double(0.5)))


def _on_grid(attribute: str, grid: float, steps: exp.Expression, integer: bool) -> exp.Expression:
    """γ·(x/γ rounded + steps): the value on the grid γ moved by an integer number of steps.

    γ is a power of two, so dividing and multiplying by it are exact; an integer column is on the
    grid 1 already."""
    x = as_double(_source(attribute))
    if integer and grid == 1.0:
        return exp.Add(this=x, expression=steps)
    on_grid = exp.Add(this=exp.Round(this=exp.Mul(this=x, expression=exact_double(1.0 / grid))),
                      expression=steps)
    return exp.Mul(this=exp.Paren(this=on_grid), expression=exact_double(grid))


def exact_double(value: float) -> exp.Expression:
    """A DOUBLE literal equal to ``value`` bit for bit (text → double is correctly rounded; a plain
    decimal literal would become a DECIMAL first)."""
    return exp.cast(exp.Literal.string(repr(float(value))), exp.DataType.build("double"))


def _combination(coefficients: np.ndarray, values: list[exp.Expression]) -> exp.Expression:
    """Σ c_j·v_j over the non-zero coefficients, in order (0 when there are none)."""
    terms = [exp.Mul(this=exact_double(c), expression=v.copy())
             for c, v in zip(coefficients, values) if c]
    if not terms:
        return exact_double(0.0)
    out: exp.Expression = terms[0]
    for t in terms[1:]:
        out = exp.Add(this=out, expression=t)
    return out


def _standard_normals(m: int) -> Callable[[np.random.Generator], Callable[[int], dict[str, Any]]]:
    """Batches of m independent N(0, 1) columns; scales are applied by the engine."""
    def make(g: np.random.Generator) -> Callable[[int], dict[str, Any]]:
        def batches(n: int) -> dict[str, Any]:
            return {noise_column(i): g.standard_normal(n) for i in range(m)}
        return batches
    return make


def _linear(attrs: tuple[str, ...], factor: np.ndarray) -> dict[str, exp.Expression]:
    """x_i + Σ_j L_ij·z_j on standard normal draws z: the engine applies the factor (a diagonal
    one for independent noise) in its vectors, cheaper than passes over whole numpy arrays
    (bench/README.md#noise)."""
    values = [_value(j) for j in range(len(attrs))]
    return {a: exp.Add(this=as_double(_source(a)),
                       expression=exp.Paren(this=_combination(factor[i], values)))
            for i, a in enumerate(attrs)}


@ADDITIVE_DRAWS.register("laplace")
def _snapping(s: AdditiveSetting) -> Draw:
    """Mironov's snapping mechanism in SQL over raw Laplace draws (see :func:`mechanisms.laplace`).

    Per attribute with public bounds [low, high], centre c and half-width B, in units of Δ:
    clamp((x − c)/Δ) + S·λ·ln(U*), rounded to a multiple of Λ, clamped, times Δ, plus c. The SQL
    operations are IEEE double arithmetic, division and multiplication by powers of two are exact.
    """
    opts = s.opts
    eps = opts.params["epsilon"]
    exprs: dict[str, exp.Expression] = {}
    scales, grids = [], {}
    for i, a in enumerate(opts.attributes):
        delta_f = float(opts.sensitivity(a))
        low, high = opts.params["bounds"][a]
        centre, half = (low + high) / 2.0, (high - low) / 2.0
        bound = half / delta_f
        scale, grid = mech.snapping_parameters(1.0, eps, bound)
        scales.append(scale)
        grids[a] = grid * delta_f
        units: exp.Expression = exp.Paren(this=exp.Sub(this=as_double(_source(a)),
                                                       expression=exact_double(centre)))
        if delta_f != 1.0:  # x/1 and x·1 are x exactly: skipped
            units = exp.Div(this=units, expression=exact_double(delta_f))
        noisy = exp.Paren(this=exp.Add(this=_clamp(units, -bound, bound), expression=_value(i)))
        # Λ is a power of two: multiplying by 1/Λ is exactly dividing by it, and cheaper
        snapped = exp.Mul(this=exp.Round(this=exp.Mul(this=noisy,
                                                      expression=exact_double(1.0 / grid))),
                          expression=exact_double(grid))
        released = _clamp(snapped, -bound, bound)
        if delta_f != 1.0:
            released = exp.Mul(this=released, expression=exact_double(delta_f))
        exprs[a] = exp.Add(this=released, expression=exact_double(centre))

    def make(g: np.random.Generator) -> Callable[[int], dict[str, Any]]:
        def batches(n: int) -> dict[str, Any]:
            return {noise_column(i): mech.sample_laplace(g, n, s) for i, s in enumerate(scales)}
        return batches

    return _independent(s, _float_schema(len(opts.attributes)), make, exprs,
                        {"epsilon": eps, "method": "snapping (Mironov 2012)", "grid": grids})


def per_row(opts: NoiseOptions, rng: np.random.Generator, data: dict[str, np.ndarray],
            types: dict[str, str], dialect: str) -> Draw:
    """Numeric mechanisms that read the values (rank swapping, condensation): new values computed in
    numpy over every row, one column per attribute."""
    attrs = opts.attributes
    kind = opts.mechanism
    matrix = np.column_stack([_floats(data[a], a) for a in attrs])
    new = NUMERIC_REWRITES.get(kind)(matrix, opts.params, rng)
    columns = {a: pa.array(new[:, j], mask=np.isnan(new[:, j]), type=pa.float64())
               for j, a in enumerate(attrs)}
    schema = pa.schema([(noise_column(i), columns[a].type) for i, a in enumerate(attrs)])
    exprs = {a: exp.cast(_value(i), exp.DataType.build(types[a], dialect=dialect))
             if NUMERIC_REWRITES.traits(kind)["keeps_type"] else _value(i) for i, a in enumerate(attrs)}
    offset = {"done": 0}

    def batches(n: int) -> dict[str, Any]:
        start = offset["done"]
        offset["done"] += n
        return {noise_column(i): columns[a].slice(start, n) for i, a in enumerate(attrs)}

    return Draw(schema, batches, exprs)


def sampling(fraction: float, n: int, rng: np.random.Generator) -> Draw:
    """A simple random sample without replacement of round(fraction·n) rows, as a keep flag."""
    keep = np.zeros(n, dtype=bool)
    keep[rng.choice(n, size=int(round(fraction * n)), replace=False)] = True
    offset = {"done": 0}

    def batches(size: int) -> dict[str, Any]:
        start = offset["done"]
        offset["done"] += size
        return {noise_column(0): keep[start:start + size]}

    return Draw(pa.schema([(noise_column(0), pa.bool_())]), batches, {})


def _floats(values: np.ndarray, attribute: str) -> np.ndarray:
    if isinstance(values, np.ma.MaskedArray):
        values = np.ma.filled(values.astype(np.float64), np.nan)
    try:
        return np.array([np.nan if v is None else v for v in values.tolist()], dtype=np.float64)
    except (TypeError, ValueError) as err:
        raise SpecError("must be a numeric column", path=f"transformation.attributes.{attribute}") \
            from err
