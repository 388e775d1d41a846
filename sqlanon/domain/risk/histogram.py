"""The class-size histogram every risk figure and estimator works on."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property

import numpy as np


@dataclass(frozen=True)
class SizeHistogram:
    """Released classes by size: ``sizes[i]`` records per class, ``counts[i]`` classes of that size.

    Sizes are ascending and distinct, counts positive (ARX's ``RiskModelHistogram`` as two arrays).
    """

    sizes: np.ndarray
    counts: np.ndarray

    @classmethod
    def of(cls, histogram: Mapping[int, int]) -> SizeHistogram:
        items = sorted((int(s), int(c)) for s, c in histogram.items() if int(c) > 0 and int(s) > 0)
        return cls(np.array([s for s, _ in items], dtype=np.int64),
                   np.array([c for _, c in items], dtype=np.int64))

    @classmethod
    def of_class_sizes(cls, class_sizes: np.ndarray) -> SizeHistogram:
        sizes, counts = np.unique(np.asarray(class_sizes, dtype=np.int64), return_counts=True)
        keep = sizes > 0
        return cls(sizes[keep], counts[keep].astype(np.int64))

    @cached_property
    def records(self) -> int:
        return int((self.sizes * self.counts).sum())

    @cached_property
    def classes(self) -> int:
        return int(self.counts.sum())

    @property
    def empty(self) -> bool:
        return len(self.sizes) == 0

    def classes_of_size(self, size: int) -> int:
        hit = np.searchsorted(self.sizes, size)
        return int(self.counts[hit]) if hit < len(self.sizes) and self.sizes[hit] == size else 0

    def as_dict(self) -> dict[int, int]:
        return {int(s): int(c) for s, c in zip(self.sizes, self.counts, strict=True)}
