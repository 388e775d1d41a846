"""The ``tables`` section: event tables joined to the person table by a key, released together.

The spec's ``source`` is the person table (one or more rows per person, identified by the
``privacy_unit`` column); each entry of ``tables`` is an event table whose ``key`` column refers to
that person column::

    tables:
      visits:
        table: visits
        key: patient_id                 # refers to privacy_unit.column of the person table
        attributes:
          admitted: {role: quasi_identifier, hierarchy: {date: [month, year]}}
          clinic:   {role: identifier, action: drop}
        rules: {admitted: min}          # constant (default), min, max, first
        order_by: visit_date            # what `first` means in this table
        name: visits_anon               # the output (default <table>_anon)

A quasi-identifier of an event table becomes an attribute of the person (its rule's value over the
person's event rows), is generalized with the person, and every event row of the person is released
with it. The key is released as the person column is (the same pseudonym for the same person).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from sqlanon.errors import SpecError, did_you_mean
from sqlanon.spec.attribute import Attribute
from sqlanon.spec.privacy_unit import RULES

EVENT_RULES = tuple(r for r in RULES if r != "one_class")
"""An event table's attribute becomes one value of its person (``one_class`` is the person table's)."""

TABLE_KEYS = ("table", "key", "attributes", "rules", "order_by", "name")
EVENT_ROLES = ("quasi_identifier", "identifier", "insensitive")
"""What an event table's column may be (a sensitive attribute belongs to the person table)."""


@dataclass(frozen=True)
class EventTable:
    """One entry of ``tables``: an event table, its key to the person, and its columns' roles."""

    entry: str
    """The entry's name under ``tables`` (key paths in messages)."""
    table: str
    key: str
    attributes: dict[str, Attribute] = field(default_factory=dict)
    rules: dict[str, str] = field(default_factory=dict)
    order_by: str | None = None
    name: str | None = None
    """The output relation (default ``<table>_anon``)."""

    def __post_init__(self) -> None:
        path = f"tables.{self.entry}"
        for key in ("table", "key"):
            value = getattr(self, key)
            if not isinstance(value, str) or not value:
                raise SpecError(f"must name a {'table' if key == 'table' else 'column'}, got {value!r}",
                                path=f"{path}.{key}")
        for key in ("order_by", "name"):
            value = getattr(self, key)
            if value is not None and (not isinstance(value, str) or not value.strip()):
                raise SpecError(f"must be a name, got {value!r}", path=f"{path}.{key}")
        if self.key in self.attributes:
            raise SpecError(f"{self.key!r} is the key: it is released as the person column is, so "
                            "declare it there (privacy_unit.column's attribute), not here",
                            path=f"{path}.attributes.{self.key}")
        for name, a in self.attributes.items():
            if a.role not in EVENT_ROLES:
                raise SpecError(f"role {a.role} is not available in an event table (one of "
                                f"{', '.join(EVENT_ROLES)}; a sensitive attribute belongs to the person "
                                "table)", path=f"{path}.attributes.{name}.role")
            if a.role == "quasi_identifier" and a.hierarchy is None:
                raise SpecError("a quasi-identifier needs a hierarchy",
                                path=f"{path}.attributes.{name}.hierarchy")
        if not isinstance(self.rules, Mapping):
            raise SpecError("must map quasi-identifiers to rules (constant, min, max, first)",
                            path=f"{path}.rules")
        for name, rule in self.rules.items():
            if name not in self.quasi_identifiers:
                raise SpecError(f"{name!r} is not a quasi-identifier of this table."
                                + did_you_mean(str(name), self.quasi_identifiers),
                                path=f"{path}.rules.{name}")
            if rule not in EVENT_RULES:
                raise SpecError(f"unknown rule {rule!r}; one of {', '.join(EVENT_RULES)}."
                                + did_you_mean(str(rule), EVENT_RULES), path=f"{path}.rules.{name}")
        if self.order_by is None and "first" in self.rules.values():
            raise SpecError("rule `first` needs `order_by: COLUMN` (which event row comes first)",
                            path=f"{path}.order_by")

    @property
    def quasi_identifiers(self) -> list[str]:
        return [n for n, a in self.attributes.items() if a.role == "quasi_identifier"]

    def rule(self, attribute: str, default: str) -> str:
        return self.rules.get(attribute, default)

    @property
    def output_name(self) -> str:
        return self.name or f"{self.table}_anon"


def check_tables(tables: tuple[EventTable, ...], attributes: Mapping[str, Attribute],
                 has_unit: bool, person_output: str | None, person_table: str) -> None:
    """What the entries must satisfy together and with the person table's spec.

    Raises:
        SpecError: naming the key path of the first offending value.
    """
    if not tables:
        return
    if not has_unit:
        raise SpecError("several tables need `privacy_unit: COLUMN` (the person column the event "
                        "tables' keys refer to)", path="tables")
    seen: dict[str, str] = {}
    outputs = {person_output or f"{person_table}_anon": "output.name"}
    for t in tables:
        path = f"tables.{t.entry}"
        if t.table == person_table or t.table in (u.table for u in tables if u is not t):
            raise SpecError(f"table {t.table!r} is listed twice (the person table is `source`)",
                            path=f"{path}.table")
        if t.output_name in outputs:
            raise SpecError(f"output {t.output_name!r} is also {outputs[t.output_name]}'s; set "
                            f"{path}.name", path=f"{path}.name")
        outputs[t.output_name] = f"{path}.name"
        for q in t.quasi_identifiers:
            if q in attributes:
                raise SpecError(f"{q!r} is also an attribute of the person table; a person-level "
                                "attribute needs its own name (rename the column in a view)",
                                path=f"{path}.attributes.{q}")
            if q in seen:
                raise SpecError(f"{q!r} is also a quasi-identifier of {seen[q]}; a person-level "
                                "attribute needs its own name", path=f"{path}.attributes.{q}")
            seen[q] = path


def event_attribute(tables: tuple[EventTable, ...], name: str) -> Attribute | None:
    """The event tables' quasi-identifier ``name`` (a person-level attribute), if any."""
    for t in tables:
        if name in t.quasi_identifiers:
            return t.attributes[name]
    return None


def tables_from_yaml(value: Any, parse_attributes: Any) -> tuple[EventTable, ...]:
    """``tables:`` as written in a spec; ``parse_attributes(mapping, path)`` reads an ``attributes``
    section as the spec's own is read."""
    if value is None:
        return ()
    if not isinstance(value, Mapping):
        raise SpecError(f"must map entry names to tables ({', '.join(TABLE_KEYS)}), got "
                        f"{type(value).__name__}", path="tables")
    out = []
    for entry, v in value.items():
        path = f"tables.{entry}"
        if not isinstance(v, Mapping):
            raise SpecError(f"must be a mapping with keys {', '.join(TABLE_KEYS)}, got "
                            f"{type(v).__name__}", path=path)
        for key in v:
            if key not in TABLE_KEYS:
                raise SpecError(f"unknown key {key!r}; one of {', '.join(TABLE_KEYS)}."
                                + did_you_mean(str(key), TABLE_KEYS), path=f"{path}.{key}")
        for key in ("table", "key"):
            if key not in v:
                raise SpecError("is required", path=f"{path}.{key}")
        out.append(EventTable(str(entry), v["table"], v["key"],
                              _attributes(parse_attributes, v.get("attributes") or {}, path),
                              dict(v.get("rules") or {}), v.get("order_by"), v.get("name")))
    return tuple(out)


def _attributes(parse: Any, value: Any, path: str) -> dict[str, Attribute]:
    """The entry's attributes; an attribute's own rule names ``attributes.X`` and is re-rooted here."""
    try:
        return dict(parse(value, f"{path}.attributes"))
    except SpecError as e:
        if e.path and e.path.startswith("attributes"):
            raise SpecError(e.rule, path=f"{path}.{e.path}", source=e.source) from None
        raise
