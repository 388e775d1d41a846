"""The specification as Python objects. :mod:`sqlanon.spec.load` builds them from YAML."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sqlanon.hierarchy.base import Hierarchy
from sqlanon.models.base import PrivacyModel

ROLES = ("quasi_identifier", "sensitive", "identifier", "insensitive")
TYPES = ("string", "integer", "decimal", "date", "ordinal")
IDENTIFIER_ACTIONS = ("drop", "hash", "pseudonymize", "mask")
OUTPUT_MODES = ("table", "view", "in_place", "sql", "none")
SUPPRESSED_MODES = ("remove", "mask")


@dataclass(frozen=True)
class Source:
    """Where the data is: a table of the connected database, or a CSV/Parquet file."""

    table: str | None = None
    file: str | None = None
    format: str | None = None
    database: str | None = None
    """A DuckDB file path or a ``postgresql://`` URL; None = in-memory DuckDB (files only)."""
    schema: str | None = None
    delimiter: str | None = None
    header: bool = True

    @property
    def relation_name(self) -> str:
        if self.table:
            return self.table
        from pathlib import Path

        return Path(self.file or "data").stem


@dataclass(frozen=True)
class Attribute:
    name: str
    role: str
    type: str | None = None
    hierarchy: Hierarchy | None = None
    weight: float = 1.0
    action: str = "drop"
    """What happens to an identifier: drop, hash (salted), pseudonymize, mask."""
    salt: str | None = None
    order: tuple[Any, ...] | None = None
    """For ordinal attributes: the values from lowest to highest (ordered EMD ranks)."""


@dataclass(frozen=True)
class Transformation:
    method: str = "generalization"
    levels: dict[str, int] = field(default_factory=dict)
    suppression_limit: float = 0.0
    suppressed: str = "remove"
    """Rows of suppressed classes: ``remove`` them, or ``mask`` every quasi-identifier with ``*``."""
    options: dict[str, Any] = field(default_factory=dict)
    """Method-specific settings (search strategy, metric, ...) kept for the methods that read them."""


@dataclass(frozen=True)
class Output:
    mode: str = "table"
    name: str | None = None
    dialect: str = "duckdb"
    path: str | None = None
    database: str | None = None
    """Where outputs of a file source land (a DuckDB file); never the input's folder by default."""


@dataclass(frozen=True)
class Spec:
    source: Source
    attributes: dict[str, Attribute]
    privacy: tuple[PrivacyModel, ...] = ()
    transformation: Transformation = Transformation()
    output: Output = Output()
    metrics: tuple[str, ...] = ()
    path: str | None = None
    """The spec file, for messages."""

    def by_role(self, role: str) -> list[str]:
        return [a.name for a in self.attributes.values() if a.role == role]

    @property
    def quasi_identifiers(self) -> list[str]:
        return self.by_role("quasi_identifier")

    @property
    def sensitive(self) -> list[str]:
        return self.by_role("sensitive")
