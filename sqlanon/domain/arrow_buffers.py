"""Arrow arrays to numpy and back through their buffers.

pyarrow's own conversions between Python or numpy values and Arrow (``to_numpy``, ``pa.array``,
``pa.scalar``) import pandas, over half a second that a command which never needs pandas should not
pay; reading and wrapping the buffers costs nothing and imports nothing.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa


def integers(array: pa.Array) -> np.ndarray:
    """The values of an Arrow integer array without NULLs, as a numpy view."""
    if array.null_count:
        raise ValueError("an integer array with NULLs has no plain numpy view")
    kind = "i" if pa.types.is_signed_integer(array.type) else "u"
    dtype = np.dtype(f"{kind}{array.type.bit_width // 8}")
    return np.frombuffer(array.buffers()[1], dtype=dtype, count=len(array) + array.offset)[array.offset:]


def int64_array(values: np.ndarray) -> pa.Array:
    """A numpy integer array as an Arrow int64 array sharing its memory."""
    values = np.ascontiguousarray(values, dtype=np.int64)
    data = pa.foreign_buffer(values.ctypes.data, values.nbytes, base=values)
    return pa.Array.from_buffers(pa.int64(), len(values), [None, data])


def boolean_array(values: np.ndarray) -> pa.Array:
    """A numpy boolean array as an Arrow boolean array (bits packed, no NULLs)."""
    bits = np.packbits(np.asarray(values, dtype=bool), bitorder="little")
    return pa.Array.from_buffers(pa.bool_(), len(values), [None, pa.py_buffer(bits)])


def text_lengths(array: pa.Array) -> np.ndarray:
    """The length in bytes of each value of an Arrow string array (0 for NULL)."""
    offset_type = np.int64 if pa.types.is_large_string(array.type) else np.int32
    offsets = np.frombuffer(array.buffers()[1], dtype=offset_type, count=len(array) + array.offset + 1)
    return np.diff(offsets[array.offset:])


def compute(function: str, *arguments: pa.Array | pa.ChunkedArray, encode_nulls: bool = False
            ) -> pa.Array | pa.ChunkedArray:
    """Arrow's compute function ``function`` on ``arguments`` (array methods such as
    ``dictionary_encode`` and ``take`` import :mod:`pyarrow.compute`, whose import builds a Python
    wrapper for each of its hundreds of functions: some 45 ms, more than the calls made here).

    ``encode_nulls``: ``dictionary_encode`` gives NULL a code of its own, in order of appearance.
    """
    try:
        from pyarrow import _compute as arrow_compute
    except ImportError:  # a pyarrow that moved it: the public module has the same names
        from pyarrow import compute as arrow_compute
    options = arrow_compute.DictionaryEncodeOptions("encode") if encode_nulls else None
    return arrow_compute.call_function(function, list(arguments), options)
