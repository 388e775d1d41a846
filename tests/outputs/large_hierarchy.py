"""The people table with a zip hierarchy too large to write one sqlglot node per cell, hostile labels."""

from __future__ import annotations

from typing import Any

from sqlanon.sql.nodes import DIRECT_VALUES_MIN_ROWS
from tests.outputs.people import ZIPS, people_spec


def label(prefix: str, level: int) -> str:
    """A label with quotes, a semicolon, a comment, a backslash and non-ASCII characters."""
    return f"{prefix}{'*' * level} it's \"{level}\"; -- ẞ 🙂 \\"


def large_zip_map() -> dict[str, list[str]]:
    """The people's zips plus fillers, over :data:`DIRECT_VALUES_MIN_ROWS` leaves, 3 levels."""
    leaves = list(ZIPS) + [f"9{i:04d}" for i in range(DIRECT_VALUES_MIN_ROWS + 100)]
    return {z: [label(z[:4], 1), label(z[:3], 2), "*"] for z in leaves}


def large_spec(**changes: Any) -> dict[str, Any]:
    spec = people_spec(**changes)
    spec["attributes"]["zip"]["hierarchy"] = {"map": large_zip_map()}
    return spec
