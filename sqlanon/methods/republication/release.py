"""One m-invariant (or m-unique) release built from the source's rows: the rows are read once, grouped
(:mod:`.algorithm`), and the release is a table of the engine made from Arrow.

Published columns: the group column, each quasi-identifier generalized to its group (a number's range
``[lo, hi]``, a text's distinct values ``{a, b}``, the value itself when the group has one), the
sensitive attribute, and the group's number of counterfeits (the paper publishes that count per
group; which rows are counterfeits is not shown). Counterfeit rows carry the group's quasi-identifiers
and their sensitive value. The person key is not published; the check reads it through
:meth:`MInvarianceRelease.linked`.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal
from typing import Any

import numpy as np
import pyarrow as pa
from sqlglot import exp

from sqlanon.compile.persons import persons_query
from sqlanon.compile.released import OutputQuery
from sqlanon.engines.staging import new_token, staging_name
from sqlanon.errors import SpecError
from sqlanon.methods.base import Release
from sqlanon.methods.dataset import Dataset
from sqlanon.methods.persons import check_persons, persons_of
from sqlanon.methods.republication.algorithm import COUNTERFEIT, Partition
from sqlanon.methods.republication.settings import MInvarianceSettings
from sqlanon.spec.schema import Spec
from sqlanon.sql.dialects import DialectProfile
from sqlanon.sql.nodes import as_expression, col, internal, table

KEY_TEXT, VALUE_TEXT = internal("key"), internal("value")
NULL_TEXT = "\u2400NULL"
"""A NULL key or value as the state keeps it (text no value has)."""


@dataclass
class Rows:
    """The source's rows as the algorithm reads them."""

    keys: list[str]
    qis: dict[str, list[Any]]
    sensitive: list[Any]
    values: list[str]
    """Sensitive values as text."""
    scaled: np.ndarray

    @property
    def count(self) -> int:
        return len(self.keys)


def _text(value: Any) -> str:
    return NULL_TEXT if value is None else str(value)


def _scaled(values: list[Any]) -> np.ndarray:
    """Values on [0, 1]: numbers by their range, anything else by the rank of its text."""
    if all(isinstance(v, (int, float, Decimal)) and not isinstance(v, bool) for v in values if v is not None):
        x = np.array([np.nan if v is None else float(v) for v in values])
    else:
        ranks = {t: i for i, t in enumerate(sorted({_text(v) for v in values}))}
        x = np.array([float(ranks[_text(v)]) for v in values])
    x = np.where(np.isnan(x), np.nanmin(x) if np.isfinite(x).any() else 0.0, x)
    span = float(x.max() - x.min()) if x.size else 0.0
    return (x - x.min()) / span if span else np.zeros_like(x)


def read_rows(ds: Dataset, settings: MInvarianceSettings, qis: list[str], spec: Spec) -> Rows:
    """Every row's key, quasi-identifiers and sensitive value; one row per person. With a privacy unit,
    each person's record (:func:`person_records`)."""
    columns = [settings.key, *qis, settings.sensitive]
    path = spec.path
    relation = ds.relation if spec.privacy_unit is None else \
        person_records(ds, spec, [*qis, settings.sensitive])
    with ds.engine.purpose("read the rows to group"):
        _, fetched = ds.engine.fetch(exp.select(*(col(c) for c in columns)).from_(relation.copy()))
    # in the key's order, so that a release depends on the rows and not on the order an engine reads
    rows = sorted(fetched, key=lambda r: _text(r[0]))
    keys = [_text(r[0]) for r in rows]
    if len(set(keys)) != len(keys):
        seen: set[str] = set()
        twice = next(k for k in keys if k in seen or seen.add(k))  # type: ignore[func-returns-value]
        raise SpecError(f"the key {settings.key!r} names a person by one row, but {twice!r} has several "
                        "rows (declare `privacy_unit: COLUMN` for one record per person)",
                        path="publishing.key", source=path)
    if any(r[0] is None for r in rows):
        raise SpecError(f"the key {settings.key!r} is NULL in some rows: every row needs a person",
                        path="publishing.key", source=path)
    qi_values = {q: [r[1 + i] for r in rows] for i, q in enumerate(qis)}
    sensitive = [r[-1] for r in rows]
    scaled = np.column_stack([_scaled(v) for v in qi_values.values()]) if qis and rows \
        else np.zeros((len(rows), 0))
    return Rows(keys, qi_values, sensitive, [_text(v) for v in sensitive], scaled)


def person_records(ds: Dataset, spec: Spec, attributes: list[str]) -> exp.Expression:
    """One record per person: each quasi-identifier and the sensitive attribute by the privacy unit's
    rule (``constant`` by default, checked: a person whose rows hold two sensitive values is an error
    naming it, since the paper's person is one tuple with one value)."""
    persons = persons_of(spec, ds.column_names, attributes)
    assert persons is not None
    check_persons(spec, ds.engine, persons, attributes, ds.relation)
    records = persons_query(ds.relation, attributes, [], persons)
    return as_expression(exp.alias_(exp.Subquery(this=records), internal("persons"), quoted=True))


def _generalized(values: list[Any]) -> str | None:
    present = [v for v in values if v is not None]
    if not present:
        return None
    distinct = sorted(set(present), key=lambda v: (str(type(v)), v))
    if len(distinct) == 1:
        return str(distinct[0])
    if all(isinstance(v, (int, float, Decimal, date, datetime)) and not isinstance(v, bool)
           for v in distinct):
        return f"[{distinct[0]}, {distinct[-1]}]"
    return "{" + ", ".join(str(v) for v in distinct) + "}"


def release_table(rows: Rows, partition: Partition, settings: MInvarianceSettings, qis: list[str]
                  ) -> pa.Table:
    """The published rows and, in two internal columns, each row's key and value as text."""
    typed: dict[str, Any] = {}
    for value, text in zip(rows.sensitive, rows.values):
        typed.setdefault(text, value)
    out: dict[str, list[Any]] = {settings.group_column: [], **{q: [] for q in qis},
                                 settings.sensitive: [], settings.counterfeit_column: [],
                                 KEY_TEXT: [], VALUE_TEXT: []}
    for number, group in enumerate(partition.groups, start=1):
        real = [r for r in group.members if r != COUNTERFEIT]
        shown = {q: _generalized([rows.qis[q][r] for r in real]) for q in qis}
        fakes = group.counterfeits
        for value, row in zip(group.signature, group.members):
            out[settings.group_column].append(number)
            for q in qis:
                out[q].append(shown[q])
            out[settings.sensitive].append(typed[value])
            out[settings.counterfeit_column].append(fakes)
            out[KEY_TEXT].append(None if row == COUNTERFEIT else rows.keys[row])
            out[VALUE_TEXT].append(value)
    return pa.table({name: pa.array(v, pa.string() if name in qis or name in (KEY_TEXT, VALUE_TEXT)
                                    else None) for name, v in out.items()})


class MInvarianceRelease(Release):
    """The release as a temporary table made from Arrow, read by the writer or the check."""

    suppression = False

    def __init__(self, data: pa.Table, settings: MInvarianceSettings, qis: list[str]) -> None:
        self.data = data
        self.settings = settings
        self.qis = qis
        self.staged: str | None = None

    def prepare(self, ds: Dataset, *, keep: str | None = None) -> None:
        if self.staged is None:
            self.staged = staging_name(new_token(), "release")
            with ds.engine.purpose("stage the release"):
                ds.engine.create_table_from_arrow(self.staged, self.data, temporary=True)

    def query(self, target: DialectProfile) -> OutputQuery:
        assert self.staged is not None
        s = self.settings
        columns = [s.group_column, *self.qis, s.sensitive, s.counterfeit_column]
        return OutputQuery(exp.select(*(col(c) for c in columns)).from_(table(self.staged))
                           .order_by(col(s.group_column)))

    def linked(self, target: DialectProfile) -> tuple[exp.Select, tuple[str, ...]]:
        """The rows with the key (NULL for counterfeits) and the value as text."""
        assert self.staged is not None
        s = self.settings
        query = exp.select(exp.alias_(col(KEY_TEXT), s.key, quoted=True), col(s.group_column),
                           exp.alias_(col(VALUE_TEXT), s.sensitive, quoted=True)).from_(table(self.staged))
        return query, (s.group_column,)

    def close(self, ds: Dataset) -> None:
        if self.staged is not None:
            ds.engine.drop(self.staged)
            self.staged = None

