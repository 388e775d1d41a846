"""Persons who fit no class at a node (privacy unit rule ``one_class``), in memory.

Each frequency row carries, per ``one_class`` attribute, the lowest level from which its person's
rows generalize to one value (:meth:`~sqlanon.compile.persons.Persons.fit_level`). At a node the rows
whose person does not fit are moved to one class of their own that no model keeps: they are
suppressed, count against the suppression limit and, for the metrics, are suppressed rows.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def unfit_rows(fit_levels: Sequence[tuple[int, np.ndarray]], node: Sequence[int]) -> np.ndarray | None:
    """Per frequency row, whether its person fits no class at ``node`` (None: every person fits)."""
    if not fit_levels:
        return None
    unfit = np.zeros(len(fit_levels[0][1]), dtype=bool)
    for qi, levels in fit_levels:
        unfit |= levels > node[qi]
    return unfit if unfit.any() else None


def left_out(inv: np.ndarray, k: int, unfit: np.ndarray | None) -> tuple[np.ndarray, int, int | None]:
    """The classes with the unfit rows moved to a class of their own, numbered last; classes left
    empty are dropped. Returns ``(inv, k, that class or None)``."""
    if unfit is None:
        return inv, k, None
    moved = np.where(unfit, k, inv)
    present, renumbered = np.unique(moved, return_inverse=True)
    return renumbered.astype(inv.dtype, copy=False), len(present), len(present) - 1
