"""Projection microaggregation as one SQL query: order the records along one axis, group runs of k.

Multivariate records are projected onto one axis and microaggregated like one attribute (Domingo-Ferrer
J, Mateo-Sanz JM. Practical data-oriented microaggregation for statistical disclosure control. IEEE
TKDE 14(1), 2002, section 4: projection on the first principal component or on the sum of z-scores;
Domingo-Ferrer J, Sánchez D, Soria-Comas J. Database Anonymization, Morgan & Claypool 2016, ch. 3):

1. every attribute is standardized, ``z_j = (x_j - mean_j) / sd_j`` (population standard deviation;
   a constant attribute has ``sd_j`` taken as 1);
2. the score of a row is ``sum_j c_j z_j`` with ``c_j = 1`` (``zscore``) or ``c`` the first principal
   component of the ``z`` (``pca``: the unit eigenvector of the largest eigenvalue of their
   covariance, i.e. of the attributes' correlation matrix, signed to a positive sum);
3. rows ranked by ``(score, key...)`` form groups of ``k`` consecutive rows, the ``n mod k`` left over
   joining the last group (``k..2k-1`` rows, as individual ranking does);
4. every attribute becomes its group's mean (or median); all other columns pass through.

Means, standard deviations and covariances come from one aggregate query (:func:`projection_axis`);
the axis then enters the query as literals, so the query itself renders for every dialect and a view
keeps the axis it was created with. NULLs are refused by the caller (a projection needs every value).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from sqlglot import exp

from sqlanon.engines.base import Engine
from sqlanon.errors import SpecError
from sqlanon.methods.microaggregation.group_sql import GROUP, group_start, statistics_query, value_name
from sqlanon.sql.nodes import alias, as_double, as_expression, col, count_star, internal, lit, table

PROJECTIONS = ("pca", "zscore")
SCORE = internal("score")
_RN, _N = internal("rn"), internal("n")


@dataclass(frozen=True)
class Axis:
    """``score = sum_j weights[j] * (x_j - means[j])``."""

    means: tuple[float, ...]
    weights: tuple[float, ...]


def axis_from_moments(means: np.ndarray, covariance: np.ndarray, projection: str) -> Axis:
    """The axis from the attributes' means and population covariance matrix."""
    sd = np.sqrt(np.clip(np.diag(covariance), 0.0, None))
    sd = np.where(sd > 0, sd, 1.0)
    if projection == "zscore" or len(means) == 1:
        c = np.ones(len(means))
    else:
        values, vectors = np.linalg.eigh(covariance / np.outer(sd, sd))
        c = _signed(vectors[:, int(np.argmax(values))])
    return Axis(tuple(float(m) for m in means), tuple(float(w) for w in c / sd))


def _signed(v: np.ndarray) -> np.ndarray:
    """``v`` or ``-v``, whichever has a positive sum (or, for a zero sum, a positive first entry)."""
    total = v.sum()
    nonzero = np.flatnonzero(np.abs(v) > 1e-12)
    sign = np.sign(total) if abs(total) > 1e-12 else np.sign(v[nonzero[0]])
    return v * sign


def scores(x: np.ndarray, axis: Axis) -> np.ndarray:
    """The scores of the rows of ``x`` (numpy), as the query computes them."""
    return (x - np.asarray(axis.means)) @ np.asarray(axis.weights)


def axis_of(x: np.ndarray, projection: str) -> Axis:
    """The axis of the rows of ``x`` (numpy)."""
    return axis_from_moments(x.mean(axis=0), np.atleast_2d(np.cov(x, rowvar=False, bias=True)),
                             projection)


def projection_axis(engine: Engine, source: exp.Expression, attributes: Sequence[str],
                    projection: str) -> Axis:
    """Means and population covariances of ``attributes`` in one aggregate query, then the axis."""
    if projection not in PROJECTIONS:
        raise SpecError(f"unknown projection {projection!r}; use one of {', '.join(PROJECTIONS)}",
                        path="transformation.projection")
    m = len(attributes)
    x = [as_double(col(a)) for a in attributes]
    pairs = [(i, j) for i in range(m) for j in range(i, m)]
    q = exp.select(*[exp.Avg(this=v.copy()) for v in x],
                   *[exp.CovarPop(this=x[i].copy(), expression=x[j].copy()) for i, j in pairs]) \
        .from_(_relation(source))
    row = [float(v) if v is not None else 0.0 for v in engine.fetch(q)[1][0]]
    cov = np.zeros((m, m))
    for (i, j), v in zip(pairs, row[m:]):
        cov[i, j] = cov[j, i] = v
    return axis_from_moments(np.array(row[:m]), cov, projection)


def _relation(source: exp.Expression | str) -> exp.Expression:
    if isinstance(source, str):
        source = table(source)
    if isinstance(source, (exp.Table, exp.Subquery)):
        return as_expression(exp.alias_(source.copy(), internal("src"), table=True, quoted=True))
    return as_expression(exp.alias_(exp.Subquery(this=source.copy()), internal("src"), quoted=True))


def _number(value: float) -> exp.Expression:
    return as_double(lit(float(value)))


def score_expression(attributes: Sequence[str], axis: Axis) -> exp.Expression:
    terms: list[exp.Expression] = [
        exp.Mul(this=_number(w), expression=exp.Paren(this=exp.Sub(this=as_double(col(a)),
                                                                   expression=_number(mu))))
        for a, mu, w in zip(attributes, axis.means, axis.weights)]
    score = terms[0]
    for t in terms[1:]:
        score = exp.Add(this=score, expression=t)
    return score


def projection_query(source: exp.Expression | str, columns: Sequence[str], attributes: Sequence[str],
                     k: int, axis: Axis, *, key: Sequence[str] | None = None,
                     statistic: str = "mean") -> exp.Select:
    """A SELECT returning ``source`` with ``attributes`` replaced by their projection group's statistic.

    Args:
        source: a table name, a sqlglot table or a query.
        columns: the source's columns, in output order.
        attributes: the numeric columns projected and microaggregated together.
        k: the minimum group size (>= 2); the caller checks there are at least ``k`` rows.
        axis: from :func:`projection_axis` (or :func:`axis_from_moments`).
        key: columns breaking ties between equal scores, in order (default: all columns).
        statistic: ``mean`` or ``median``.
    """
    ties = list(key) if key else list(columns)
    scored = exp.select(*[col(c) for c in columns], alias(score_expression(attributes, axis), SCORE)) \
        .from_(_relation(source))
    order = exp.Order(expressions=[exp.Ordered(this=col(c), nulls_first=False) for c in [SCORE, *ties]])
    ranked = exp.select(*[col(c) for c in columns], alias(exp.Window(this=exp.RowNumber(), order=order), _RN),
                        alias(exp.Window(this=count_star()), _N)) \
        .from_(exp.alias_(exp.Subquery(this=scored), internal("scored"), quoted=True))
    grouped = exp.select(*[col(c) for c in columns],
                         alias(group_start(col(_RN), col(_N), k), GROUP)) \
        .from_(exp.alias_(exp.Subquery(this=ranked), internal("ranked"), quoted=True))
    rows, stats = internal("grouped"), internal("stats")
    out = exp.select(*[alias(col(value_name(attributes.index(c)), stats) if c in attributes
                             else col(c, rows), c) for c in columns]) \
        .from_(table(rows)) \
        .join(table(stats), on=exp.EQ(this=col(GROUP, rows), expression=col(GROUP, stats)), join_type="inner")
    out = out.with_(exp.to_identifier(rows, quoted=True), as_=grouped)
    return out.with_(exp.to_identifier(stats, quoted=True),
                     as_=statistics_query(rows, GROUP, attributes, statistic, ties))
