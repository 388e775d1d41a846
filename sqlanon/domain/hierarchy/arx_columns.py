"""ARX hierarchy text parsed column by column with pyarrow's CSV reader, for large files.

The reader gives the rows :func:`~sqlanon.domain.hierarchy.arx_csv.parse_arx_text` gives, as one
Arrow string array per level, without a Python object per cell. It declines (returns None) whatever it
might read differently from Python's ``csv`` module, which then reads the file and raises its errors:
a quote anywhere but around a whole cell, ragged rows, a row of empty cells (blank for that reader), a
NUL character, no rows.
"""

from __future__ import annotations

import re

import numpy as np
import pyarrow as pa
import pyarrow.csv as pa_csv

from sqlanon.domain.arrow_buffers import text_lengths


def parse_arx_columns(text: str, *, delimiter: str = ";") -> list[pa.Array] | None:
    """One string array per column of an ARX hierarchy text (byte order mark removed, delimiter
    checked), empty lines dropped; None when the text needs the row-by-row reader.

    >>> [c.to_pylist() for c in parse_arx_columns('1;"1;5";*\\r\\n\\r\\n2;1-5;*\\n')]
    [['1', '2'], ['1;5', '1-5'], ['*', '*']]
    """
    if "\0" in text or ('"' in text and not _quotes_around_cells(text, delimiter)):
        return None
    first_line = text.lstrip("\r\n").split("\n", 1)[0]
    width_bound = first_line.count(delimiter) + 1  # quoted delimiters only make it larger
    try:
        table = pa_csv.read_csv(
            pa.py_buffer(text.encode("utf-8")),
            read_options=pa_csv.ReadOptions(autogenerate_column_names=True, use_threads=False),
            parse_options=pa_csv.ParseOptions(delimiter=delimiter, quote_char='"', double_quote=True,
                                              escape_char=False, newlines_in_values=True,
                                              ignore_empty_lines=True),
            convert_options=pa_csv.ConvertOptions(
                column_types={f"f{i}": pa.string() for i in range(width_bound)}, null_values=[],
                strings_can_be_null=False, quoted_strings_can_be_null=False))
    except pa.ArrowInvalid:  # ragged rows, mostly: the row-by-row reader names the row
        return None
    columns = [c.chunk(0) if c.num_chunks == 1 else c.combine_chunks() for c in table.columns]
    if not columns or not all(pa.types.is_string(c.type) for c in columns):
        return None
    blank = np.logical_and.reduce([text_lengths(c) == 0 for c in columns])
    if not len(blank) or blank.any():
        return None
    return columns


def _quotes_around_cells(text: str, delimiter: str) -> bool:
    """Whether every quote of the text opens or closes a quoted cell (doubled inside one): Python's
    ``csv`` module and pyarrow read such text alike."""
    return '"' not in _quoted_cells(delimiter).sub("", text)


def _quoted_cells(delimiter: str) -> re.Pattern[str]:
    d = re.escape(delimiter)
    return re.compile(rf'(?:\A|(?<=[{d}\r\n]))"(?:[^"]|"")*"(?=[{d}\r\n]|\Z)')
