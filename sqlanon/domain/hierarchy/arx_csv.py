"""ARX's hierarchy file format: one row per leaf value, column j = its generalization at level j.

The delimiter is ``;`` by default, there is no header, cells may be quoted with ``"`` (a quote inside
a quoted cell is doubled). Reading accepts a UTF-8 byte order mark, CRLF or LF line endings and blank
lines (skipped); cells are kept exactly as written, as ARX compares them.
"""

from __future__ import annotations

import csv
import io
import os
from collections.abc import Iterable, Sequence
from pathlib import Path

from sqlanon.errors import HierarchyError


def check_delimiter(delimiter: object, source: str | None = None) -> str:
    """The delimiter, or a :class:`HierarchyError` unless it is one character other than ``"``."""
    if not isinstance(delimiter, str) or len(delimiter) != 1 or delimiter in '"\r\n':
        raise HierarchyError(f"the delimiter must be one character other than a quote or a line "
                             f"break, got {delimiter!r}", source=source)
    return delimiter


def parse_arx_text(text: str, *, delimiter: str = ";", source: str = "<text>") -> list[list[str]]:
    """Rows of an ARX hierarchy file's text, blank lines dropped.

    >>> parse_arx_text('\\ufeff1;"1-5";*\\r\\n2;1-5;*\\r\\n\\r\\n')
    [['1', '1-5', '*'], ['2', '1-5', '*']]
    """
    check_delimiter(delimiter, source)
    text = text[1:] if text.startswith("\ufeff") else text
    try:
        rows = list(csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True))
    except csv.Error as e:
        raise HierarchyError(f"not a valid CSV file: {e}", source=source) from None
    rows = [r for r in rows if any(r)]  # cells are text: a row of empty cells is blank
    if not rows:
        raise HierarchyError("the hierarchy file is empty", source=source)
    return rows


def read_arx_text(path: str | os.PathLike[str], *, encoding: str = "utf-8") -> str:
    """The text of an ARX hierarchy file without its byte order mark, with errors naming the file."""
    p = Path(path)
    try:
        text = p.read_text(encoding=encoding)
    except FileNotFoundError:
        raise HierarchyError("hierarchy file not found", source=str(p)) from None
    except IsADirectoryError:
        raise HierarchyError("is a directory, not a hierarchy file", source=str(p)) from None
    except UnicodeDecodeError as e:
        raise HierarchyError(f"not valid {encoding} text ({e.reason} at byte {e.start})",
                             source=str(p)) from None
    except OSError as e:  # permissions, a name too long, ...
        raise HierarchyError(f"cannot read the hierarchy file ({e.strerror or type(e).__name__})",
                             source=str(p)) from None
    return text[1:] if text.startswith("\ufeff") else text


def format_arx_csv(rows: Iterable[Sequence[str | None]], *, delimiter: str = ";",
                   line_terminator: str = "\n", null_label: str | None = None) -> str:
    """Rows as ARX hierarchy text (cells quoted only when they hold the delimiter, a quote or a break).

    Rows whose leaf is NULL are written with ``null_label`` in place of NULL, or left out when it is
    None (ARX has no NULL; name the label the spec's ``null:`` key then maps NULL to).

    >>> format_arx_csv([("a;b", "x", "*"), (None, None, "*")], null_label="NULL")
    '"a;b";x;*\\nNULL;NULL;*\\n'
    """
    check_delimiter(delimiter)
    buf = io.StringIO()
    writer = csv.writer(buf, delimiter=delimiter, lineterminator=line_terminator)
    for row in rows:
        if row and row[0] is None and null_label is None:
            continue
        writer.writerow([null_label if c is None else c for c in row])
    return buf.getvalue()
