"""Several tables released as one: the statements around the person-level release.

Three relations, all over quoted names:

* :func:`joined_query`: the person table with each event table's quasi-identifiers as person-level
  attributes (each rule's value over the person's event rows, a ``LEFT JOIN`` per event table): what
  the generalization releases;
* :func:`person_output`: the released person rows without the event tables' attributes, the person
  column released by its action;
* :func:`event_output`: an event table's rows whose person was released (an inner join with the
  released persons, so that suppressed persons vanish and every key refers to a released person),
  each quasi-identifier replaced by the person's released value, the key by the person's released
  key (the same expression over the same persons: the same pseudonym in every table).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from sqlglot import exp

from sqlanon.compile.identifiers import identifier_expression
from sqlanon.compile.persons import Persons, persons_query, unsettled_query
from sqlanon.spec.attribute import Attribute
from sqlanon.spec.tables import EventTable
from sqlanon.sql.dialects import DialectProfile
from sqlanon.sql.nodes import alias, col, internal, table

PERSON = internal("p")
RELEASED = internal("released")
EVENTS = internal("e")
KEY = internal("key")
"""The person column's source value in the released persons (the join key of the event tables)."""
RELEASED_KEY = internal("released_key")


def event_persons(event: EventTable, default_rule: str) -> Persons:
    """The event table's key as a person column, with each quasi-identifier's rule."""
    return Persons(event.key, {q: event.rule(q, default_rule) for q in event.quasi_identifiers},
                   event.order_by)


def event_records(event: EventTable, schema: str | None, default_rule: str) -> exp.Select:
    """One record per person of the event table: its key and each quasi-identifier's person value."""
    qis = event.quasi_identifiers
    records = persons_query(table(event.table, schema), qis, [], event_persons(event, default_rule))
    return exp.select(col(event.key), *[col(q) for q in qis]).from_(
        exp.alias_(exp.Subquery(this=records), internal("records"), quoted=True))


def unsettled_events(event: EventTable, schema: str | None, default_rule: str) -> exp.Select:
    """Event rows without a person, and persons whose ``constant`` attributes differ (up to five)."""
    constant = [q for q in event.quasi_identifiers if event.rule(q, default_rule) == "constant"]
    return unsettled_query(table(event.table, schema), event.key, constant)


def joined_query(person_table: str, schema: str | None, person_columns: Sequence[str], unit: str,
                 events: Sequence[EventTable], default_rule: str) -> exp.Select:
    """The person table's rows with every event table's quasi-identifiers (NULL for a person without
    events: it takes no value, as a NULL row does)."""
    projections: list[exp.Expression] = [alias(col(c, PERSON), c) for c in person_columns]
    query = exp.select().from_(exp.alias_(table(person_table, schema), PERSON, table=True, quoted=True))
    for i, event in enumerate(events):
        if not event.quasi_identifiers:
            continue
        name = internal(f"e{i}")
        projections += [alias(col(q, name), q) for q in event.quasi_identifiers]
        query = query.join(exp.alias_(exp.Subquery(this=event_records(event, schema, default_rule)), name,
                                      quoted=True),
                           on=exp.EQ(this=col(unit, PERSON), expression=col(event.key, name)),
                           join_type="left")
    return query.select(*projections, copy=False)


def released_key(key: Attribute | None, value: exp.Expression, target: DialectProfile,
                 data_type: exp.DataType | None) -> exp.Expression | None:
    """The person column as released: an identifier by its action (None: dropped), else copied."""
    if key is None or key.role != "identifier":
        return value
    return identifier_expression(key, value, target, None, data_type)


def person_output(released: str, schema: str | None, columns: Sequence[str], unit: str,
                  event_qis: Sequence[str], key: Attribute | None, target: DialectProfile,
                  key_type: exp.DataType | None) -> exp.Select:
    """The released person rows: ``columns`` but the event tables' attributes, the person column
    released by its action."""
    projections: list[exp.Expression] = []
    for c in columns:
        if c in event_qis:
            continue
        if c == unit:
            value = released_key(key, col(c), target, key_type)
            if value is not None:
                projections.append(alias(value, c))
        else:
            projections.append(col(c))
    return exp.select(*projections).from_(table(released, schema))


def released_persons(released: str, schema: str | None, unit: str, event: EventTable,
                     key: Attribute | None, target: DialectProfile, key_type: exp.DataType | None
                     ) -> exp.Select:
    """One row per released person: its source key (:data:`KEY`), its released key
    (:data:`RELEASED_KEY`) and its released values of ``event``'s quasi-identifiers."""
    qis = event.quasi_identifiers
    distinct = exp.select(col(unit), *[col(q) for q in qis]).distinct().from_(table(released, schema))
    value = released_key(key, col(unit), target, key_type)
    return exp.select(alias(col(unit), KEY), *([alias(value, RELEASED_KEY)] if value is not None else []),
                      *[col(q) for q in qis]).from_(
        exp.alias_(exp.Subquery(this=distinct), internal("persons"), quoted=True))


def event_output(event: EventTable, schema: str | None, columns: Sequence[str],
                 persons: exp.Select, keeps_key: bool, target: DialectProfile,
                 types: Mapping[str, exp.DataType]) -> tuple[exp.Select, list[str], list[str]]:
    """The released rows of ``event`` (module docstring) over :func:`released_persons`; with the
    columns dropped and the undeclared columns copied."""
    projections: list[exp.Expression] = []
    dropped: list[str] = []
    undeclared: list[str] = []
    for c in columns:
        attribute = event.attributes.get(c)
        if c == event.key:
            if keeps_key:
                projections.append(alias(col(RELEASED_KEY, RELEASED), c))
            else:
                dropped.append(c)
        elif attribute is not None and attribute.role == "quasi_identifier":
            projections.append(alias(col(c, RELEASED), c))
        elif attribute is not None and attribute.role == "identifier":
            value = identifier_expression(attribute, col(c, EVENTS), target, None, types.get(c))
            if value is None:
                dropped.append(c)
            else:
                projections.append(alias(value, c))
        else:
            if attribute is None:
                undeclared.append(c)
            projections.append(alias(col(c, EVENTS), c))
    query = exp.select(*projections).from_(
        exp.alias_(table(event.table, schema), EVENTS, table=True, quoted=True)).join(
        exp.alias_(exp.Subquery(this=persons), RELEASED, quoted=True),
        on=exp.EQ(this=col(event.key, EVENTS), expression=col(KEY, RELEASED)), join_type="inner")
    return query, dropped, undeclared
