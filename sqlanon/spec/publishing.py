"""The ``publishing`` section: how a table that is published again and again stays consistent.

``publishing: {mode: m_invariance, m: 2, key: id, state: visits_state}`` keeps every person's
signature (the set of sensitive values of its group) the same in every release it appears in
(docs/republishing.md); ``mode: independent`` (the default) releases each version on its own. ``key``
names the column identifying a person across releases, which ``sqlanon check --against`` also reads.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sqlanon.errors import SpecError
from sqlanon.spec.values import choose

PUBLISHING_MODES = ("independent", "m_invariance")
PUBLISHING_KEYS = ("mode", "m", "key", "state", "group_column", "counterfeit_column")


def _name(value: Any, path: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise SpecError(f"must be a non-empty name, got {value!r}", path=path)
    return value


@dataclass(frozen=True)
class Publishing:
    """How successive releases of one table relate."""

    mode: str = "independent"
    m: int | None = None
    """Every group holds at least ``m`` distinct sensitive values, each once (m-uniqueness)."""
    key: str | None = None
    """The column naming a person across releases (the privacy unit's column, when one is given)."""
    state: str | None = None
    """The prefix of the tables that keep the releases' state (``<state>__signatures``, ...); with
    mode independent, where the releases are recorded for ``check --against``."""
    group_column: str = "group_id"
    counterfeit_column: str = "counterfeits"

    def __post_init__(self) -> None:
        choose(self.mode, PUBLISHING_MODES, "publishing.mode", "mode")
        if self.m is not None and (isinstance(self.m, bool) or not isinstance(self.m, int)
                                   or self.m < 2):
            raise SpecError(f"must be an integer >= 2, got {self.m!r}", path="publishing.m")
        for name in ("key", "state"):
            if getattr(self, name) is not None:
                _name(getattr(self, name), f"publishing.{name}")
        _name(self.group_column, "publishing.group_column")
        _name(self.counterfeit_column, "publishing.counterfeit_column")
        if self.group_column == self.counterfeit_column:
            raise SpecError("the group column and the counterfeit column need different names",
                            path="publishing.counterfeit_column")
        if self.mode == "m_invariance":
            for name, what in (("m", "the number of distinct sensitive values per group (>= 2)"),
                               ("key", "the column naming a person across releases"),
                               ("state", "the prefix of the tables keeping the releases' state")):
                if getattr(self, name) is None:
                    raise SpecError(f"mode m_invariance needs `{name}`: {what}", path=f"publishing.{name}")

    def check_attributes(self, attributes: Mapping[str, Any]) -> None:
        """The key is a declared attribute; the group and counterfeit columns are not."""
        if self.key is not None and self.key not in attributes:
            from sqlanon.errors import did_you_mean

            raise SpecError(f"unknown attribute {self.key!r}." + did_you_mean(self.key, attributes),
                            path="publishing.key")
        for name in ("group_column", "counterfeit_column"):
            if getattr(self, name) in attributes:
                raise SpecError(f"{getattr(self, name)!r} is an attribute of the spec; choose another "
                                "name", path=f"publishing.{name}")


def publishing_from_dict(value: Any, person: str | None = None) -> Publishing | None:
    """The section as parsed from YAML (None when absent); one-line errors naming the key. ``person``:
    the privacy unit's column, the key when the section names none."""
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise SpecError("must be a mapping, e.g. {mode: m_invariance, m: 2, key: id, state: name}",
                        path="publishing")
    for key in value:
        if key not in PUBLISHING_KEYS:
            from sqlanon.errors import did_you_mean

            raise SpecError(f"unknown key {key!r}; use {', '.join(PUBLISHING_KEYS)}."
                            + did_you_mean(str(key), PUBLISHING_KEYS), path=f"publishing.{key}")
    fields = {str(k): v for k, v in value.items()}
    if person is not None and fields.get("key") is None:
        fields["key"] = person
    return Publishing(**fields)
