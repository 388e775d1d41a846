"""One entry of the ``attributes`` section: a column, its role, type, hierarchy and weight."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from sqlanon.domain.hierarchy.base import Hierarchy
from sqlanon.errors import SpecError
from sqlanon.spec.values import choose, number

ROLES = ("quasi_identifier", "sensitive", "identifier", "insensitive")
TYPES = ("string", "integer", "decimal", "date", "ordinal")
IDENTIFIER_ACTIONS = ("drop", "hash", "pseudonymize", "mask")
HASHING_ACTIONS = ("hash", "pseudonymize")
SALT_MIN_LENGTH = 16
SALT_MIN_DISTINCT = 6


def check_salt(salt: Any, path: str) -> None:
    """A salt that resists guessing: at least 16 characters, at least 6 of them different.

    Whoever knows the salt reverses a hashed column by hashing candidate values (names, e-mail
    addresses, phone numbers), so the salt is the secret key of the hash: short or repetitive
    salts are guessed by brute force (16 characters from even a 26-letter alphabet give ~75 bits).
    """
    if not isinstance(salt, str):
        raise SpecError(f"must be text, got {salt!r}", path=path)
    why = ("whoever guesses the salt can hash candidate values and reverse the column; e.g. "
           "python -c 'import secrets; print(secrets.token_urlsafe(24))'")
    if len(salt) < SALT_MIN_LENGTH:
        raise SpecError(f"too short ({len(salt)} characters): use at least {SALT_MIN_LENGTH} random "
                        f"characters, since {why}", path=path)
    distinct = len(set(salt))
    if distinct < SALT_MIN_DISTINCT:
        raise SpecError(f"too little variety ({distinct} distinct character{'s' * (distinct != 1)}): use "
                        f"at least {SALT_MIN_DISTINCT} different characters, since {why}", path=path)



@dataclass(frozen=True)
class Attribute:
    """One column of the data and what it is to the privacy models."""

    name: str
    role: str
    """quasi_identifier, sensitive, identifier or insensitive."""
    type: str | None = None
    hierarchy: Hierarchy | None = None
    """Required for quasi-identifiers; optional for sensitive attributes (hierarchical distance)."""
    weight: float = 1.0
    """The attribute's weight in the quality metrics (ARX's attribute weights)."""
    action: str = "drop"
    """What happens to an identifier: drop, hash (salted), pseudonymize, mask."""
    salt: str | None = None
    order: tuple[Any, ...] | None = None
    """For ordinal attributes: the values from lowest to highest (ordered EMD ranks)."""

    def __post_init__(self) -> None:
        path = f"attributes.{self.name}"
        if not isinstance(self.name, str) or not self.name:
            raise SpecError(f"an attribute name must be non-empty text, got {self.name!r}",
                            path="attributes")
        if self.name.startswith("__sa_"):
            raise SpecError("names starting with __sa_ are reserved for sqlanon's own columns",
                            path=path)
        choose(self.role, ROLES, f"{path}.role", "role")
        if self.type is not None:
            choose(self.type, TYPES, f"{path}.type", "type")
        if self.hierarchy is not None and not isinstance(self.hierarchy, Hierarchy):
            raise SpecError(f"must be a Hierarchy, got {type(self.hierarchy).__name__}",
                            path=f"{path}.hierarchy")
        object.__setattr__(self, "weight", number(self.weight, f"{path}.weight", low=0))
        choose(self.action, IDENTIFIER_ACTIONS, f"{path}.action", "action")
        if self.action != "drop" and self.role != "identifier":
            raise SpecError(f"only identifiers take an action; {self.name!r} is a {self.role}",
                            path=f"{path}.action")
        self._check_salt(path)
        if self.order is not None:
            self._check_order(path)

    def _check_salt(self, path: str) -> None:
        if self.action in HASHING_ACTIONS:
            if self.salt is None:
                raise SpecError(
                    f"action {self.action!r} needs a salt: an unsalted hash of names or e-mail addresses "
                    "is reversed by hashing a list of candidates. Set a long random secret as `salt`, "
                    "or use action drop or mask", path=f"{path}.salt")
            check_salt(self.salt, f"{path}.salt")
        elif self.salt is not None:
            raise SpecError(f"applies to action hash or pseudonymize, not {self.action}",
                            path=f"{path}.salt")

    def _check_order(self, path: str) -> None:
        if isinstance(self.order, (str, bytes, Mapping)) or not isinstance(self.order, Iterable):
            raise SpecError("must be a list of the values, lowest first", path=f"{path}.order")
        order = tuple(self.order)
        labels = [str(v) for v in order]
        if not order or len(set(labels)) != len(labels):
            dup = next((v for v in labels if labels.count(v) > 1), None)
            raise SpecError("must be a non-empty list of distinct values, lowest first"
                            + (f"; {dup!r} is listed twice" if dup else ""), path=f"{path}.order")
        if self.type not in (None, "ordinal"):
            raise SpecError(f"an order applies to ordinal attributes; {self.name!r} has type "
                            f"{self.type}", path=f"{path}.order")
        object.__setattr__(self, "order", order)
