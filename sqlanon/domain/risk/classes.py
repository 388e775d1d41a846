"""The equivalence classes of a relation's quasi-identifiers, counted on the engine.

One ``GROUP BY`` of the quasi-identifiers gives, per class, its QI values, its number of records
and (with a sampling weight) the sum of the weights; the estimators then work on this class table in
numpy and never see the rows. Per-record results are written back on the engine by joining the
class table to the relation on the QI values (NULL matching NULL), so every record of a class gets
its class's figures.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from sqlglot import exp

from sqlanon.errors import SpecError
from sqlanon.sql.nodes import alias, col, count_star, internal, table

if TYPE_CHECKING:
    import pyarrow as pa

    from sqlanon.engines.base import Engine

Relation = str | exp.Expression
"""A table or view name, or a sqlglot relation (a table or a subquery)."""

_N, _W, _WMIN, _WN = internal("n"), internal("w"), internal("wmin"), internal("wn")


@dataclass(frozen=True)
class ClassTable:
    """The classes of a relation over its quasi-identifiers, one row per class."""

    qis: tuple[str, ...]
    values: pa.Table
    """The QI values of each class (the engine's types)."""
    codes: np.ndarray
    """``(classes, QIs)`` integer codes of the values, equal codes for equal values; -1 for NULL."""
    count: np.ndarray
    """Records per class (the sample frequency)."""
    weight: np.ndarray | None
    """Sum of the sampling weights per class, when a weight was given."""
    relation: exp.Expression
    """The relation the classes were counted on."""
    columns: tuple[str, ...] = ()
    """The relation's columns, when it was given by name."""

    @property
    def missing(self) -> np.ndarray:
        """``(classes, QIs)``: where a class's value is NULL."""
        return self.codes < 0

    @property
    def records(self) -> int:
        return int(self.count.sum())

    def __len__(self) -> int:
        return int(self.count.shape[0])


def source(engine: Engine, relation: Relation, qis: list[str] | tuple[str, ...],
           weight: str | None = None, *, what: str = "risk") -> tuple[exp.Expression, tuple[str, ...]]:
    """The relation as a sqlglot relation and, when it is named, its columns, after checking that it
    and the columns named exist."""
    if not qis:
        raise SpecError("at least one quasi-identifier is needed", path=f"{what}.qis")
    if len(set(qis)) != len(qis):
        raise SpecError(f"quasi-identifiers repeat: {list(qis)}", path=f"{what}.qis")
    if isinstance(relation, exp.Expression):
        return relation, ()
    if not isinstance(relation, str) or not relation:
        raise SpecError(f"the relation must be a table name, got {relation!r}", path=f"{what}.relation")
    if not engine.relation_exists(relation):
        raise SpecError(f"no table or view named {relation!r} in the database", path=f"{what}.relation")
    names = {engine.dialect.fold(c): c for c, _ in engine.columns(relation)}
    for key, name in [("qis", q) for q in qis] + ([("weight", weight)] if weight else []):
        if engine.dialect.fold(name) not in names:
            raise SpecError(f"{relation!r} has no column {name!r} (columns: {', '.join(names.values())})",
                            path=f"{what}.{key}")
    return table(relation), tuple(names.values())


def class_table(engine: Engine, relation: Relation, qis: list[str] | tuple[str, ...],
                weight: str | None = None, *, what: str = "risk") -> ClassTable:
    """One ``GROUP BY`` of ``qis``: each class's values, its records and the sum of its weights.

    Weights must be positive: a NULL or non-positive weight is refused, naming the column."""
    import pyarrow as pa

    rel, columns = source(engine, relation, qis, weight, what=what)
    measures = [alias(count_star(), _N)]
    if weight:
        w = col(weight)
        measures += [alias(exp.Sum(this=exp.cast(w.copy(), exp.DataType.build("double"))), _W),
                     alias(exp.Min(this=w.copy()), _WMIN), alias(exp.Count(this=w.copy()), _WN)]
    query = exp.select(*[col(q) for q in qis], *measures) \
        .from_(exp.alias_(exp.Subquery(this=rel.copy()) if not isinstance(rel, exp.Table) else rel.copy(),
                          internal("s"), table=True)) \
        .group_by(*[col(q) for q in qis])
    with engine.purpose(f"{what}: class counts"):
        data = engine.fetch_arrow(query)
    count = np.asarray(data.column(_N).to_numpy(zero_copy_only=False), dtype=np.int64)
    total = None
    if weight:
        wn = np.asarray(data.column(_WN).to_numpy(zero_copy_only=False), dtype=np.int64)
        wmin = np.asarray(data.column(_WMIN).to_numpy(zero_copy_only=False), dtype=np.float64)
        if (wn < count).any():
            raise SpecError(f"weight column {weight!r} has NULL values", path=f"{what}.weight")
        if len(wmin) and np.nanmin(wmin) <= 0:
            raise SpecError(f"weight column {weight!r} has values <= 0 (weights are the number of "
                            "population units each record stands for)", path=f"{what}.weight")
        total = np.asarray(data.column(_W).to_numpy(zero_copy_only=False), dtype=np.float64)
    values = data.select(list(range(len(qis))))
    codes = np.empty((len(count), len(qis)), dtype=np.int64, order="F")  # filled column by column
    for j in range(len(qis)):
        column = values.column(j).combine_chunks() if values.num_rows else pa.array([], values.column(j).type)
        encoded = column.dictionary_encode()
        codes[:, j] = np.asarray(encoded.indices.fill_null(-1).to_numpy(zero_copy_only=False), dtype=np.int64)
    return ClassTable(tuple(qis), values, codes, count, total, rel, columns)


@contextlib.contextmanager
def _uploaded(engine: Engine, data: pa.Table) -> Iterator[str]:
    name = internal(f"classes_{uuid.uuid4().hex[:12]}")
    engine.create_table_from_arrow(name, data, temporary=True)
    try:
        yield name
    finally:
        engine.drop(name)


def write_per_record(engine: Engine, classes: ClassTable, figures: Mapping[str, np.ndarray],
                     output: str, *, what: str = "risk") -> None:
    """Create (or replace) table ``output``: every column of the relation and, per record, its
    class's ``figures`` (joined on the QI values, NULL matching NULL)."""
    import pyarrow as pa

    rel = classes.relation
    if not isinstance(output, str) or not output:
        raise SpecError(f"the per-record table needs a name, got {output!r}", path=f"{what}.output")
    if isinstance(rel, exp.Table):
        name = rel.name
        if engine.dialect.fold(output) == engine.dialect.fold(name):
            raise SpecError(f"the per-record table cannot replace the table it is computed from "
                            f"({name!r}); name another table", path=f"{what}.output")
    taken = {engine.dialect.fold(c) for c in classes.columns}
    clash = [f for f in figures if engine.dialect.fold(f) in taken]
    if clash:
        named = repr(rel.name) if isinstance(rel, exp.Table) else "the relation"
        raise SpecError(f"{named} already has a column named {clash[0]!r}; rename it to write the "
                        "per-record figures", path=f"{what}.output")
    qcols = [internal(f"q{j}") for j in range(len(classes.qis))]
    data = pa.table({**{qcols[j]: classes.values.column(j) for j in range(len(qcols))},
                     **{k: pa.array(np.asarray(v)) for k, v in figures.items()}})
    with engine.purpose(f"{what}: per-record table {output}"), _uploaded(engine, data) as uploaded:
        on = exp.and_(*[exp.NullSafeEQ(this=col(q, "s"), expression=col(c, "c"))
                        for q, c in zip(classes.qis, qcols)])
        query = exp.select(exp.Column(this=exp.Star(), table=exp.to_identifier("s", quoted=True)),
                           *[col(k, "c") for k in figures]) \
            .from_(exp.alias_(exp.Subquery(this=rel.copy()) if not isinstance(rel, exp.Table) else rel.copy(),
                              "s", table=True, quoted=True)) \
            .join(exp.alias_(table(uploaded), "c", table=True, quoted=True), on=on)
        engine.create_table_as(output, query, replace=True)


__all__ = ["ClassTable", "Relation", "class_table", "source", "write_per_record"]
