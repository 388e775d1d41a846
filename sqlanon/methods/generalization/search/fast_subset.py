"""A loaded frequency table restricted to some of its rows: the input of a local recoding step.

ARX's local recoding (``ARXResult.optimizeFast``) anonymizes the records a transformation suppressed as
a data set of their own: the privacy models are cloned onto the subset, so a model's reference (the
sensitive distribution of t-closeness, the table size) is the subset's, and the quality model counts
the subset's rows. Restricting the loaded table keeps every hierarchy code and label count, and
recomputes what depends on the rows.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

import numpy as np

from sqlanon.methods.generalization.evaluator import suppression_budget
from sqlanon.methods.generalization.search.fast import CACHE_SIZE, FastEvaluator
from sqlanon.methods.generalization.search.fast_classes import LeafCounts, RecentClasses
from sqlanon.methods.generalization.search.fast_support import memory_metric
from sqlanon.methods.generalization.search.grouping import Grouping


def restrict(fe: FastEvaluator, rows: np.ndarray, suppression_limit: float,
             metric_options: Mapping[str, Any] | None = None) -> FastEvaluator:
    """``fe`` over the frequency rows ``rows`` (indices) only, with its own suppression limit and the
    metric built with ``metric_options`` (the gs-factor of a local recoding step)."""
    sub = copy.copy(fe)
    rows = np.asarray(rows, dtype=np.int64)
    sub._memo, sub.rolled_up = {}, 0
    sub.row_n = fe.row_n[rows]
    sub.n = int(sub.row_n.sum())
    sub.rows = len(rows)
    sub._row_weights = sub.row_n.astype(np.float64)
    sub._recent = RecentClasses(sub.rows, CACHE_SIZE)
    sub.codes = [[c[rows] for c in per_level] for per_level in fe.codes]
    sub.leaf_index = [leaf[rows] for leaf in fe.leaf_index]
    sub.weighted_all = [[int(np.dot(sub.row_n, counts[codes].astype(np.int64)))
                         for codes, counts in zip(per_level, fe.label_counts[i])]
                        for i, per_level in enumerate(sub.codes)]
    sub._leaves = [LeafCounts(old.keys, np.bincount(leaf, weights=sub.row_n,
                                                     minlength=len(old.keys)).astype(np.int64), old.labels)
                   for old, leaf in zip(fe._leaves, sub.leaf_index)]
    sub.grouping = Grouping(sub.codes, fe.radix, sub.rows)
    sub.sensitive = {}
    for a, (values, nvals, _) in fe.sensitive.items():
        kept = values[rows]
        counts = np.bincount(kept, weights=sub.row_n, minlength=nvals).astype(np.int64)
        sub.sensitive[a] = (kept, nvals, counts)
    sub.limit = float(suppression_limit)
    sub.max_suppressed = suppression_budget(sub.limit, sub.n)
    if fe.metric is not None and fe.metric_name is not None:
        sub.metric = memory_metric(fe.metric_name, fe.metric.monotonic, metric_options)
        sub.metric.prepare_in_memory(sub)
    return sub
