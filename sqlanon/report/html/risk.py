"""Record-risk figures from a class-size histogram (``[{size, classes}]``), computed in Python on
the small histogram: ARX's sample risk distribution bins and the sample risk summary."""

from __future__ import annotations

import bisect
from collections.abc import Mapping, Sequence
from typing import Any

HIGH = (1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 0.01, 0.02, 0.03, 0.04, 0.05, 0.06, 0.07, 0.08, 0.09, 0.1,
        0.125, 0.143, 0.167, 0.2, 0.25, 0.334, 0.5, 1.0)
"""The upper bounds of ARX's risk intervals (``RiskModelSampleRiskDistribution``); the lower bound of
each is the one before it (0 for the first). A risk equal to a bound falls in the interval it closes."""


LABELS = tuple(f"]{lo:g}, {hi:g}]" for lo, hi in zip((0.0, *HIGH[:-1]), HIGH))


def distribution(histogram: Sequence[Mapping[str, int]]) -> list[float]:
    """The fraction of records in each interval of :data:`HIGH` (records at risk 1/size)."""
    n = sum(h["size"] * h["classes"] for h in histogram)
    out = [0.0] * len(HIGH)
    for h in histogram:
        out[bisect.bisect_left(HIGH, 1.0 / h["size"])] += h["size"] * h["classes"] / n if n else 0.0
    return out


def summary(histogram: Sequence[Mapping[str, int]]) -> dict[str, Any]:
    """Highest, average and lowest record risk, records at the highest risk, sample uniques."""
    if not histogram:
        return {}
    n = sum(h["size"] * h["classes"] for h in histogram)
    classes = sum(h["classes"] for h in histogram)
    smallest = min(histogram, key=lambda h: h["size"])
    largest = max(h["size"] for h in histogram)
    uniques = sum(h["classes"] for h in histogram if h["size"] == 1)
    return {"records": n, "classes": classes, "highest risk": 1.0 / smallest["size"],
            "average risk": classes / n, "lowest risk": 1.0 / largest,
            "records at highest risk": smallest["size"] * smallest["classes"],
            "sample uniques": uniques, "sample uniques (fraction)": uniques / n}
