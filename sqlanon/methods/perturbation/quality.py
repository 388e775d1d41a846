"""What a perturbation cost and what risk remains: the foundation's numeric metrics, record linkage,
and for categorical attributes the changed share and the frequency estimates.

Numeric: SSE, IL1s and the changes of means, variances, covariances and correlations
(:mod:`sqlanon.domain.metrics.numeric`, computed in SQL over original and released values side by side).
Distance-based record linkage (:func:`sqlanon.methods.microaggregation.quality.record_linkage`; seed 000
ch. 4): the share of released records whose nearest original record is their own. Above ``LINKAGE_ROWS``
rows it is measured on a systematic sample of that many rows, linked among themselves (an easier
task for the intruder, so the figure errs on the side of risk).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from sqlglot import exp

from sqlanon.sql.nodes import alias, as_double, col, internal, lit
from sqlanon.engines.base import Engine
from sqlanon.domain.metrics.numeric import W, NoNumericRecords, compare_pairs, original_column, released_column
from sqlanon.methods.microaggregation.quality import record_linkage
from sqlanon.methods.perturbation.pram import estimate_frequencies

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
    out: dict[str, Any] = {"sse": comparison.sse, "sst": comparison.sst, "il1s": comparison.il1s}
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


def categorical_quality(attribute: dict[str, Any], mechanism: str) -> dict[str, Any]:
    """Changed share, original and released frequencies, and the unbiased estimate of the original."""
    cats = attribute["categories"]
    original, released = attribute["original"], attribute["released"]
    present = original >= 0
    k = len(cats)
    before = np.bincount(original[present], minlength=k)
    after = np.bincount(released[present], minlength=k)
    estimate = estimate_frequencies(after, attribute["matrix"])
    labels = [str(c) for c in cats]
    return {
        "changed_share": float(np.mean(original[present] != released[present])) if present.any()
        else 0.0,
        "frequencies_original": dict(zip(labels, before.tolist())),
        "frequencies_released": dict(zip(labels, after.tolist())),
        "frequencies_estimated": dict(zip(labels, np.round(estimate, 6).tolist())),
        "invariant": mechanism == "invariant_pram",
    }
