"""Reading spec data: where values come from (the spec file, the folder relative paths start in) and
errors that name the file and the key path."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from sqlanon.errors import SpecError, did_you_mean


def join(path: str, key: str) -> str:
    """``path.key``, ``path[i]`` for an index, or whichever is non-empty."""
    if not path or not key:
        return path or key
    return path + key if key.startswith("[") else f"{path}.{key}"


class Context:
    """Where values come from: the spec file (for messages) and the folder relative paths start in."""

    def __init__(self, source: str | None, base: Path) -> None:
        self.source = source
        self.base = base

    def error(self, path: str, message: str) -> SpecError:
        return SpecError(message, path=path, source=self.source)

    def mapping(self, value: Any, path: str) -> dict[Any, Any]:
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise self.error(path, f"must be a mapping, got {kind_of(value)}")
        return value

    def keys(self, value: dict[Any, Any], allowed: tuple[str, ...], path: str) -> None:
        for key in value:
            if key not in allowed:
                raise self.error(join(path, str(key)), f"unknown key {key!r}; allowed: "
                                 f"{', '.join(allowed)}." + did_you_mean(str(key), allowed))

    def file(self, value: Any, path: str) -> Path:
        if not isinstance(value, str) or not value:
            raise self.error(path, f"must be a file path, got {value!r}")
        p = Path(os.path.expanduser(value))
        return p if p.is_absolute() else self.base / p

    @contextlib.contextmanager
    def located(self) -> Iterator[None]:
        """Add the spec file to errors raised by the schema's rules."""
        try:
            yield
        except SpecError as e:
            if e.source is not None or self.source is None:
                raise
            raise type(e)(e.rule, path=e.path, source=self.source) from None


_KINDS: dict[type, str] = {dict: "a mapping", list: "a list", str: "a string"}


def kind_of(v: Any) -> str:
    return _KINDS.get(type(v), type(v).__name__)
