"""What a release achieved: group sizes, information loss and record-linkage risk (microaggregation,
noise and DP microdata compare their released values with the originals here).

SSE, SST and IL1s come from :func:`sqlanon.domain.metrics.numeric.compare_pairs` over the original and
released values paired by row key (in SQL). Distance-based record linkage (Pagliuca D, Seri G. Some results of
individual ranking method on the system of enterprise accounts annual survey. Esprit SDC Project,
Deliverable MI-3/D2, 1999; Domingo-Ferrer J, Torra V. A quantitative comparison of disclosure control
methods for microdata, 2001): an intruder holding the original records links each released record to
its nearest original one (Euclidean distance on attributes standardized by the original mean and
standard deviation); the risk is the share of released records so linked to their own original.
When several originals are nearest at the same distance and the own one is among them, the link is
right with probability 1 / their number, which is what the record counts.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from scipy.spatial import cKDTree
from sqlglot import exp

from sqlanon.domain.metrics.numeric import (
    NoNumericRecords,
    W,
    compare_pairs,
    original_column,
    paired_query,
    released_column,
)
from sqlanon.engines.base import Engine
from sqlanon.sql.nodes import alias, as_double, col, internal, lit


def group_sizes(labels: np.ndarray) -> np.ndarray:
    return np.bincount(np.unique(labels, return_inverse=True)[1])


def record_linkage(original: np.ndarray, released: np.ndarray) -> float:
    """The share of released rows whose nearest original row (standardized Euclidean) is their own."""
    n = original.shape[0]
    if n == 0:
        return 0.0
    mean = original.mean(axis=0)
    sd = original.std(axis=0)
    sd = np.where(sd > 0, sd, 1.0)
    o = (original - mean) / sd
    a = (released - mean) / sd
    own = np.sqrt(((o - a) ** 2).sum(axis=1))
    tree = cKDTree(o)
    # released rows of one group are one point: find each point's nearest original once
    points, inverse = np.unique(a, axis=0, return_inverse=True)
    nearest = tree.query(points, k=1)[0][inverse.reshape(-1)]
    slack = 1e-9 * (1.0 + own)
    linked = np.flatnonzero(own <= nearest + slack)
    credit = np.zeros(n)
    if len(linked):
        ties = tree.query_ball_point(a[linked], r=own[linked] + slack[linked], return_length=True)
        credit[linked] = 1.0 / np.maximum(ties, 1)
    return float(credit.sum() / n)


def information_loss(engine: Engine, original: exp.Expression, released: exp.Expression,
                     attributes: Sequence[str], key: Sequence[str], *, linkage: bool = True
                     ) -> dict[str, Any]:
    """SSE, SST, 100·SSE/SST, IL1s (in SQL) and the record-linkage risk (rows pulled once)."""
    pairs = paired_query(original, released, attributes, list(key))
    c = compare_pairs(engine, pairs, attributes)
    out: dict[str, Any] = {"sse": c.sse, "sst": c.sst,
                           "sse_sst_percent": 100.0 * c.sse / c.sst if c.sst > 0 else 0.0,
                           "il1s": c.il1s, "per_attribute": c.per_attribute()}
    if linkage:
        data = engine.fetch_numpy(pairs)
        m = len(attributes)
        o = np.column_stack([np.asarray(data[original_column(i)], dtype=np.float64) for i in range(m)])
        r = np.column_stack([np.asarray(data[released_column(i)], dtype=np.float64) for i in range(m)])
        complete = np.isfinite(o).all(axis=1) & np.isfinite(r).all(axis=1)
        out["record_linkage"] = record_linkage(o[complete], r[complete])
    return out


LINKAGE_ROWS = 100_000
ORIGINAL = "o"
RELEASED = "r"


def pairs_query(original: exp.Expression, released: exp.Expression, columns: Sequence[str],
                on: exp.Expression | None) -> exp.Select:
    """Original and released values side by side: by position (``on`` None, DuckDB) or on a key."""
    projection = [alias(as_double(col(c, ORIGINAL)), original_column(i)) for i, c in enumerate(columns)]
    projection += [alias(as_double(col(c, RELEASED)), released_column(i)) for i, c in enumerate(columns)]
    query = exp.select(*projection, alias(lit(1), W)).from_(original)
    if on is None:
        return query.join(exp.Join(this=released, method="POSITIONAL"))
    return query.join(released, on=on)


def numeric_quality(engine: Engine, pairs: exp.Select, columns: Sequence[str], rows: int, *,
                    linkage: bool) -> dict[str, Any]:
    """SSE, IL1s, moment changes (in SQL) and, if asked, the record-linkage risk; none when no
    record has a value in every column (an attribute holding only NULL)."""
    try:
        comparison = compare_pairs(engine, pairs, columns)
    except NoNumericRecords:
        return {}
    out: dict[str, Any] = {"sse": comparison.sse, "sst": comparison.sst, "il1s": comparison.il1s,
                           "per_attribute": comparison.per_attribute()}
    moments = comparison.as_dict()
    for key in ("mean_change", "variance_change", "covariance_change", "correlation_change"):
        if key in moments:
            out[key] = moments[key]
    if linkage:
        sample = pairs
        if rows > LINKAGE_ROWS:
            step = -(-rows // LINKAGE_ROWS)
            number = internal("i")
            numbered = exp.select(exp.Star(), alias(exp.Window(this=exp.RowNumber()), number)) \
                .from_(exp.alias_(exp.Subquery(this=pairs), internal("p"), quoted=True))
            sample = exp.select(exp.Star()).from_(
                exp.alias_(exp.Subquery(this=numbered), internal("q"), quoted=True)).where(
                exp.EQ(this=exp.Mod(this=col(number), expression=lit(step)), expression=lit(0)))
        data = engine.fetch_numpy(sample)
        m = len(columns)
        o = np.column_stack([_floats(data[original_column(i)]) for i in range(m)])
        r = np.column_stack([_floats(data[released_column(i)]) for i in range(m)])
        complete = np.isfinite(o).all(axis=1) & np.isfinite(r).all(axis=1)
        out["record_linkage"] = record_linkage(o[complete], r[complete])
        out["record_linkage_rows"] = int(complete.sum())
    return out


def _floats(values: np.ndarray) -> np.ndarray:
    """A float column with NULL as NaN (DuckDB returns NULLs masked, PostgreSQL as None)."""
    if isinstance(values, np.ma.MaskedArray):
        return np.ma.filled(values.astype(np.float64), np.nan)
    return np.array([np.nan if v is None else v for v in values.tolist()], dtype=np.float64)
