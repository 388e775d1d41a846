"""Equivalence classes of lattice nodes over integer-coded rows, with partial keys kept for reuse.

A node's classes are the distinct combinations of its generalized codes. The quasi-identifiers are cut
into blocks of consecutive attributes whose level combinations are few (at most
:data:`BLOCK_COMBINATIONS`); the class numbers of a block at given levels are computed once and kept
(up to :data:`BLOCK_CACHE_BYTES`), so a node costs a few combinations of cached block keys instead of
one pass per attribute. Searches revisit the same block levels many times: on Adult grown to 10M rows
(1.56M frequency rows, 105 nodes) grouping took 25 ms a node with one pass per attribute and 12 ms with
blocks (bench/README.md).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence

import numpy as np

from sqlanon.domain.factorize import code_dtype

BLOCK_COMBINATIONS = 48
"""Most level combinations in one block (the block keys a search may keep)."""

COUNT_AT_END = 16
"""A key whose space is at most this many times its length is numbered by counting, not sorting:
both number the values by rank, and one pass over so small a space is cheaper than a sort."""

COUNT_MAX = 2**22
"""The largest space numbered by counting at the end (its flags take 4 MB)."""

BLOCK_CACHE_BYTES = 512 * 2**20
"""Memory for kept block keys; the least recently used are dropped beyond it."""


def dense(key: np.ndarray, space: int) -> tuple[np.ndarray, int]:
    """Number the distinct values of ``key`` (all in ``0..space-1``) by rank: ``0..count-1``, in the
    narrowest signed type holding ``space`` (:func:`~sqlanon.domain.factorize.code_dtype`)."""
    if not space:
        return key, 0
    if space <= len(key):  # many rows a value: counting them is the cheaper pass
        present = np.bincount(key, minlength=space) > 0
    else:  # a sparse space: flags are faster to set than counts, and take an eighth of their memory
        present = np.zeros(space, dtype=bool)
        present[key] = True
    ids: np.ndarray = np.cumsum(present, dtype=np.int32 if space < 2**31 else np.int64)
    ids -= 1
    narrow = code_dtype(space, signed=True)  # numpy sums booleans into int32 the fastest
    return (ids if ids.dtype == narrow else ids.astype(narrow))[key], int(ids[-1]) + 1


def combine(parts: Sequence[tuple[np.ndarray, int]], length: int, space_limit: int = 0
            ) -> tuple[np.ndarray, int]:
    """Class numbers (``0..count-1``, by rank of the mixed-radix key) of rows with the given codes.

    ``parts`` holds per attribute (or block) the rows' codes and their radix.
    """
    key, space, numbered = mixed_key(parts, length, space_limit)
    return (key, space) if numbered else dense(key, space)


def mixed_key(parts: Sequence[tuple[np.ndarray, int]], length: int, space_limit: int = 0
              ) -> tuple[np.ndarray, int, bool]:
    """The rows' mixed-radix key: ``(key, space, numbered)``; every value is below ``space``, and
    ``numbered`` says the values are already ``0..space-1`` with none missing.

    Keys are built in place; whenever the next factor would make the key space larger than twice the
    rows (or ``space_limit``), the key so far is re-numbered densely by counting; once even a dense
    key times the next radix exceeds that, the key grows in 64 bits and is sorted once, at the end or
    before it would overflow. Ranks are kept throughout: the key orders rows as their codes do.
    """
    limit = max(2 * length + 64, space_limit)
    key: np.ndarray | None = None
    space, numbered = 1, False
    for codes, radix in parts:
        if radix == 1:
            continue
        if key is None:
            key, space, owned = codes, radix, False
            continue
        if space * radix > limit and space <= limit and not numbered:
            key, space = dense(key, space)  # counting keeps the space small
            owned = True
        elif space >= 2**62 // radix:  # the key would overflow: number it by sorting
            key, space = _sorted(key)
            owned = True
        wide = np.int32 if space * radix < 2**31 else np.int64  # half the memory traffic when it fits
        key = key.astype(wide, copy=not owned or key.dtype != wide)
        owned = True
        np.multiply(key, radix, out=key)
        np.add(key, codes, out=key)
        space *= radix
        numbered = False
    if key is None:
        return np.zeros(length, dtype=np.int32), 1 if length else 0, True
    if space > limit:  # number once at the end: by counting when the space is at most a few
        # times the keys (a pass over it costs less than sorting them), else by sorting
        key, space = dense(key, space) if space <= min(COUNT_AT_END * length, COUNT_MAX) \
            else _sorted(key)
        numbered = True
    return key, space, numbered


def _sorted(key: np.ndarray) -> tuple[np.ndarray, int]:
    """Number the distinct values of ``key`` by rank, by sorting (the narrowest signed type)."""
    uniq, inv = np.unique(key, return_inverse=True)
    return inv.reshape(-1).astype(code_dtype(len(uniq), signed=True), copy=False), len(uniq)


def blocks_of(heights: Sequence[int], most: int = BLOCK_COMBINATIONS) -> list[list[int]]:
    """Consecutive attributes grouped while their level combinations stay within ``most``."""
    blocks: list[list[int]] = []
    current: list[int] = []
    product = 1
    for i, h in enumerate(heights):
        if current and product * (h + 1) > most:
            blocks.append(current)
            current, product = [], 1
        current.append(i)
        product *= h + 1
    if current:
        blocks.append(current)
    return blocks


class Grouping:
    """Group rows, or representatives of a finer node's classes, into a node's classes.

    Args:
        codes: per attribute and level, every row's label code (any integer type).
        radix: per attribute and level, the number of labels.
        rows: the number of rows.
    """

    def __init__(self, codes: list[list[np.ndarray]], radix: list[list[int]], rows: int) -> None:
        self.codes, self.radix, self.rows = codes, radix, rows
        self.blocks = blocks_of([len(r) - 1 for r in radix])
        self._kept: OrderedDict[tuple[int, tuple[int, ...]], tuple[np.ndarray, int]] = OrderedDict()
        self._bytes = 0

    def _block(self, b: int, levels: tuple[int, ...]) -> tuple[np.ndarray, int]:
        key = (b, levels)
        found = self._kept.get(key)
        if found is not None:
            self._kept.move_to_end(key)
            return found
        block = self.blocks[b]
        found = combine([(self.codes[i][lv], self.radix[i][lv]) for i, lv in zip(block, levels)],
                        self.rows)
        self._kept[key] = found
        self._bytes += found[0].nbytes
        while self._bytes > BLOCK_CACHE_BYTES and len(self._kept) > 1:
            _, (dropped, _) = self._kept.popitem(last=False)
            self._bytes -= dropped.nbytes
        return found

    def keyed(self, node: Sequence[int], rep: np.ndarray | None = None
              ) -> tuple[np.ndarray, int, bool]:
        """:func:`mixed_key` of the rows at ``node``; with ``rep``, of the rows ``rep`` (one
        representative per class of a finer node) instead of every row."""
        parts = []
        for b, block in enumerate(self.blocks):
            codes, radix = self._block(b, tuple(node[i] for i in block))
            parts.append((codes if rep is None else codes[rep], radix))
        # representatives keep the space of all rows: their codes number labels among all rows
        return mixed_key(parts, self.rows if rep is None else len(rep), 2 * self.rows + 64)

    def group(self, node: Sequence[int], rep: np.ndarray | None = None) -> tuple[np.ndarray, int]:
        """``(class of each row, number of classes)`` at ``node`` (or of the rows ``rep``)."""
        key, space, numbered = self.keyed(node, rep)
        return (key, space) if numbered else dense(key, space)
