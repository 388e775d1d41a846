"""The ``privacy_unit`` section: the column that identifies a person, and how a person's rows become
one person-level record.

``privacy_unit: patient_id`` names the column; the mapping form also says what to do with a
quasi-identifier whose values differ between a person's rows::

    privacy_unit:
      column: patient_id
      varying: constant            # every quasi-identifier: the default rule
      attributes: {zip: min}       # per attribute
      order_by: visit_date         # what `first` means

Rules: ``constant`` (the values must agree; a person whose values differ is an error naming them),
``min``, ``max`` and ``first`` (the value of the person's earliest row by ``order_by``). The
person-level record carries the rule's value, and every row of the person is released with it.
``one_class`` (quasi-identifiers of a generalization): at a node, the person's rows must generalize
to one value, else the person is suppressed (counted against the suppression limit).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from sqlanon.errors import SpecError, did_you_mean

RULES = ("constant", "min", "max", "first", "one_class")
"""How a quasi-identifier whose values vary across a person's rows becomes the person's value."""
KEYS = ("column", "varying", "attributes", "order_by")


@dataclass(frozen=True)
class PrivacyUnit:
    """The column identifying a person and the rule per quasi-identifier."""

    column: str
    varying: str = "constant"
    """The rule of every quasi-identifier not listed in :attr:`attributes`."""
    attributes: dict[str, str] = field(default_factory=dict)
    """Per attribute rules: quasi-identifiers, and the sensitive attributes a microaggregation reads
    (a generalization counts every sensitive value a person has)."""
    order_by: str | None = None
    """The column ordering a person's rows, for ``first``."""

    def __post_init__(self) -> None:
        if not isinstance(self.column, str) or not self.column:
            raise SpecError(f"must name the column identifying a person, got {self.column!r}",
                            path="privacy_unit.column")
        _rule(self.varying, "privacy_unit.varying")
        if not isinstance(self.attributes, Mapping):
            raise SpecError("must map quasi-identifiers to rules (constant, min, max, first, one_class)",
                            path="privacy_unit.attributes")
        object.__setattr__(self, "attributes", {str(a): _rule(r, f"privacy_unit.attributes.{a}")
                                                for a, r in self.attributes.items()})
        if self.order_by is not None and (not isinstance(self.order_by, str) or not self.order_by):
            raise SpecError(f"must name a column, got {self.order_by!r}", path="privacy_unit.order_by")
        if self.order_by is None and "first" in (self.varying, *self.attributes.values()):
            raise SpecError("rule `first` needs `order_by: COLUMN` (which row of a person comes first)",
                            path="privacy_unit.order_by")

    def rule(self, attribute: str) -> str:
        return self.attributes.get(attribute, self.varying)

    def check_attributes(self, attributes: Mapping[str, Any]) -> None:
        """The unit column is no quasi-identifier or sensitive attribute; listed rules name QIs."""
        a = attributes.get(self.column)
        if a is not None and a.role in ("quasi_identifier", "sensitive"):
            raise SpecError(f"{self.column!r} identifies persons, so it cannot be a {a.role} (declare it "
                            "as identifier, e.g. with action pseudonymize, or leave it undeclared)",
                            path="privacy_unit.column")
        ruled = [n for n, x in attributes.items() if x.role in ("quasi_identifier", "sensitive")]
        for name in self.attributes:
            if name not in ruled:
                raise SpecError(f"{name!r} is not a quasi-identifier or sensitive attribute."
                                + did_you_mean(name, ruled), path=f"privacy_unit.attributes.{name}")
        for name, x in attributes.items():
            if x.role == "sensitive" and self.rule(name) == "one_class" and name in self.attributes:
                raise SpecError("rule one_class generalizes a quasi-identifier; a sensitive attribute's "
                                "values are all counted (or take rule min, max or first)",
                                path=f"privacy_unit.attributes.{name}")

    @property
    def one_class(self) -> bool:
        """Some quasi-identifier may take rule ``one_class``."""
        return "one_class" in (self.varying, *self.attributes.values())

    @classmethod
    def from_yaml(cls, value: Any) -> PrivacyUnit:
        """``privacy_unit:`` as written in a spec: a column name or a mapping of :data:`KEYS`."""
        if isinstance(value, str):
            return cls(value)
        if not isinstance(value, Mapping):
            raise SpecError(f"must be a column name or a mapping with keys {', '.join(KEYS)}, got "
                            f"{type(value).__name__}", path="privacy_unit")
        for key in value:
            if key not in KEYS:
                raise SpecError(f"unknown key {key!r}; one of {', '.join(KEYS)}."
                                + did_you_mean(str(key), KEYS), path=f"privacy_unit.{key}")
        if "column" not in value:
            raise SpecError("is required", path="privacy_unit.column")
        attributes = value.get("attributes") or {}
        return cls(value["column"], value.get("varying", "constant"), attributes, value.get("order_by"))


def _rule(rule: Any, path: str) -> str:
    if rule not in RULES:
        raise SpecError(f"unknown rule {rule!r}; one of {', '.join(RULES)}." + did_you_mean(str(rule), RULES),
                        path=path)
    return str(rule)
