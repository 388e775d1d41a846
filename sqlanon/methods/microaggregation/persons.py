"""Microaggregation of persons (``privacy_unit``): one person-level record per person (each
attribute by its rule, :mod:`sqlanon.compile.persons`) is grouped, and every row of a person is
released with its person's group values.

The person-level records are a temporary table when the output is written here (``table``,
``in_place``), and a subquery of the statement for a view or printed SQL, which read them later.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any, cast

from sqlglot import exp

from sqlanon.compile.hash_text import parse_types
from sqlanon.compile.persons import ROWS_OF, grouped, persons_query
from sqlanon.engines.staging import new_token, staging_name
from sqlanon.errors import SpecError
from sqlanon.methods.dataset import Dataset
from sqlanon.methods.persons import check_persons, persons_of
from sqlanon.spec.schema import Spec
from sqlanon.sql.nodes import alias, as_expression, col, internal, table

if TYPE_CHECKING:
    from sqlanon.methods.microaggregation.pipeline import Masking

STANDALONE = ("view", "sql")
"""Output modes read after the run: the person-level records are a subquery of their statement."""


def check_unit(spec: Spec) -> None:
    """The person is the key of the grouped records."""
    if "key" in spec.transformation.options:
        raise SpecError("with a privacy unit the person column is the key of the grouped records: leave "
                        "transformation.key out", path="transformation.key", source=spec.path)


def person_masking(spec: Spec, ds: Dataset, prepare: Callable[[Spec, Dataset], Masking]) -> Masking:
    """Group the person-level records with ``prepare`` and release every source row with its
    person's values."""
    unit = spec.privacy_unit
    assert unit is not None
    settings = spec.microaggregation
    columns = ds.column_names
    wanted = [*settings.attributes, *[s for s in spec.sensitive if s not in settings.attributes],
              *[c for c in settings.block_by if c not in settings.attributes]]
    wanted = [c for c in dict.fromkeys(wanted) if c != unit.column]
    persons = persons_of(spec, columns, wanted)
    assert persons is not None
    records = persons_query(ds.relation, wanted, [], persons)
    relation: exp.Expression
    if spec.output.mode in STANDALONE:  # read after the run: the records stay a subquery
        relation = as_expression(exp.alias_(exp.Subquery(this=records), internal("persons"), quoted=True))
    else:
        relation = table(staging_name(new_token(), "persons"))
        ds.engine.create_table_as(relation.name, records, temporary=True)
    try:
        check_persons(spec, ds.engine, persons, wanted, ds.relation,
                      relation if grouped([], persons) else None)
        types = dict(ds.columns)
        # the pipeline reads its relation in FROM only, where an aliased subquery serves as a table
        person_ds = replace(ds, relation=cast(exp.Table, relation), owns_engine=False, schema=None,
                            columns=[(c, types[c]) for c in (unit.column, *wanted)])
        options = {**spec.transformation.options, "key": [unit.column]}
        person_spec = replace(spec, privacy_unit=None,
                              transformation=replace(spec.transformation, options=options))
        m = prepare(person_spec, person_ds)
    except BaseException:
        if isinstance(relation, exp.Table):
            ds.engine.drop(relation.name)
        raise
    m.persons_table = relation
    rows, rel = internal("rows"), internal("p")
    masked = set(settings.attributes)
    m.output_source = exp.select(*[alias(col(c, rel if c in masked else rows), c) for c in columns]).from_(
        exp.alias_(ds.relation.copy(), rows, table=True, quoted=True)).join(
        exp.alias_(exp.Subquery(this=m.released.copy()), rel, quoted=True),
        on=exp.EQ(this=col(unit.column, rows), expression=col(unit.column, rel)), join_type="inner")
    m.columns = columns
    m.types = parse_types(ds.columns, ds.engine.dialect.sqlglot)
    return m


def persons_figures(ds: Dataset, m: Masking) -> dict[str, Any] | None:
    """The person column, persons and rows of a microaggregation of persons (None otherwise)."""
    if m.persons_table is None:
        return None
    rows = ds.engine.fetch_one(exp.select(alias(exp.Sum(this=col(ROWS_OF)), "n")).from_(
        m.persons_table.copy()))["n"]
    return {"column": m.key.columns[0], "persons": m.rows, "rows": int(rows or 0)}
