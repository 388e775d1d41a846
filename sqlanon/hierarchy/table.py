"""Value-per-level hierarchies: ARX's CSV format (one row per leaf, column j = level j)."""

from __future__ import annotations

import csv
import io
import os
import warnings
from collections.abc import Iterable, Sequence
from pathlib import Path

from sqlglot import exp

from sqlanon.compile.sql import as_text, lit
from sqlanon.errors import HierarchyError
from sqlanon.hierarchy.base import Hierarchy, HierarchyTable, SqlanonWarning, check_level

# Above this many leaves a CASE map is slower than a hash join on a lookup table (bench/hierarchy_compile.py).
CASE_MAP_MAX_LEAVES = 64


class TableHierarchy(Hierarchy):
    """A hierarchy given row by row.

    Args:
        rows: ``(leaf, level1, ..., levelH)`` per leaf value, as strings.
        source: where the rows came from, for error messages.
        null_leaf: the leaf label that stands for SQL NULL in the data (``None`` = NULL is not covered).
    """

    def __init__(self, rows: Sequence[Sequence[str | None]], *, source: str = "<inline>",
                 null_leaf: str | None = None) -> None:
        self.source = source
        self.null_leaf = null_leaf
        self._table = HierarchyTable(tuple(tuple(r) for r in rows))
        validate_rows(self._table.rows, source)

    @property
    def height(self) -> int:
        return self._table.height

    def table(self) -> HierarchyTable:
        return self._table

    def needs_lookup(self) -> bool:
        return len(self._table.mapping) > CASE_MAP_MAX_LEAVES

    def key(self, column: exp.Expression) -> exp.Expression:
        """The data value as the string the hierarchy's leaves are compared with."""
        key = as_text(column)
        if self.null_leaf is not None:
            key = exp.Coalesce(this=key, expressions=[lit(self.null_leaf)])
        return key

    def expression(self, column: exp.Expression, level: int) -> exp.Expression:
        check_level(self, level)
        if level == 0:
            return column
        case = exp.Case(this=self.key(column))
        for leaf, row in self._table.mapping.items():
            case = case.when(lit(leaf), lit(row[level]))
        return case

    def lookup_rows(self) -> list[tuple[str | None, ...]]:
        return list(self._table.mapping.values())

    def describe(self) -> str:
        return f"table hierarchy from {self.source} (height {self.height}, {self._table.domain_size} rows)"


def validate_rows(rows: Sequence[Sequence[str | None]], source: str) -> None:
    """Ragged rows, several parents, duplicate leaves, several top values."""
    if not rows:
        raise HierarchyError("the hierarchy has no rows", source=source)
    width = len(rows[0])
    for i, row in enumerate(rows, start=1):
        if len(row) != width:
            raise HierarchyError(
                f"row {i} (leaf {row[0]!r}) has {len(row)} columns but row 1 has {width}: every row "
                "needs one column per level (ragged hierarchy)", source=source)
        for j, cell in enumerate(row):
            if cell is None or (j > 0 and cell == ""):
                raise HierarchyError(f"row {i} (leaf {row[0]!r}) has an empty label at level {j}",
                                     source=source)
    seen: dict[str | None, tuple[str | None, ...]] = {}
    for i, row in enumerate(rows, start=1):
        prev = seen.get(row[0])
        if prev is not None:
            if tuple(prev) != tuple(row):
                raise HierarchyError(
                    f"row {i}: leaf {row[0]!r} is listed twice with different generalizations "
                    f"({list(prev[1:])} and {list(row[1:])})", source=source)
            warnings.warn(f"{source}: row {i}: leaf {row[0]!r} is listed twice with the same "
                          "generalizations; both rows count towards the domain size", SqlanonWarning,
                          stacklevel=3)
        seen[row[0]] = tuple(row)
    for level in range(1, width - 1):
        parents: dict[str | None, str | None] = {}
        for i, row in enumerate(rows, start=1):
            label, parent = row[level], row[level + 1]
            if parents.setdefault(label, parent) != parent:
                raise HierarchyError(
                    f"row {i}: label {label!r} at level {level} has two parents at level {level + 1} "
                    f"({parents[label]!r} and {parent!r}); each value needs exactly one parent",
                    source=source)
    if width > 1:
        tops = {row[-1] for row in rows}
        if len(tops) > 1:
            warnings.warn(f"{source}: the top level has {len(tops)} values, not one; the most general "
                          "transformation will not merge all records", SqlanonWarning, stacklevel=3)


def read_arx_csv(path: str | os.PathLike[str], *, delimiter: str = ";", null_leaf: str | None = None,
                 encoding: str = "utf-8") -> TableHierarchy:
    """Read a hierarchy in ARX's format: one row per value, column j = its generalization at level j."""
    p = Path(path)
    try:
        text = p.read_text(encoding=encoding)
    except FileNotFoundError:
        raise HierarchyError("hierarchy file not found", source=str(p)) from None
    except UnicodeDecodeError as e:
        raise HierarchyError(f"not valid {encoding} text ({e.reason} at byte {e.start})",
                             source=str(p)) from None
    return TableHierarchy(parse_arx_text(text, delimiter=delimiter, source=str(p)), source=str(p),
                          null_leaf=null_leaf)


def parse_arx_text(text: str, *, delimiter: str = ";", source: str = "<text>") -> list[list[str]]:
    text = text.lstrip("\ufeff")
    rows = [
        [cell.strip() for cell in row]
        for row in csv.reader(io.StringIO(text, newline=None), delimiter=delimiter)
    ]
    rows = [r for r in rows if any(c != "" for c in r)]  # blank lines, trailing newlines
    if not rows:
        raise HierarchyError("the hierarchy file is empty", source=source)
    return rows


def write_arx_csv(rows: Iterable[Sequence[str | None]], path: str | os.PathLike[str] | None = None, *,
                  delimiter: str = ";") -> str:
    """Write rows in ARX's format; returns the text (and writes it when ``path`` is given)."""
    buf = io.StringIO()
    writer = csv.writer(buf, delimiter=delimiter, lineterminator="\n")
    for row in rows:
        writer.writerow(["" if c is None else c for c in row])
    text = buf.getvalue()
    if path is not None:
        Path(path).write_text(text, encoding="utf-8")
    return text
