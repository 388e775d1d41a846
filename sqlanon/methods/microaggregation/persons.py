"""Microaggregation of persons (``privacy_unit``): one person-level record per person (each
attribute by its rule, :mod:`sqlanon.compile.persons`) is grouped, and every row of a person is
released with its person's group values.

The person-level records are a temporary table, so the output is written here (modes ``table`` and
``in_place``); a view or printed SQL would read it after the run and is refused.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from sqlglot import exp

from sqlanon.compile.hash_text import parse_types
from sqlanon.compile.persons import ROWS_OF, grouped, persons_query
from sqlanon.engines.staging import new_token, staging_name
from sqlanon.errors import SpecError
from sqlanon.methods.dataset import Dataset
from sqlanon.methods.persons import check_persons, persons_of
from sqlanon.spec.schema import Spec
from sqlanon.sql.nodes import alias, col, internal, table

if TYPE_CHECKING:
    from sqlanon.methods.microaggregation.pipeline import Masking

MODES = ("table", "in_place", "none")


def check_unit(spec: Spec) -> None:
    """The person is the key; the person-level records live as long as the run."""
    if "key" in spec.transformation.options:
        raise SpecError("with a privacy unit the person column is the key of the grouped records: leave "
                        "transformation.key out", path="transformation.key", source=spec.path)
    if spec.output.mode not in MODES:
        raise SpecError(f"a microaggregation of persons groups a temporary table of person-level records, "
                        f"so it is written here: use output mode table or in_place, not {spec.output.mode}",
                        path="output.mode", source=spec.path)


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
    name = staging_name(new_token(), "persons")
    ds.engine.create_table_as(name, persons_query(ds.relation, wanted, [], persons), temporary=True)
    try:
        check_persons(spec, ds.engine, persons, wanted, ds.relation,
                      table(name) if grouped([], persons) else None)
    except BaseException:
        ds.engine.drop(name)
        raise
    types = dict(ds.columns)
    person_ds = replace(ds, relation=table(name), name=name, owns_engine=False, schema=None,
                        columns=[(c, types[c]) for c in (unit.column, *wanted)])
    options = {**spec.transformation.options, "key": [unit.column]}
    person_spec = replace(spec, privacy_unit=None,
                          transformation=replace(spec.transformation, options=options))
    try:
        m = prepare(person_spec, person_ds)
    except BaseException:
        ds.engine.drop(name)
        raise
    m.persons_table = name
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
        table(m.persons_table)))["n"]
    return {"column": m.key.columns[0], "persons": m.rows, "rows": int(rows or 0)}
