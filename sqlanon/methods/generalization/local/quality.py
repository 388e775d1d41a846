"""What a local recoding releases: its classes and ARX's quality figures, from the frequency table.

A class of the output is a set of released records with the same generalized values, whichever step
released them (two steps can publish the same tuple). The figures are ARX's definitions applied per
record, at the level of the step that released it (peer-semantics §3): Loss (each record charges its
label's share of the hierarchy, each suppressed record 1), discernibility (Σ|E|² + n·S) and AECS
(n / (|K| + 1 if anything is suppressed)).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from sqlanon.domain.factorize import factorize
from sqlanon.domain.metrics.arx import Loss, attribute_loss, leaves_of_rows
from sqlanon.methods.generalization.evaluator import Evaluator
from sqlanon.methods.generalization.local.iterate import LocalResult
from sqlanon.methods.generalization.search.fast import FastEvaluator


def _labels(ev: Evaluator, fe: FastEvaluator, i: int, levels: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Per released frequency row, its generalized value of QI ``i`` (text) at its step's level."""
    table = ev.hierarchy_table(fe.qis[i])
    out = np.empty(len(rows), dtype=object)
    for level in np.unique(levels):
        at = levels == level
        names = np.asarray(table.level_codes(int(level))[1], dtype=object)
        out[at] = names[fe.codes[i][int(level)][rows[at]]]
    return out


def output_figures(ev: Evaluator, fe: FastEvaluator, result: LocalResult) -> dict[str, Any]:
    """Rows, suppressed rows, classes, smallest class and ARX's Loss, DM and AECS of the output."""
    step_levels = np.asarray([s.levels for s in result.steps], dtype=np.int64)
    released = result.step_of_row >= 0
    rows = np.flatnonzero(released)
    n = fe.n
    suppressed = int(fe.row_n[~released].sum())
    keys: list[np.ndarray] = []
    losses: list[float] = []
    for i in range(len(fe.qis)):
        levels = step_levels[result.step_of_row[rows], i]
        codes, _ = factorize(_labels(ev, fe, i, levels, rows))
        keys.append(np.asarray(codes, dtype=np.int64))
        weighted = 0
        for lv in np.unique(levels).tolist():
            at = rows[levels == lv]
            weighted += int(np.dot(fe.row_n[at], leaves_of_rows(fe, i, lv, at)))
        losses.append(attribute_loss(fe, i, weighted, suppressed))
    sizes = _class_sizes(keys, fe.row_n[rows])
    classes = len(sizes)
    return {
        "rows": n,
        "suppressed_rows": suppressed,
        "classes": classes,
        "min_class_size": int(sizes.min()) if classes else None,
        "metrics": {
            "loss": Loss.combine(losses, list(fe.weights)),
            "discernibility": float(int(np.dot(sizes, sizes)) + n * suppressed),
            "aecs": n / (classes + (1 if suppressed else 0)) if classes or suppressed else 0.0,
        },
    }


def _class_sizes(keys: Sequence[np.ndarray], weights: np.ndarray) -> np.ndarray:
    if not len(weights):
        return np.zeros(0, dtype=np.int64)
    _, inverse = np.unique(np.stack(keys, axis=1), axis=0, return_inverse=True)
    return np.bincount(inverse.ravel(), weights=weights).astype(np.int64)


def steps_report(result: LocalResult, qis: Sequence[str]) -> list[dict[str, Any]]:
    """Per step: its levels, the records it was given and recovered, its limit and gs-factor."""
    out = []
    for number, s in enumerate(result.steps):
        out.append({"step": number, "levels": dict(zip(qis, s.levels)), "records": s.records,
                    "released_rows": s.recovered, "suppression_limit": s.suppression_limit,
                    **({"gs_factor": s.gs_factor} if s.gs_factor is not None else {}),
                    **({"metric": s.metric} if s.metric is not None else {}),
                    **({"seconds": s.seconds, "nodes_checked": s.nodes_checked} if number else {})})
    return out
