"""The reports of publishing again: the intersection check and an m-invariance release."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class IntersectionReport:
    """``check --against``: what intersecting the release with a previous one reveals, by class pair
    (classes named as the releases show them; no person's value)."""

    previous: str
    k: int | None
    l: int  # noqa: E741 -- the paper's l
    sensitive: str
    class_pairs: int
    persons_in_both: int
    shrunk_pairs: int
    """Pairs of classes whose persons present in both releases are fewer than k."""
    reduced_pairs: int
    """Pairs whose persons keep fewer than l candidate sensitive values."""
    pinned_persons: int
    """Persons left with one candidate value (or none: a value that changed)."""
    flagged: list[dict[str, Any]]
    outputs: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    @property
    def anonymous(self) -> bool:
        return not (self.shrunk_pairs or self.reduced_pairs)

    def as_dict(self) -> dict[str, Any]:
        return {"anonymous": self.anonymous,
                "transformation": {"method": "intersection", "against": self.previous},
                "k": self.k, "l": self.l, "sensitive": self.sensitive, "class_pairs": self.class_pairs,
                "persons_in_both": self.persons_in_both, "shrunk_pairs": self.shrunk_pairs,
                "reduced_pairs": self.reduced_pairs, "pinned_persons": self.pinned_persons,
                "flagged": self.flagged, "outputs": self.outputs, "warnings": self.warnings}


@dataclass
class MInvarianceReport:
    """A release of ``publishing: {mode: m_invariance}`` (or one m-unique release on its own)."""

    transformation: dict[str, Any]
    release: int | None
    """The release's number in the state (None: independent, no state)."""
    rows: int
    groups: int
    counterfeits: int
    persons_kept: int
    """Persons of an earlier release, grouped by the signature they had."""
    persons_new: int
    m_unique: bool
    invariant: bool
    outputs: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    @property
    def anonymous(self) -> bool:
        return self.m_unique and self.invariant

    def as_dict(self) -> dict[str, Any]:
        return {"anonymous": self.anonymous, "transformation": self.transformation,
                "release": self.release, "rows": self.rows, "groups": self.groups,
                "counterfeits": self.counterfeits, "persons_kept": self.persons_kept,
                "persons_new": self.persons_new, "m_unique": self.m_unique,
                "invariant": self.invariant, "outputs": self.outputs, "warnings": self.warnings}
