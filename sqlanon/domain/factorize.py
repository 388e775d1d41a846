"""Values as integer codes, with numpy and pyarrow: the encodings the in-memory search and the
microaggregation build on the rows they pull."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

_TEXT = {str, type(None)}


def factorize(values: np.ndarray | Sequence[object]) -> tuple[np.ndarray, np.ndarray]:
    """Codes 0, 1, ... in order of first appearance (None is a value of its own), and the distinct
    values in code order (the objects given, as an object array)."""
    objects = np.asarray(values, dtype=object)
    if not len(objects):
        return np.zeros(0, dtype=np.int64), objects
    items = objects.tolist()
    if set(map(type, items)) <= _TEXT:
        # text keys: a dict is as fast as Arrow here, and converting Python values to Arrow imports
        # pandas (over half a second), which a command that never needs pandas should not pay
        codes = _first_seen_codes(items)
    else:
        import pyarrow as pa

        try:
            encoded = pa.array(objects, from_pandas=False).dictionary_encode(null_encoding="encode")
            codes = np.asarray(encoded.indices.to_numpy(zero_copy_only=False), dtype=np.int64)
        except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):
            # values of mixed types, which Arrow cannot hold in one array
            codes = _first_seen_codes(items)
    return codes, objects[first_rows(codes)]


def factorize_text(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`factorize` for values known to be text or None (a text column of a query)."""
    objects = np.asarray(values, dtype=object)
    if not len(objects):
        return np.zeros(0, dtype=np.int64), objects
    codes = _first_seen_codes(objects.tolist())
    return codes, objects[first_rows(codes)]


def code_dtype(most: int, *, signed: bool = False) -> np.dtype:
    """The narrowest integer type holding every value in ``0..most``: ``uint8``, then ``int16``,
    ``int32``, ``int64`` (``signed``: never ``uint8``).

    Codes of millions of rows kept in 8 bytes each are most of an in-memory search's memory; a
    hierarchy level has a few labels, and its codes fit one byte.
    """
    if most < 2**8 and not signed:
        return _UINT8
    return _INT16 if most < 2**15 else _INT32 if most < 2**31 else _INT64


_UINT8, _INT16, _INT32, _INT64 = (np.dtype(t) for t in (np.uint8, np.int16, np.int32, np.int64))


def first_rows(codes: np.ndarray) -> np.ndarray:
    """The first row of each code, for codes numbered 0, 1, ... in order of first appearance (a code
    is new where it exceeds all before it)."""
    before = np.maximum.accumulate(codes)
    return np.flatnonzero(np.concatenate(([True], codes[1:] > before[:-1])))


def _first_seen_codes(items: list[object]) -> np.ndarray:
    # the distinct values in order first, then one look-up per value: both loops run in C
    code = dict(zip(dict.fromkeys(items), range(len(items))))
    return np.fromiter(map(code.__getitem__, items), dtype=np.int64, count=len(items))


def group_ids(columns: Sequence[np.ndarray], *, sort_key=None) -> tuple[np.ndarray, np.ndarray]:
    """Per row, the number of its group of equal values over ``columns``, and each group's size.

    Groups are numbered in the order of their values, column by column: each column's distinct values
    ordered by ``sort_key``, or by first appearance without one.
    """
    if not columns or not len(columns[0]):
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    ranks = []
    for column in columns:
        codes, distinct = factorize(column)
        if sort_key is not None:
            order = sorted(range(len(distinct)), key=lambda i: sort_key(distinct[i]))
            rank = np.empty(len(distinct), dtype=np.int64)
            rank[order] = np.arange(len(distinct))
            codes = rank[codes]
        ranks.append(codes)
    _, ids, sizes = np.unique(np.stack(ranks, axis=1), axis=0, return_inverse=True, return_counts=True)
    return ids.reshape(-1).astype(np.int64), sizes
