"""Value-per-level hierarchies: ARX's CSV format (one row per leaf, column j = level j)."""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from sqlglot import exp

from sqlanon.domain.hierarchy.arx_csv import check_delimiter, format_arx_csv, parse_arx_text, read_arx_text
from sqlanon.domain.hierarchy.base import Hierarchy, HierarchyTable, SqlanonWarning, check_level
from sqlanon.errors import HierarchyError
from sqlanon.sql.nodes import as_text, lit

if TYPE_CHECKING:
    import pyarrow as pa

# Above this many leaves a CASE map is slower than a hash join on a lookup table: on DuckDB, 10M rows,
# CASE/join time is 0.79 at 8 leaves and 1.30 at 32 (bench/hierarchy_compile.py).
CASE_MAP_MAX_LEAVES = 16

# From this size a file is read column by column with pyarrow (arx_columns.py): importing pyarrow
# costs about what reading 15,000 rows row by row does.
COLUMNS_READ_MIN_CHARS = 1 << 18


class TableHierarchy(Hierarchy):
    """A hierarchy given row by row.

    Args:
        rows: ``(leaf, level1, ..., levelH)`` per leaf value, as strings.
        source: where the rows came from, for error messages.
        null_leaf: the leaf label that stands for SQL NULL in the data (``None`` = NULL is not covered).

    Raises:
        HierarchyError: ragged rows, empty labels, a leaf listed twice with different
            generalizations, or a label with two parents.

    Example:
        >>> h = TableHierarchy([["a", "x", "*"], ["b", "x", "*"]])
        >>> h.height, h.table().domain_size
        (2, 2)
    """

    def __init__(self, rows: Sequence[Sequence[str | None]], *, source: str = "<inline>",
                 null_leaf: str | None = None) -> None:
        self.source = source
        self.null_leaf = null_leaf
        self._table = HierarchyTable(tuple(map(tuple, rows)))
        validate_rows(self._table.rows, source)
        self._check_null_leaf()

    @classmethod
    def from_columns(cls, columns: Sequence[pa.Array], *, source: str = "<inline>",
                     null_leaf: str | None = None) -> TableHierarchy:
        """The hierarchy of one Arrow string array per level (leaf first; no NULLs, equal lengths),
        checked as the rows would be, without walking them unless a check fails."""
        from sqlanon.domain.hierarchy.arrow_table import ArrowHierarchyTable

        h = cls.__new__(cls)
        h.source, h.null_leaf = source, null_leaf
        h._table = table_ = ArrowHierarchyTable(columns)
        if table_.passes_checks():
            _warn_on_several_tops(len(table_.level_codes(table_.height)[1]), source, stacklevel=3)
        else:  # the row-by-row checks name the first offending row
            validate_rows(table_.rows, source)
        h._check_null_leaf()
        return h

    def _check_null_leaf(self) -> None:
        if self.null_leaf is not None and self.null_leaf not in self._table.leaves:
            raise HierarchyError(f"the NULL label {self.null_leaf!r} is not a leaf of the hierarchy; "
                                 "add a row for it", source=self.source)

    @property
    def height(self) -> int:
        return self._table.height

    def table(self) -> HierarchyTable:
        return self._table

    def needs_lookup(self) -> bool:
        return self._table.leaf_count > CASE_MAP_MAX_LEAVES

    def key(self, column: exp.Expression) -> exp.Expression:
        """The data value as the string the hierarchy's leaves are compared with (NULL mapped)."""
        key = as_text(column)
        if self.null_leaf is not None:
            key = exp.Coalesce(this=key, expressions=[lit(self.null_leaf)])
        return key

    def expression(self, column: exp.Expression, level: int) -> exp.Expression:
        check_level(self, level)
        if level == 0:
            return column
        # built in one go: chaining Case.when copies the whole CASE each time (quadratic)
        return exp.Case(this=self.key(column), ifs=[
            exp.If(this=lit(leaf), true=lit(row[level])) for leaf, row in self._table.mapping.items()])

    def class_key(self, column: exp.Expression, level: int) -> exp.Expression:
        """The label's number at ``level`` (labels numbered in order of first listing), NULL for a
        value no leaf: an integer CASE instead of a text one (or a join)."""
        check_level(self, level)
        if level == 0:
            return column
        codes: dict[str | None, int] = {}
        return exp.Case(this=self.key(column), ifs=[
            exp.If(this=lit(leaf), true=lit(codes.setdefault(row[level], len(codes))))
            for leaf, row in self._table.mapping.items()])

    def single_label(self, level: int) -> str | None:
        """The label every leaf generalizes to at ``level`` when the level has only one (its root,
        mostly), else None."""
        labels = self._table.level_codes(level)[1]
        return labels[0] if len(labels) == 1 else None

    def lookup_rows(self) -> list[tuple[str | None, ...]]:
        """One row per distinct leaf (the last listing wins), for a lookup table."""
        return list(self._table.mapping.values())

    def describe(self) -> str:
        return f"table hierarchy from {self.source} (height {self.height}, {self._table.domain_size} rows)"


def validate_rows(rows: Sequence[Sequence[str | None]], source: str) -> None:
    """Check ragged rows, empty labels, duplicate leaves, several parents and several top values.

    A leaf listed twice with the same generalizations and several top values are accepted with a
    :class:`SqlanonWarning`; both rows of a duplicate count towards |D| (as in ARX).
    """
    if not rows:
        raise HierarchyError("the hierarchy has no rows", source=source)
    width = len(rows[0])
    # Each check first runs over whole columns (a set, a membership test); only a table that fails
    # one is walked row by row, to name the first offending row as the message says.
    columns = list(zip(*rows)) if len(set(map(len, rows))) == 1 else None
    if columns is None or not all(set(map(type, c)) == {str} and (j == 0 or "" not in c)
                                  for j, c in enumerate(columns)):
        _check_cells(rows, width, source)
    assert columns is not None  # ragged rows raised above
    if len(set(columns[0])) != len(rows):
        _check_duplicates(rows, source)
    if any(len(set(zip(columns[level], columns[level + 1]))) != len(set(columns[level]))
           for level in range(1, width - 1)):
        _check_parents(rows, width, source)
    if width > 1:
        _warn_on_several_tops(len(set(columns[-1])), source, stacklevel=4)


def _warn_on_several_tops(tops: int, source: str, stacklevel: int) -> None:
    if tops > 1:
        warnings.warn(f"{source}: the top level has {tops} values, not one; the most general "
                      "transformation will not merge all records", SqlanonWarning, stacklevel=stacklevel)


def _check_cells(rows: Sequence[Sequence[str | None]], width: int, source: str) -> None:
    for i, row in enumerate(rows, start=1):
        if len(row) != width:
            raise HierarchyError(
                f"row {i} (leaf {row[0]!r}) has {len(row)} columns but row 1 has {width}: every row "
                "needs one column per level (ragged hierarchy)", source=source)
        for j, cell in enumerate(row):
            if not isinstance(cell, str) or (j > 0 and cell == ""):
                raise HierarchyError(f"row {i} (leaf {row[0]!r}) has an empty label at level {j}",
                                     source=source)


def _check_duplicates(rows: Sequence[Sequence[str | None]], source: str) -> None:
    seen: dict[str | None, tuple[int, tuple[str | None, ...]]] = {}
    for i, row in enumerate(rows, start=1):
        if row[0] in seen:
            first, prev = seen[row[0]]
            if prev != tuple(row):
                raise HierarchyError(
                    f"rows {first} and {i}: leaf {row[0]!r} is listed twice with different "
                    f"generalizations ({list(prev[1:])} and {list(row[1:])})", source=source)
            warnings.warn(f"{source}: rows {first} and {i}: leaf {row[0]!r} is listed twice with the "
                          "same generalizations; both rows count towards the domain size",
                          SqlanonWarning, stacklevel=4)
        else:
            seen[row[0]] = (i, tuple(row))


def _check_parents(rows: Sequence[Sequence[str | None]], width: int, source: str) -> None:
    for level in range(1, width - 1):
        parents: dict[str | None, tuple[int, str | None]] = {}
        for i, row in enumerate(rows, start=1):
            label, parent = row[level], row[level + 1]
            first, known = parents.setdefault(label, (i, parent))
            if known != parent:
                raise HierarchyError(
                    f"rows {first} and {i}: label {label!r} at level {level} has two parents at level "
                    f"{level + 1} ({known!r} and {parent!r}); each value needs exactly one parent",
                    source=source)


def read_arx_csv(path: str | os.PathLike[str], *, delimiter: str = ";", null_leaf: str | None = None,
                 encoding: str = "utf-8") -> TableHierarchy:
    """Read a hierarchy in ARX's format: one row per value, column j = its generalization at level j.

    Args:
        path: the file.
        delimiter: the cell separator (``;`` as ARX writes it).
        null_leaf: the leaf label that stands for NULL in the data.
        encoding: the file's text encoding.

    Raises:
        HierarchyError: the file is missing, empty, not valid CSV or not a proper hierarchy; the
            message names the file.
    """
    source = str(Path(path))
    text = read_arx_text(path, encoding=encoding)
    check_delimiter(delimiter, source)
    if len(text) >= COLUMNS_READ_MIN_CHARS:
        from sqlanon.domain.hierarchy.arx_columns import parse_arx_columns

        columns = parse_arx_columns(text, delimiter=delimiter)
        if columns is not None:
            return TableHierarchy.from_columns(columns, source=source, null_leaf=null_leaf)
    rows = parse_arx_text(text, delimiter=delimiter, source=source)
    return TableHierarchy(rows, source=source, null_leaf=null_leaf)


def write_arx_csv(rows: Iterable[Sequence[str | None]] | HierarchyTable | TableHierarchy,
                  path: str | os.PathLike[str] | None = None, *, delimiter: str = ";",
                  line_terminator: str = "\n", null_label: str | None = None) -> str:
    """Write rows in ARX's format; returns the text (and writes it when ``path`` is given).

    Builders have no table of their own: materialize them over values first
    (:func:`sqlanon.domain.hierarchy.materialize.materialize`).
    """
    if isinstance(rows, TableHierarchy):
        rows = rows.table()
    if isinstance(rows, HierarchyTable):
        rows = rows.rows
    text = format_arx_csv(rows, delimiter=delimiter, line_terminator=line_terminator,
                          null_label=null_label)
    if path is not None:
        Path(path).write_text(text, encoding="utf-8", newline="")
    return text


__all__ = ["CASE_MAP_MAX_LEAVES", "TableHierarchy", "parse_arx_text", "read_arx_csv", "validate_rows",
           "write_arx_csv"]
