"""The ``output`` section: where the result goes and in which SQL dialect."""

from __future__ import annotations

from dataclasses import dataclass

from sqlanon.errors import SpecError, did_you_mean
from sqlanon.spec.values import choose

OUTPUT_MODES = ("table", "view", "in_place", "sql", "none")


@dataclass(frozen=True)
class Output:
    """Where the result goes and in which SQL dialect."""

    mode: str = "table"
    name: str | None = None
    dialect: str = "duckdb"
    path: str | None = None
    database: str | None = None
    """Where outputs of a file source land (a DuckDB file); never the input's folder by default."""
    replace: bool = False
    """Overwrite an existing output table or view (modes ``table`` and ``view`` refuse otherwise)."""

    def __post_init__(self) -> None:
        from sqlanon.errors import UnsupportedError
        from sqlanon.sql.dialects import PROFILES, profile

        choose(self.mode, OUTPUT_MODES, "output.mode", "mode")
        try:
            object.__setattr__(self, "dialect", profile(str(self.dialect)).name)
        except UnsupportedError:
            raise SpecError(f"unknown dialect {self.dialect!r}; use one of {', '.join(PROFILES)}."
                            + did_you_mean(str(self.dialect), PROFILES), path="output.dialect") from None
        for name in ("name", "path", "database"):
            if getattr(self, name) is not None and not isinstance(getattr(self, name), str):
                raise SpecError(f"must be text, got {getattr(self, name)!r}", path=f"output.{name}")
        if self.name is not None and not self.name.strip():
            raise SpecError(f"must not be empty, got {self.name!r}; leave it out for the default "
                            "<source>_anon", path="output.name")
        if not isinstance(self.replace, bool):
            raise SpecError(f"must be true or false, got {self.replace!r}", path="output.replace")
        if self.path is not None and self.mode != "sql":
            raise SpecError(f"applies to mode sql (the file the SQL is written to), not {self.mode}",
                            path="output.path")
        if self.name is not None and self.mode == "in_place":
            import warnings

            warnings.warn(f"output.name: mode in_place replaces the source table itself, so the name "
                          f"{self.name!r} is not used: leave output.name out, or use mode table to "
                          "write a new table of that name", stacklevel=2)
