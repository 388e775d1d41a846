"""The ``source`` section: a table of the connected database, or a CSV/Parquet file."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from sqlanon.errors import SpecError
from sqlanon.spec.values import choose, name

FILE_FORMATS = ("csv", "parquet")
_SUFFIX_FORMATS = {".csv": "csv", ".tsv": "csv", ".txt": "csv", ".parquet": "parquet", ".pq": "parquet"}


@dataclass(frozen=True)
class Source:
    """Where the data is: a table of the connected database, or a CSV/Parquet file."""

    table: str | None = None
    file: str | None = None
    format: str | None = None
    """``csv`` or ``parquet``; guessed from the file's suffix when not given."""
    database: str | None = None
    """A DuckDB file path or a ``postgresql://`` URL; None = in-memory DuckDB (files only)."""
    schema: str | None = None
    delimiter: str | None = None
    """CSV only: the cell separator (default: detected)."""
    header: bool = True
    """CSV only: whether the first line names the columns."""
    all_text: bool = False
    """CSV only: read every column as text (keeps leading zeros of codes, as ARX reads data)."""

    def __post_init__(self) -> None:
        if bool(self.table) == bool(self.file):
            raise SpecError("give exactly one of `table` (a table of the database) or `file` (a CSV "
                            "or Parquet file)", path="source")
        for key in ("table", "file", "schema", "database"):
            if getattr(self, key) is not None and not isinstance(getattr(self, key), str):
                raise SpecError(f"must be text, got {getattr(self, key)!r}", path=f"source.{key}")
        if self.schema is not None:
            name(self.schema, "source.schema", "a schema name")
        for key in ("header", "all_text"):
            if not isinstance(getattr(self, key), bool):
                raise SpecError(f"must be true or false, got {getattr(self, key)!r}",
                                path=f"source.{key}")
        if self.file is None:
            for key in ("format", "delimiter"):
                if getattr(self, key) is not None:
                    raise SpecError("applies to file sources only", path=f"source.{key}")
            for key, default in (("header", True), ("all_text", False)):
                if getattr(self, key) != default:
                    raise SpecError("applies to file sources only", path=f"source.{key}")
            return
        fmt = self.format
        if fmt is None:
            fmt = _SUFFIX_FORMATS.get(Path(self.file).suffix.lower())
            if fmt is None:
                raise SpecError(f"cannot tell the format of {self.file!r} from its suffix; set "
                                "`format: csv` or `format: parquet`", path="source.format")
        object.__setattr__(self, "format", choose(fmt, FILE_FORMATS, "source.format", "format"))
        if self.delimiter is not None:
            if self.format != "csv":
                raise SpecError("applies to CSV files only", path="source.delimiter")
            if not isinstance(self.delimiter, str) or len(self.delimiter) != 1:
                raise SpecError(f"must be one character, got {self.delimiter!r}",
                                path="source.delimiter")
        if self.format != "csv" and (not self.header or self.all_text):
            raise SpecError("header and all_text apply to CSV files only", path="source")

    @property
    def relation_name(self) -> str:
        """The table name a file source is loaded under (its file name without suffix)."""
        if self.table:
            return self.table
        return Path(self.file or "data").stem
