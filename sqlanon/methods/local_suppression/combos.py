"""The frequency table of the quasi-identifier combinations, and frequencies under the wildcard
semantics (a suppressed or missing cell matches any value, as sdcMicro's ``freqCalc``).

A combination is a row of integer codes, one per attribute, ``-1`` for a missing (or suppressed)
value. A *release* is a list of units ``(codes, rows)``: rows that are published with the same codes.
Two units match when, at every attribute, either is ``-1`` or both are equal; a unit's frequency is
the number of rows of the units it matches (itself included), a row with a missing cell counting
``alpha`` instead of 1 (sdcMicro's ``alpha``: 1 by default, 0 ignores keys with missing values).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

MISSING = -1


@dataclass
class Combos:
    """Distinct combinations of the quasi-identifiers with their row counts."""

    codes: np.ndarray
    """(C, d) int64 codes; ``MISSING`` for NULL."""
    counts: np.ndarray
    """(C,) int64 rows per combination."""
    values: list[list[str]]
    """Per attribute, the value of each code."""

    @property
    def rows(self) -> int:
        return int(self.counts.sum())

    @property
    def width(self) -> int:
        return int(self.codes.shape[1])

    @classmethod
    def of(cls, rows: Sequence[Sequence[object]], counts: Sequence[int]) -> Combos:
        """From value tuples (None for NULL) and their counts; codes follow the sorted values."""
        d = len(rows[0]) if rows else 0
        values: list[list[str]] = []
        codes = np.full((len(rows), d), MISSING, dtype=np.int64)
        for j in range(d):
            present = sorted({r[j] for r in rows if r[j] is not None}, key=str)
            index = {v: i for i, v in enumerate(present)}
            values.append([str(v) for v in present])
            for i, r in enumerate(rows):
                if r[j] is not None:
                    codes[i, j] = index[r[j]]
        return cls(codes, np.asarray(counts, dtype=np.int64).reshape(len(rows)), values)


def masked(codes: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """``codes`` with the cells of ``masks`` set to ``MISSING``."""
    out = codes.copy()
    out[masks] = MISSING
    return out


def _patterns(codes: np.ndarray) -> np.ndarray:
    """Bit ``j`` set where attribute ``j`` is missing."""
    bits = (np.int64(1) << np.arange(codes.shape[1], dtype=np.int64))
    return ((codes == MISSING).astype(np.int64) * bits).sum(axis=1)


def weights_of(codes: np.ndarray, rows: np.ndarray, alpha: float = 1.0) -> np.ndarray:
    """What each unit's rows count in others' frequencies: ``alpha`` per row with a missing cell."""
    return rows * np.where((codes == MISSING).any(axis=1), alpha, 1.0)


def wildcard_frequencies(codes: np.ndarray, rows: np.ndarray, alpha: float = 1.0) -> np.ndarray:
    """Each unit's frequency under the wildcard semantics (floats).

    Units are grouped by their pattern of missing cells; for each pair of patterns (A, B) the units
    of B are counted by their values outside A ∪ B and looked up by the units of A, so the cost grows
    with the number of pattern pairs, not with the square of the units.
    """
    n, d = codes.shape
    out = np.zeros(n, dtype=float)
    if n == 0:
        return out
    rows = weights_of(codes, rows, alpha)
    pats = _patterns(codes)
    groups = {int(p): np.flatnonzero(pats == p) for p in np.unique(pats)}
    for a, ia in groups.items():
        for b, ib in groups.items():
            keep = [j for j in range(d) if not ((a | b) >> j) & 1]
            if not keep:
                out[ia] += rows[ib].sum()
                continue
            both = np.concatenate([codes[ia][:, keep], codes[ib][:, keep]])
            _, inverse = np.unique(both, axis=0, return_inverse=True)
            inverse = inverse.reshape(-1)
            totals = np.bincount(inverse[len(ia):], weights=rows[ib], minlength=int(inverse.max()) + 1)
            out[ia] += totals[inverse[:len(ia)]]
    return out


def brute_force_frequencies(codes: np.ndarray, alpha: float = 1.0) -> np.ndarray:
    """Every row's frequency by comparing it with every row (tests' reference)."""
    a = codes[:, None, :]
    b = codes[None, :, :]
    match = ((a == b) | (a == MISSING) | (b == MISSING)).all(axis=2)
    return match @ np.where((codes == MISSING).any(axis=1), alpha, 1.0)


@dataclass
class Suppression:
    """A decision on every row: ``units`` rows of combination ``combo`` are released with the cells of
    ``mask`` suppressed (beyond the combination's own missing cells)."""

    combo: np.ndarray
    """(U,) index of the combination."""
    mask: np.ndarray
    """(U, d) bool cells suppressed."""
    rows: np.ndarray
    """(U,) rows released so."""
    optimal: bool = False
    status: str = ""

    @classmethod
    def per_combination(cls, masks: np.ndarray, counts: np.ndarray) -> Suppression:
        return cls(np.arange(len(counts)), masks.copy(), counts.copy())

    def released(self, combos: Combos) -> np.ndarray:
        return masked(combos.codes[self.combo], self.mask)

    def new_cells(self, combos: Combos) -> np.ndarray:
        """(U, d) cells suppressed that were not missing already."""
        return self.mask & (combos.codes[self.combo] != MISSING)

    def cells_per_attribute(self, combos: Combos) -> np.ndarray:
        return (self.new_cells(combos) * self.rows[:, None]).sum(axis=0)

    def cost(self, combos: Combos, weights: np.ndarray) -> float:
        return float((self.new_cells(combos) * self.rows[:, None] * weights[None, :]).sum())

    def rows_touched(self, combos: Combos) -> int:
        return int(self.rows[self.new_cells(combos).any(axis=1)].sum())

    def achieved_k(self, combos: Combos, alpha: float = 1.0) -> float:
        live = self.rows > 0
        if not live.any():
            return 0.0
        return float(wildcard_frequencies(self.released(combos)[live], self.rows[live], alpha).min())
