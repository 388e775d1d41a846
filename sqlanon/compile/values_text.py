"""A large hierarchy held as Arrow columns, as the pre-rendered rows of an inline VALUES relation.

The rows are assembled column by column in Arrow: each column's distinct values are quoted once in
Python (:class:`~sqlanon.sql.nodes.TextQuoter`), and Arrow takes, joins and concatenates them, so
no Python object is made per row. The text is the same as :func:`~sqlanon.sql.nodes.values_table`
writes from rows.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from sqlanon.domain.arrow_buffers import compute, text_lengths
from sqlanon.sql.nodes import TextQuoter


def strings(values: list[str]) -> pa.Array:
    """Python strings as an Arrow string array, built from its buffers (``pa.array`` imports pandas)."""
    encoded = [v.encode("utf-8") for v in values]
    offsets = np.zeros(len(encoded) + 1, dtype=np.int32)
    np.cumsum([len(b) for b in encoded], out=offsets[1:])
    return pa.Array.from_buffers(pa.string(), len(encoded),
                                 [None, pa.py_buffer(offsets), pa.py_buffer(b"".join(encoded))])


def repeated(text: str, n: int) -> pa.Array:
    """``text`` ``n`` times, as an Arrow string array."""
    raw = text.encode("utf-8")
    offsets = np.arange(0, len(raw) * (n + 1), max(len(raw), 1), dtype=np.int32)[:n + 1] \
        if raw else np.zeros(n + 1, dtype=np.int32)
    return pa.Array.from_buffers(pa.string(), n, [None, pa.py_buffer(offsets), pa.py_buffer(raw * n)])


def quoted_column(column: pa.Array, quoter: TextQuoter) -> pa.Array | None:
    """Each cell as the dialect writes it; None when a cell cannot be written directly."""
    encoded = compute("dictionary_encode", column, encode_nulls=True)  # NULL: an entry of its own
    dictionary = encoded.dictionary
    if _written_as_is(dictionary, quoter):
        n = len(dictionary)
        quoted = compute("binary_join_element_wise", repeated(quoter.start, n), dictionary,
                         repeated(quoter.end, n), repeated("", n))
        quoted = compute("coalesce", quoted, repeated(quoter.null, n))
        return compute("take", quoted, encoded.indices)
    texts = []
    for value in dictionary.to_pylist():
        q = quoter.quote(value)
        if q is None:
            return None
        texts.append(q)
    return compute("take", strings(texts), encoded.indices)


def _written_as_is(values: pa.Array, quoter: TextQuoter) -> bool:
    """Whether every value is text holding no character the dialect's generator rewrites (then
    quoting is only the quote characters around it), checked on the values' bytes at once."""
    if not pa.types.is_string(values.type):
        return False
    offsets = np.frombuffer(values.buffers()[1], dtype=np.int32, count=len(values) + values.offset + 1)
    data = values.buffers()[2]
    raw = b"" if data is None else data.to_pybytes()[offsets[values.offset]:offsets[-1]]
    return not any(ch.encode("utf-8") in raw for ch in quoter.escaped())


def arrow_rows_text(data: pa.Table, dialect: str) -> str | None:
    """``('a', 'b'), ('c', NULL), ...`` for the rows of ``data``; None where the dialect or a cell
    needs the generator (see :class:`~sqlanon.sql.nodes.TextQuoter`)."""
    quoter = TextQuoter.for_dialect(dialect)
    if quoter is None or not data.num_rows:
        return None
    columns = []
    for column in data.columns:
        quoted = quoted_column(column.combine_chunks(), quoter)
        if quoted is None:
            return None
        columns.append(quoted)
    n = data.num_rows
    cells = compute("binary_join_element_wise", *columns, repeated(", ", n)) if len(columns) > 1 \
        else columns[0]
    rows = compute("binary_join_element_wise", repeated("(", n), cells, repeated(")", n), repeated("", n))
    if int(text_lengths(rows).sum()) + 2 * n >= 2**31:  # more than one Arrow string can hold
        return None
    listed = pa.ListArray.from_arrays(pa.Array.from_buffers(
        pa.int32(), 2, [None, pa.py_buffer(np.array([0, n], dtype=np.int32))]), rows)
    return compute("binary_join", listed, repeated(", ", 1)).to_pylist()[0]
