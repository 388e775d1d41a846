"""ARX's utility metrics of a node checked in memory, bit-identical to the SQL implementations.

The sums run over the same terms in the same order as :mod:`sqlanon.domain.metrics.arx` and
:mod:`sqlanon.domain.metrics.entropy`, so a search in memory and a check in SQL report the same doubles.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from sqlanon.domain.metrics.base import trunc10
from sqlanon.domain.metrics.entropy import log2

if TYPE_CHECKING:
    from sqlanon.methods.generalization.search.fast import Classes, FastEvaluator

METRICS = ("loss", "loss_arithmetic", "precision", "height", "discernibility",
           "discernibility_star", "aecs", "entropy")
"""Metrics computed in memory."""

MONOTONIC_VARIANTS = ("entropy", "precision", "discernibility")
"""Metrics with an ARX monotonic variant (option ``monotonic``): its value is this module's lower
bound, the metric with nothing suppressed (MetricMDNUEntropy, MetricMDPrecision, DM*)."""

LEVEL_ONLY = ("loss", "loss_arithmetic", "precision", "height", "entropy")
"""Metrics whose value with nothing suppressed is a sum or product of one term per attribute and
level: it bounds the node and its generalizations before any check."""


def attribute_loss(fe: FastEvaluator, i: int, level: int, weighted: int, suppressed: int) -> float:
    """ARX's loss of attribute ``i`` at ``level``: Σ rows' label leaves (``weighted``) plus
    ``suppressed`` rows counted whole, normalized between the bottom and the top."""
    n, d = fe.n, fe.domain[i]
    a = weighted / d + suppressed
    m = n / d
    return trunc10(max(0.0, (a - m) / (n - m))) if n != m else 0.0


def attribute_term(fe: FastEvaluator, name: str, i: int, level: int) -> float:
    """Attribute ``i``'s term at ``level`` with nothing suppressed, as the metric combines it."""
    d, w = len(fe.qis), fe.weights[i]
    if name == "loss":
        return pow(attribute_loss(fe, i, level, fe.weighted_all[i][level], 0) * w + 1.0,
                   1.0 / d)
    if name == "loss_arithmetic":
        return attribute_loss(fe, i, level, fe.weighted_all[i][level], 0) * w / d
    if name == "precision":
        h = fe.heights[i]
        return w * (fe.n * (level / h if h else 0.0)) / fe.n / d
    if name == "entropy":
        g = fe.entropy_terms[i][level]
        return trunc10(-g if g != 0.0 else g) * w
    return float(w * level)


class NodeMetrics:
    """ARX's metrics of one checked node (same formulas and order as :mod:`sqlanon.domain.metrics.arx` and
    :mod:`sqlanon.domain.metrics.entropy`)."""

    def __init__(self, fe: FastEvaluator, node: tuple[int, ...], c: Classes, keep: np.ndarray,
                 suppressed: int, classes: int) -> None:
        self.fe, self.node, self.c, self.keep = fe, node, c, keep
        self.sizes, self.s, self.classes = c.sizes, suppressed, classes

    def _suppressed(self) -> tuple[np.ndarray, np.ndarray]:
        """Sizes and frequency rows of the members of the suppressed classes (the label of a
        member's row is its class's label, so sums over members equal sums over classes)."""
        rows, sizes = self.c.rows_of(~self.keep)
        return sizes, rows

    def _losses(self, suppressed: int) -> list[float]:
        fe = self.fe
        sizes, rep = self._suppressed() if suppressed else (None, None)
        losses = []
        for i, level in enumerate(self.node):
            weighted = fe.weighted_all[i][level]
            if sizes is not None:  # Σ over suppressed classes of |E| · (file rows with E's label)
                lc = fe.label_counts[i][level]
                weighted -= int(np.dot(sizes, lc[fe.codes[i][level][rep]]))
            losses.append(attribute_loss(fe, i, level, weighted, suppressed))
        return losses

    def _loss(self, name: str, suppressed: int) -> float:
        losses = self._losses(suppressed)
        d = len(losses)
        if name == "loss":
            result = 1.0
            for loss, w in zip(losses, self.fe.weights):
                result *= pow(loss * w + 1.0, 1.0 / d)
            return result - 1.0
        total = 0.0
        for loss, w in zip(losses, self.fe.weights):
            total += loss * w / d
        return total

    def _precision(self, suppressed: int) -> float:
        n = self.fe.n
        u = n - suppressed
        d = len(self.node)
        total = 0.0
        for level, h, w in zip(self.node, self.fe.heights, self.fe.weights):
            ratio = level / h if h else 0.0
            total += w * (u * ratio + suppressed) / n / d
        return total

    def _dm_star(self) -> int:
        return int(np.dot(self.sizes, self.sizes))

    def _entropy(self, suppressed: int, weights: list[float]) -> float:
        """Σ_i w_i · trunc(G_i(L_i) + T_i), T_i over the suppressed rows' labels (counts ascending)."""
        fe, total = self.fe, 0.0
        sizes, rep = self._suppressed() if suppressed else (None, None)
        for i, (level, w) in enumerate(zip(self.node, weights)):
            raw = fe.entropy_terms[i][level]
            if sizes is not None:
                labels = fe.codes[i][level][rep]
                counts = np.bincount(labels, weights=sizes).astype(np.int64)
                t = 0.0
                for count in sorted(int(x) for x in counts if x):
                    t += count * log2(count / suppressed)
                raw = raw + t
            total += trunc10(-raw if raw != 0.0 else raw) * w
        return total

    def metric(self, name: str) -> float:
        n, s = self.fe.n, self.s
        if self.fe.monotonic and name in MONOTONIC_VARIANTS:
            return self.lower_bound(name)  # ARX's monotonic variant: the value with nothing suppressed
        if name == "entropy":
            return self._entropy(s, self.fe.weights)
        if name in ("loss", "loss_arithmetic"):
            return self._loss(name, s)
        if name == "precision":
            return self._precision(s)
        if name == "height":
            return float(sum(w * level for level, w in zip(self.node, self.fe.weights)))
        if name == "discernibility":
            if s:  # anonymous with suppression: kept classes plus n per suppressed row
                kept = self.sizes[self.keep]
                return float(int(np.dot(kept, kept)) + n * s)
            return float(self._dm_star())
        if name == "discernibility_star":
            return float(self._dm_star())
        return n / (self.classes + (1 if s > 0 else 0))

    def lower_bound(self, name: str) -> float:
        """ARX's bounds: the metric with every class kept (Loss, precision), Σ|E|² (DM), n/|classes|."""
        if name in ("loss", "loss_arithmetic"):
            return self._loss(name, 0)
        if name == "precision":
            return self._precision(0)
        if name in ("discernibility", "discernibility_star"):
            return float(self._dm_star())
        if name == "aecs":
            return self.fe.n / len(self.sizes)
        if name == "entropy":
            return self._entropy(0, self.fe.weights)
        return self.metric(name)
