"""Contribution bounding: the rows of a person-level DP query, at most so many per person.

With a privacy unit, neighbouring tables differ by **all the rows of one person**. A person with
many rows could move a count by any amount, so before the exact aggregate each person's
contribution is bounded in SQL, on the engine:

- ungrouped aggregates keep at most ``max_rows`` rows per person;
- aggregates per public key keep at most ``max_groups`` of the person's keys (among the listed
  ones) and at most ``max_rows`` rows per person and key, as the per-partition contribution bounds
  of Google's differential-privacy library and PipelineDP do.

Which rows and keys are kept is random per person: the rows are ordered by a keyed SHA-256 of the
person, the values read and a copy number (the ``ROW_NUMBER`` among identical rows of the person),
the keys by a keyed SHA-256 of the person and the key; ``ROW_NUMBER`` (``DENSE_RANK`` for keys) per
person in that order keeps the first ones. The key is 128 bits drawn from the query's generator, so a
seed makes the choice reproducible. The choice depends on the person's own rows only, which is what
the sensitivities below need. Rows whose person is NULL belong to no person and count nowhere
(no bound could hold for them; refusing them instead would tell whether they exist).

Sensitivities (the factor by which a row-level sensitivity Δ is multiplied):

- ungrouped: one person adds or removes at most ``max_rows`` rows, each moving the value by at most
  Δ, so l1 = l2 = ``max_rows``·Δ;
- per key: at most ``max_groups`` keys, each moved by at most ``max_rows``·Δ, so
  l1 = ``max_groups``·``max_rows``·Δ and l2 = √``max_groups``·``max_rows``·Δ.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlglot import exp

from sqlanon.errors import SpecError
from sqlanon.methods.dp.amounts import ROW
from sqlanon.sql.dialects import DialectProfile, sha256_hex
from sqlanon.sql.nodes import alias, as_expression, as_text, col, internal, lit, table
from sqlanon.sql.secrets import secret


def _positive(value: Any, path: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise SpecError(f"must be a whole number >= 1 (a public bound, not read from the data), "
                        f"got {value!r}", path=path)
    return value


@dataclass(frozen=True)
class Contribution:
    """The person column and the public bounds on what one person contributes."""

    column: str
    """The column identifying a person (the privacy unit)."""
    max_rows: int
    """Rows kept per person (per person and key for aggregates per key)."""
    max_groups: int | None = None
    """Keys a person contributes to, for aggregates per key (histograms, sums or means per key)."""

    def __post_init__(self) -> None:
        if not isinstance(self.column, str) or not self.column or self.column == ROW:
            raise SpecError(f"must name the column identifying a person, got {self.column!r}",
                            path="privacy_unit")
        _positive(self.max_rows, "max_rows_per_person")
        if self.max_groups is not None:
            _positive(self.max_groups, "max_groups_per_person")

    def check_grouping(self, grouped: bool) -> None:
        """An aggregate per key needs ``max_groups``; an ungrouped one takes none."""
        if grouped and self.max_groups is None:
            raise SpecError("an aggregate per key at a privacy unit needs max_groups_per_person (how "
                            "many keys one person may contribute to; CLI --max-groups-per-person)",
                            path="max_groups_per_person")
        if not grouped and self.max_groups is not None:
            raise SpecError("max_groups_per_person applies to aggregates per key (histograms, "
                            "--group-by); this aggregate has no keys", path="max_groups_per_person")

    def factors(self) -> tuple[float, float]:
        """The l1 and l2 factors of the sensitivity (module docstring)."""
        groups = self.max_groups or 1
        return float(self.max_rows * groups), self.max_rows * math.sqrt(groups)

    def describe(self) -> dict[str, Any]:
        out: dict[str, Any] = {"privacy_unit": self.column, "max_rows_per_person": self.max_rows}
        if self.max_groups is not None:
            out["max_groups_per_person"] = self.max_groups
        return out


def _digest(parts: Sequence[exp.Expression], key: str, target: DialectProfile) -> exp.Expression:
    """Keyed SHA-256 of the parts as text (NULL as the empty text, a unit separator between)."""
    pieces: list[exp.Expression] = [secret(key)]
    for p in parts:
        pieces += [lit("\x1f"), exp.Coalesce(this=as_text(p), expressions=[lit("")])]
    return sha256_hex(exp.Concat(expressions=pieces, safe=False, coalesce=False), target)


def bounded(relation: str, bound: Contribution, columns: Sequence[str], key: str,
            target: DialectProfile, keys: tuple[tuple[str, ...], tuple[tuple[str, ...], ...]] | None = None
            ) -> exp.Select:
    """The rows of ``relation`` (its ``columns``) left after bounding each person's contribution.

    ``keys`` (the key columns and the public keys, as text) makes it per key: only rows of listed
    keys, at most ``bound.max_groups`` keys per person and ``bound.max_rows`` rows per person and key.
    """
    person = bound.column
    read = list(dict.fromkeys(columns))
    carried = list(dict.fromkeys([person, *read]))
    t, n, r, g, c = (internal(x) for x in ("t", "numbered", "r", "g", "copy"))
    source = exp.select(*[col(x, t) for x in carried]).from_(
        exp.alias_(table(relation), t, table=True, quoted=True)).where(
        exp.not_(exp.Is(this=col(person, t), expression=exp.Null())))
    if keys is not None:
        group_by, listed = keys
        names = [internal(f"k{i}") for i in range(len(group_by))]
        values = exp.values([tuple(lit(v) for v in k) for k in listed], alias=internal("keys"),
                            columns=names)
        on = exp.and_(*[exp.EQ(this=as_text(col(x, t)), expression=col(m, internal("keys")))
                        for x, m in zip(group_by, names)])
        source = source.join(values, on=on)
    copy_number = exp.Window(this=exp.RowNumber(), partition_by=[col(x) for x in carried],
                             order=exp.Order(expressions=[exp.Ordered(this=col(person))]))
    numbered = exp.select(*[col(x) for x in carried], alias(copy_number, c)).from_(
        exp.alias_(source.subquery(), n, table=True, quoted=True))
    group_cols = [col(x) for x in keys[0]] if keys is not None else []
    row_order = _digest([col(person), *[col(x) for x in read], col(c)], key, target)
    windows = [alias(exp.Window(this=exp.RowNumber(), partition_by=[col(person), *group_cols],
                                order=exp.Order(expressions=[exp.Ordered(this=row_order)])), r)]
    kept: list[exp.Expression] = [exp.LTE(this=col(r), expression=lit(bound.max_rows))]
    if keys is not None:
        key_order = _digest([lit("key"), col(person), *group_cols], key, target)
        windows.append(alias(exp.Window(this=exp.DenseRank(), partition_by=[col(person)],
                                        order=exp.Order(expressions=[exp.Ordered(this=key_order)])), g))
        kept.append(exp.LTE(this=col(g), expression=lit(bound.max_groups)))
    ranked = exp.select(*[col(x) for x in carried], *windows).from_(
        exp.alias_(numbered.subquery(), internal("ranked"), table=True, quoted=True))
    return (exp.select(*[col(x) for x in carried])
            .from_(exp.alias_(ranked.subquery(), internal("chosen"), table=True, quoted=True))
            .where(as_expression(exp.and_(*kept))))


BOUNDED = internal("bounded")
"""The name the aggregate's query reads the bounded rows under (a CTE)."""


def with_bounded(query: exp.Select, rows: exp.Select) -> exp.Select:
    """``query`` (built over the relation :data:`BOUNDED`) with ``rows`` as that relation."""
    return query.with_(exp.to_identifier(BOUNDED, quoted=True), as_=rows)
