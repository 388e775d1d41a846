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

from sqlanon.methods.perturbation.pram import estimate_frequencies


def categorical_figures(cats: Sequence[Any], crossed: np.ndarray, matrix: np.ndarray, mechanism: str
                        ) -> dict[str, Any]:
    """Changed share, original and released frequencies, and the unbiased estimate of the original,
    from ``crossed[k, l]``: how many values of category k were released as l (NULLs left out)."""
    before, after = crossed.sum(axis=1), crossed.sum(axis=0)
    total = int(crossed.sum())
    estimate = estimate_frequencies(after, matrix)
    labels = [str(c) for c in cats]
    return {
        "changed_share": 1.0 - float(np.trace(crossed)) / total if total else 0.0,
        "frequencies_original": dict(zip(labels, before.tolist())),
        "frequencies_released": dict(zip(labels, after.tolist())),
        "frequencies_estimated": dict(zip(labels, np.round(estimate, 6).tolist())),
        "invariant": mechanism == "invariant_pram",
    }
