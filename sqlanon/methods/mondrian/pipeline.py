"""A Mondrian run on an opened source: the quasi-identifiers as numbers, the rounds, the boxes and
their labels, the metrics, and the released rows as one SELECT.

Numeric quasi-identifiers are cut as they are; other quasi-identifiers as ordered codes (their
distinct values sorted, numbered from 0), mapped in the database by a join to a small code table.
A strict partitioning needs nothing of the run to be released: its partitions are the leaves of a
tree of cuts, so a row's partition is a CASE over its values and the SQL can be written anywhere. A
relaxed cut splits rows of one value by their order, so its release joins the rows to the kept work
table by the engine's row key.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
from sqlglot import exp

from sqlanon.compile.hash_text import parse_types
from sqlanon.compile.released import OutputQuery
from sqlanon.domain.metrics.numeric import is_numeric_type
from sqlanon.engines.base import internal_name
from sqlanon.errors import SpecError
from sqlanon.methods.dataset import Dataset
from sqlanon.methods.mondrian import paths, positions, released, rounds
from sqlanon.methods.mondrian.cuts import Cut, Partition, normalized_width
from sqlanon.methods.mondrian.partitioning import Options, Partitioning, Rounds
from sqlanon.methods.mondrian.privacy import CutJudge, sensitive_column
from sqlanon.methods.mondrian.settings import MondrianSettings
from sqlanon.methods.mondrian.tree import HierarchyTree
from sqlanon.spec.schema import Spec
from sqlanon.sql.dialects import DialectProfile
from sqlanon.sql.nodes import alias, as_expression, col, count_star, internal, lit, table, values_table

KEY = rounds.KEY
ORDER = internal("order")
BOXES = internal("boxes")


@dataclass
class Attribute:
    name: str
    numeric: bool
    integer: bool
    domain: list[Any] = field(default_factory=list)
    """A coded attribute's values, sorted (its codes are their positions)."""
    tree: HierarchyTree | None = None
    """A categorical attribute's hierarchy, cut by its children (codes: its leaves in tree order)."""


@dataclass
class Mondrian:
    """A finished partitioning and what its release needs."""

    settings: MondrianSettings
    attributes: list[Attribute]
    result: Partitioning
    labels: list[tuple[Any, ...]]
    """Per final partition (in ``result.partitions`` order): the released values of the attributes."""
    code_tables: list[str] = field(default_factory=list)

    @property
    def classes(self) -> int:
        return len(set(self.labels))

    def metrics(self) -> dict[str, float]:
        r = self.result
        n_attr = len(self.attributes)
        ncp = sum(p.rows * sum(self._width(p, a) for a in range(n_attr)) for p in r.partitions)
        rows = max(r.rows, 1)
        return {"ncp": ncp, "gcp": ncp / (n_attr * rows), "ncp_percent": 100 * ncp / (n_attr * rows),
                "discernibility": float(sum(p.rows ** 2 for p in r.partitions)),
                "aecs": rows / max(self.classes, 1) / self.settings.k,
                "average_partition_size": rows / max(len(r.partitions), 1)}

    def _width(self, p: Partition, a: int) -> float:
        tree, node = self.attributes[a].tree, p.nodes[a]
        if tree is not None and node is not None:
            return tree.width(node)
        return normalized_width(*p.box[a], self.result.ranges[a])

    def summary(self) -> dict[str, Any]:
        s = self.settings
        return {"method": "mondrian", "mode": s.mode, "width": s.width, "k": s.k,
                "attributes": [a.name for a in self.attributes],
                "models": [str(m) for m in s.models]}


def quasi_identifiers(spec: Spec) -> list[str]:
    return [a.name for a in spec.attributes.values() if a.role == "quasi_identifier"]


def _attributes(spec: Spec, ds: Dataset) -> list[Attribute]:
    types = dict(ds.columns)
    out = []
    for name in quasi_identifiers(spec):
        declared = spec.attributes[name].type
        numeric = declared in ("integer", "decimal") or (declared is None and is_numeric_type(types[name]))
        integer = declared == "integer" or types[name].split("(")[0].strip().upper() in (
            "INTEGER", "BIGINT", "SMALLINT", "TINYINT", "INT", "INT4", "INT8", "INT2", "HUGEINT", "LONG",
            "SHORT",
            "BYTE", "UBIGINT", "UINTEGER", "USMALLINT", "UTINYINT")
        hierarchy = spec.attributes[name].hierarchy
        table_ = hierarchy.table() if hierarchy is not None and not numeric else None
        tree = HierarchyTree(table_.rows) if table_ is not None else None
        out.append(Attribute(name, numeric, integer and numeric, tree=tree))
    return out


def _refuse_nulls(ds: Dataset, names: Sequence[str]) -> None:
    counts = [alias(exp.Sum(this=exp.Case(ifs=[exp.If(this=exp.Is(this=col(c), expression=exp.Null()),
                                                      true=lit(1))], default=lit(0))), f"c{i}")
              for i, c in enumerate(names)]
    row = ds.engine.fetch(exp.select(count_star(), *counts).from_(ds.relation.copy()))[1][0]
    for c, n in zip(names, row[1:]):
        if n:
            raise SpecError(f"column {c!r} has {n} NULL value{'s' if n != 1 else ''}; mondrian needs a value "
                            "in every row of a quasi-identifier (impute or filter them first; nothing was "
                            "written)", path=f"attributes.{c}")


def partition(spec: Spec, ds: Dataset, settings: MondrianSettings, *, keep_work: bool = False) -> Mondrian:
    """Partition the source; with ``keep_work`` (relaxed releases) the work table is kept, keyed."""
    engine = ds.engine
    if not settings.strict and not engine.capabilities.stable_row_key:
        raise SpecError(f"a relaxed cut splits rows of one value by their stored order, which {engine.name} "
                        "does not keep (it declares no stable row key); use mode: strict",
                        path="transformation.mode")
    attributes = _attributes(spec, ds)
    names = [a.name for a in attributes]
    _refuse_nulls(ds, names)
    s, src = internal("s"), internal("src")
    projections: list[exp.Expression] = []
    code_tables: list[str] = []
    relation = exp.select().from_(exp.alias_(ds.relation.copy(), s, table=True, quoted=True))
    try:
        for i, a in enumerate(attributes):
            if a.numeric:
                projections.append(alias(col(a.name, s), rounds.q(i)))
                continue
            got = engine.fetch(exp.select(col(a.name)).from_(ds.relation.copy()).distinct())[1]
            if a.tree is not None:
                missing = sorted(str(r[0]) for r in got if a.tree.code(str(r[0])) is None)
                if missing:
                    raise SpecError(f"{len(missing)} value(s) of {a.name!r} are not leaves of its hierarchy, "
                                    f"e.g. {missing[0]!r}", path=f"attributes.{a.name}.hierarchy")
                a.domain = list(a.tree.leaves)
            else:
                a.domain = sorted((r[0] for r in got), key=lambda v: (str(type(v)), v))
            name = internal_name("mondrian_codes")
            codes = pa.table({"v": pa.array([str(v) for v in a.domain]),
                              "code": pa.array(range(len(a.domain)), pa.int64())})
            engine.create_table_from_arrow(name, codes, temporary=True)
            code_tables.append(name)
            m = internal(f"m{i}")
            relation = relation.join(exp.alias_(table(name), m, table=True, quoted=True), join_type="inner",
                                     on=exp.EQ(this=exp.cast(col(a.name, s), exp.DataType.build("varchar")),
                                               expression=col("v", m)))
            projections.append(alias(col("code", m), rounds.q(i)))
        sensitive = _sensitive(settings)
        for j, name in enumerate(sensitive):
            projections.append(alias(col(name, s), sensitive_column(j)))
        needs_key = keep_work and not settings.strict
        if needs_key:
            projections.append(alias(engine.row_key(s), KEY))
        if not settings.strict:
            projections.append(alias(engine.row_order(s), ORDER))
        frm = as_expression(exp.alias_(exp.Subquery(this=relation.select(*projections)), src, quoted=True))
        values = [col(rounds.q(i), src) for i in range(len(attributes))]
        extra = [alias(col(KEY, src), KEY)] if needs_key else []
        extra += [alias(col(sensitive_column(j), src), sensitive_column(j)) for j in range(len(sensitive))]
        in_memory, asked = paths.in_memory(engine, frm, settings, [a.tree for a in attributes],
                                           order=None if settings.strict else col(ORDER, src),
                                           key=col(KEY, src) if needs_key else None)
        if in_memory is not None:
            return _finish(settings, attributes, in_memory)
        runner = Rounds(engine, frm, values, Options(settings.k, settings.strict, settings.exact),
                        order=None if settings.strict else col(ORDER, src), extra=extra,
                        hierarchies=[a.tree for a in attributes])
        judge = CutJudge(engine, settings.models, sensitive,
                         {a: spec.attributes[a].order for a in sensitive}, len(attributes)) \
            if settings.models else None
        result = runner.run(keep_work=needs_key, allowed=judge)
        result.queries += asked
    finally:
        for name in code_tables:
            engine.drop(name)
    return _finish(settings, attributes, result)


def _finish(settings: MondrianSettings, attributes: list[Attribute], result: Partitioning) -> Mondrian:
    labels = [_labels(p, attributes, settings) for p in result.partitions]
    return Mondrian(settings, attributes, result, labels)


def _sensitive(settings: MondrianSettings) -> list[str]:
    return sorted({a for m in settings.models for a in m.sensitive_attributes()})


def _number(v: float, integer: bool) -> Any:
    if integer or float(v).is_integer():
        return int(v)
    return float(v)


def _labels(p: Partition, attributes: Sequence[Attribute], settings: MondrianSettings) -> tuple[Any, ...]:
    out: list[Any] = []
    for a, (low, high), node in zip(attributes, p.box, p.nodes):
        if a.tree is not None and node is not None:
            out.append(a.tree.label(node))
        elif not a.numeric:
            values = [str(v) for v in a.domain[int(low):int(high) + 1]]
            out.append(values[0] if len(values) == 1 else "{" + ",".join(values) + "}")
        elif settings.intervals == "columns":
            out += [_number(low, a.integer), _number(high, a.integer)]
        else:
            lo, hi = _number(low, a.integer), _number(high, a.integer)
            out.append(str(lo) if lo == hi else f"[{lo}-{hi}]")
    return tuple(out)


def label_columns(m: Mondrian) -> dict[str, list[str]]:
    """Per attribute, the released column(s) of its box."""
    out: dict[str, list[str]] = {}
    for a in m.attributes:
        out[a.name] = [f"{a.name}_lo", f"{a.name}_hi"] if a.numeric and m.settings.intervals == "columns" \
            else [a.name]
    return out


def _within(a: Attribute, low: float, high: float, rel: str) -> exp.Expression:
    """The row's value of a coded attribute is one of the codes ``low..high``."""
    return exp.In(this=exp.cast(col(a.name, rel), exp.DataType.build("varchar")),
                  expressions=[lit(str(v)) for v in a.domain[int(low):int(high) + 1]])


def _value(a: Attribute, cut: Cut, rel: str) -> exp.Expression:
    """``value <= s`` for a strict cut, on the row's own value (a coded attribute: its left values)."""
    assert cut.s is not None
    if a.numeric:
        return exp.LTE(this=col(a.name, rel), expression=lit(_number(cut.s, a.integer)))
    left = a.domain[:int(cut.s) + 1]
    return exp.In(this=exp.cast(col(a.name, rel), exp.DataType.build("varchar")),
                  expressions=[lit(str(v)) for v in left])


def partition_expression(m: Mondrian, rel: str) -> exp.Expression:
    """A strict partitioning's partition id for a row, as nested CASEs over its values."""
    cuts = m.result.cuts

    def node(pid: int) -> exp.Expression:
        cut = cuts.get(pid)
        if cut is None:
            return lit(pid)
        a = m.attributes[cut.attribute]
        if cut.child_of_value is not None:
            *first, last = cut.children
            if not first:  # one child holds every row: a specialization, no choice
                return node(last.pid)
            return exp.Case(ifs=[exp.If(this=_within(a, *c.box[cut.attribute], rel), true=node(c.pid))
                                 for c in first], default=node(last.pid))
        return exp.Case(ifs=[exp.If(this=_value(m.attributes[cut.attribute], cut, rel),
                                    true=node(cut.children[0].pid))], default=node(cut.children[1].pid))

    return node(0)


def output_query(spec: Spec, ds: Dataset, m: Mondrian, target: DialectProfile,
                 types: dict[str, exp.DataType] | None = None,
                 labelled: exp.Table | None = None, runs: exp.Table | None = None) -> OutputQuery:
    """The released rows: every quasi-identifier replaced by its partition's box (read from
    ``labelled``, a table of :func:`~sqlanon.methods.mondrian.released.labelled_tuples`, when given);
    a relaxed partitioning's rows found by ``runs`` (a table of
    :func:`~sqlanon.methods.mondrian.positions.runs_query`) when given, else by the work table."""
    s, r, b = internal("s"), internal("r"), internal("b")
    columns = label_columns(m)
    flat = [c for cs in columns.values() for c in cs]
    box_names = [internal(f"box{i}") for i in range(len(flat))]
    source = exp.alias_(ds.relation.copy(), s, table=True, quoted=True)
    if labelled is not None:
        joined = exp.select(exp.Star()).from_(source, copy=False).join(
            exp.alias_(labelled, b, table=True, quoted=True), join_type="inner",
            on=released.join_condition(m, s, b, ds.engine), copy=False)
        r = s
    else:
        boxes = values_table([(p.pid, *labels) for p, labels in zip(m.result.partitions, m.labels)],
                             [rounds.PID, *box_names], b, dialect=target.sqlglot)
        on = exp.EQ(this=col(rounds.PID, r), expression=col(rounds.PID, b))
    if labelled is None and m.settings.strict:
        inner = exp.select(exp.Star(), alias(partition_expression(m, s), rounds.PID)) \
            .from_(source, copy=False)
        rows = as_expression(exp.alias_(exp.Subquery(this=inner), r, quoted=True, copy=False))
        joined = exp.select(exp.Star()).from_(rows, copy=False).join(boxes, join_type="inner", on=on,
                                                                     copy=False)
    elif labelled is None and runs is not None:
        g = internal("g")
        joined = exp.select(exp.Star()).from_(positions.numbered_source(ds, r), copy=False) \
            .join(exp.alias_(runs, g, table=True, quoted=True), join_type="inner",
                  on=positions.join_condition(m, r, g), copy=False) \
            .join(boxes, join_type="inner", on=exp.EQ(this=col(rounds.PID, g), expression=col(rounds.PID, b)),
                  copy=False)
    elif labelled is None:
        assert m.result.work is not None
        w = internal("w")
        key_s = ds.engine.row_key(s)
        joined = exp.select(exp.Star()).from_(source, copy=False) \
            .join(exp.alias_(table(m.result.work), w, table=True, quoted=True), join_type="inner",
                  on=exp.EQ(this=key_s, expression=col(KEY, w)), copy=False) \
            .join(boxes, join_type="inner", on=exp.EQ(this=col(rounds.PID, w), expression=col(rounds.PID, b)),
                  copy=False)
        r = s
    out = OutputQuery(exp.select(), types=dict(types or {}))
    projections: list[exp.Expression] = []
    position = dict(zip(flat, box_names))
    # a numeric box as two columns keeps its column's type, whichever table the labels come from
    kept = parse_types(ds.columns, ds.engine.dialect.sqlglot) if m.settings.intervals == "columns" else {}
    for c in ds.column_names:
        if c in columns:
            projections += [alias(exp.cast(col(position[name], b), kept[c]) if name != c and c in kept
                                  else col(position[name], b), name) for name in columns[c]]
        elif (column := out.released(spec, c, col(c, r), target)) is not None:
            projections.append(column)
    out.query = joined.select(*projections, append=False, copy=False)
    return out
