"""The variances or the covariance that scale the uncorrelated and correlated noise, in one scan."""

from __future__ import annotations

from typing import Any

import numpy as np
from sqlglot import exp

from sqlanon.engines.row_values import schema_name
from sqlanon.methods.dataset import Dataset
from sqlanon.methods.perturbation.options import NoiseOptions
from sqlanon.sql.nodes import alias, as_double, as_expression, col, lit, table


def statistics_of(ds: Dataset, opts: NoiseOptions) -> dict[str, Any]:
    """Sample variances (uncorrelated, each over its non-NULL values) or the sample covariance
    over complete rows (correlated), both n − 1, in one scan (:func:`_moments`)."""
    attrs = list(opts.attributes)
    if opts.mechanism == "uncorrelated":
        return {"variances": _moments(ds, attrs, complete=False).diagonal().copy()}
    if opts.mechanism == "correlated":
        return {"covariance": _moments(ds, attrs)}
    return {}


def _moments(ds: Dataset, attrs: list[str], *, complete: bool = True) -> np.ndarray:
    """Sample covariances from sums of products shifted by one value K_i of each column.

    With x − K instead of x the one-pass formula (S_ij − S_i·S_j/n)/(n − 1) loses little: its
    relative error grows with (mean − K)²/variance, which is at most n − 1 when K is one of the
    values (Samuelson's inequality), so at most about n·2^-52, against the catastrophic loss of the
    unshifted formula when the mean dwarfs the spread. One scan instead of the two of a two-pass
    algorithm (0.25 s of 5 columns × 100M rows). K is the least value among the first rows; a
    column with none there takes the first scan's mean, the two-pass way (0 when it has no value at
    all: its variances, over fewer than two values, are 0).

    ``complete``: over rows where every attribute is non-NULL (covariance); otherwise each
    column's variance over its own non-NULL values (the off-diagonal entries are then unused).
    """
    source = table(ds.name, schema_name(ds.relation))
    m = len(attrs)
    head = exp.select(*[alias(col(a), f"c{i}") for i, a in enumerate(attrs)]).from_(source).limit(1000)
    shifts = list(ds.engine.fetch(exp.select(*[exp.Min(this=as_double(col(f"c{i}")))
                                               for i in range(m)]).from_(head.subquery("h")))[1][0])
    if any(k is None for k in shifts):
        means = _means(ds, attrs, complete)
        # a column without any value (an empty table, only NULLs) has no moments: any shift does
        shifts = [k if k is not None else mu if mu is not None else 0.0 for k, mu in zip(shifts, means)]
    centred = [exp.Paren(this=exp.Sub(this=as_double(col(a)), expression=lit(float(k))))
               for a, k in zip(attrs, shifts)]
    pairs = [(i, j) for i in range(m) for j in range(i, m)] if complete else [(i, i) for i in range(m)]
    counts = [exp.Count(this=exp.Star())] if complete else [exp.Count(this=col(a)) for a in attrs]
    q = exp.select(*counts, *[exp.Sum(this=c.copy()) for c in centred],
                   *[exp.Sum(this=exp.Mul(this=centred[i].copy(), expression=centred[j].copy()))
                     for i, j in pairs]).from_(source)
    if complete:
        q = q.where(_complete(attrs))
    row = ds.engine.fetch(q)[1][0]
    n = [int(row[0])] * m if complete else [int(c) for c in row[:m]]
    sums = [float(v or 0.0) for v in row[len(counts):len(counts) + m]]
    products = row[len(counts) + m:]
    cov = np.zeros((m, m))
    for (i, j), v in zip(pairs, products):
        if n[i] >= 2:
            value = (float(v) - sums[i] * sums[j] / n[i]) / (n[i] - 1)
            cov[i, j] = cov[j, i] = max(value, 0.0) if i == j else value
    return cov


def _complete(attrs: list[str]) -> exp.Expression:
    return as_expression(exp.and_(*[exp.Not(this=exp.Is(this=col(a), expression=exp.Null())) for a in attrs]))


def _means(ds: Dataset, attrs: list[str], complete: bool) -> list[float | None]:
    source = table(ds.name, schema_name(ds.relation))
    q = exp.select(*[exp.Avg(this=as_double(col(a))) for a in attrs]).from_(source)
    if complete:
        q = q.where(_complete(attrs))
    return [None if v is None else float(v) for v in ds.engine.fetch(q)[1][0]]
