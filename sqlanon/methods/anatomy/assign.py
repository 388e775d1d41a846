"""Anatomy's rows assigned to their groups in SQL: one GROUP BY for the bucket sizes, then one SELECT
that numbers each bucket's rows in a keyed random order and joins them to the groups' ranges.

A bucket is named by its value's canonical text (:mod:`sqlanon.compile.hash_text`, ``v`` + text, or
``n`` for NULL): the same string on every engine, so the ranges computed from one engine's counts
mean the same rows on any other, and printed SQL carries them as plain text literals.

A bucket's rows are numbered ``ROW_NUMBER() OVER (PARTITION BY value ORDER BY sha256(key || row))``,
``row`` the canonical text of every column (then the columns themselves, so that only rows equal in
every column, which are interchangeable, tie). The key is 128 secret bits (or derived from the
user's seed), so the order is random to whoever does not hold it, and it is fixed: a view or printed
SQL reads the same groups every time, on every engine, without a table of assignments. The key is
written into that SQL (as an identifier's salt is), so keep a view's definition from its readers.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from sqlglot import exp

from sqlanon.compile.hash_text import canonical_sql
from sqlanon.methods.anatomy.anatomize import Run
from sqlanon.sql.dialects import DialectProfile, sha256_hex
from sqlanon.sql.nodes import alias, as_expression, col, count_star, internal, lit, values_table
from sqlanon.sql.secrets import secret

BUCKET, SIZE, ROW, GROUP = internal("t"), internal("n"), internal("rn"), internal("group")
_FIRST, _LAST, _START = internal("lo"), internal("hi"), internal("g")
_ROWS, _RANGES, _ASSIGNED = internal("rows"), internal("ranges"), internal("assigned")
SEPARATOR = "|"


def bucket_key(value: exp.Expression, data_type: exp.DataType | None,
               target: DialectProfile) -> exp.Expression:
    """The name of a value's bucket: ``'v' || canonical text``, ``'n'`` for NULL."""
    text = exp.Concat(expressions=[lit("v"), canonical_sql(value, data_type, target)], safe=False,
                      coalesce=False)
    return exp.Case().when(exp.Is(this=value.copy(), expression=exp.Null()), lit("n")).else_(text)


def buckets_query(relation: exp.Expression, sensitive: str, data_type: exp.DataType | None,
                  target: DialectProfile) -> exp.Select:
    """Each bucket's name and size."""
    key = bucket_key(col(sensitive), data_type, target)
    return exp.select(alias(key, BUCKET), alias(count_star(), SIZE)).from_(relation.copy()) \
        .group_by(key.copy())


def _row_order(columns: Sequence[str], types: Mapping[str, exp.DataType], key: str,
               target: DialectProfile) -> list[exp.Ordered]:
    parts: list[exp.Expression] = [secret(key)]
    for c in columns:
        parts += [exp.Coalesce(this=canonical_sql(col(c), types.get(c), target), expressions=[lit("")]),
                  lit(SEPARATOR)]
    digest = sha256_hex(exp.Concat(expressions=parts, safe=False, coalesce=False), target)
    return [exp.Ordered(this=digest, nulls_first=False),
            *[exp.Ordered(this=col(c), nulls_first=False) for c in columns]]


def assigned_query(relation: exp.Expression, columns: Sequence[str], sensitive: str,
                   types: Mapping[str, exp.DataType], key: str, runs: Sequence[Run],
                   bucket_names: Sequence[str], target: DialectProfile) -> exp.Select:
    """Every column of the source and the row's group (``__sa_group``)."""
    number = exp.Window(this=exp.RowNumber(), partition_by=[col(sensitive)],
                        order=exp.Order(expressions=_row_order(columns, types, key, target)))
    numbered = exp.select(*[col(c) for c in columns],
                          alias(bucket_key(col(sensitive), types.get(sensitive), target), BUCKET),
                          alias(number, ROW)).from_(relation.copy())
    ranges = values_table([(bucket_names[r.bucket], r.first, r.last, r.group) for r in runs],
                          [BUCKET, _FIRST, _LAST, _START], _RANGES, target.sqlglot)
    row = col(ROW, _ROWS)
    on = exp.and_(exp.EQ(this=col(BUCKET, _ROWS), expression=col(BUCKET, _RANGES)),
                  exp.Between(this=row, low=col(_FIRST, _RANGES), high=col(_LAST, _RANGES)))
    group = exp.Add(this=col(_START, _RANGES),
                    expression=exp.Paren(this=exp.Sub(this=row.copy(), expression=col(_FIRST, _RANGES))))
    return exp.select(*[col(c, _ROWS) for c in columns], alias(group, GROUP)) \
        .from_(exp.alias_(exp.Subquery(this=numbered), _ROWS, quoted=True)) \
        .join(ranges, on=on, join_type="inner")


def _assigned(query: exp.Select) -> exp.Expression:
    return as_expression(exp.alias_(exp.Subquery(this=query.copy()), _ASSIGNED, quoted=True))


def qit_query(assigned: exp.Select, released: Sequence[exp.Expression], group_column: str) -> exp.Select:
    """The quasi-identifier table: the released columns (each an expression over the assigned
    rows' columns, aliased) and the group."""
    return exp.select(*released, alias(col(GROUP), group_column)).from_(_assigned(assigned))


def st_query(assigned: exp.Select, sensitive: str, group_column: str, count_column: str) -> exp.Select:
    """The sensitive table: per group, each sensitive value and its number of rows."""
    return exp.select(alias(col(GROUP), group_column), col(sensitive), alias(count_star(), count_column)) \
        .from_(_assigned(assigned)).group_by(col(GROUP), col(sensitive))
