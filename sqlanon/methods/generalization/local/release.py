"""The rows of a local recoding: each generalized at the level vector of the step that released it.

Which step released a row depends only on its quasi-identifiers' leaves, so the steps are one small
table (the distinct leaf combinations of the frequency table and their step) that the output joins on
the hierarchy keys. Each quasi-identifier is a CASE over the steps' levels; rows no step released are
suppressed as the spec says (left out, or every quasi-identifier ``*``). A row whose combination the
table does not hold (a view reading rows added later) is left out: no step checked it. The table is
temporary for ``table`` and ``in_place``, and kept as ``<output>__groups`` for a view or printed SQL.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
from sqlglot import exp

from sqlanon.compile.generalize import Generalizer, lookup_values
from sqlanon.compile.hash_text import declared_types, parse_types
from sqlanon.compile.released import OutputQuery
from sqlanon.domain.hierarchy.base import TOP
from sqlanon.domain.hierarchy.table import TableHierarchy
from sqlanon.methods.base import Release
from sqlanon.methods.generalization.local.iterate import SUPPRESSED, LocalResult
from sqlanon.sql.nodes import alias, as_expression, as_text, col, internal, lit, table

if TYPE_CHECKING:
    from sqlanon.methods.dataset import Dataset
    from sqlanon.methods.generalization.evaluator import Evaluator
    from sqlanon.methods.generalization.search.fast import FastEvaluator
    from sqlanon.spec.schema import Spec
    from sqlanon.sql.dialects import DialectProfile

ROWS = internal("r")
STEPS = internal("s")
STEP = internal("step")


def key_column(i: int) -> str:
    return internal(f"q{i}")


def step_table(fast: FastEvaluator, result: LocalResult) -> pa.Table:
    """The distinct leaf combinations of the loaded frequency table with the step that released them."""
    leaf = np.stack(fast.leaf_index, axis=1) if fast.leaf_index else np.zeros((fast.rows, 0), np.int64)
    combos, first = np.unique(leaf, axis=0, return_index=True)
    columns = {key_column(i): pa.array(np.asarray(fast.leaves(i).keys, dtype=object)[combos[:, i]],
                                       type=pa.string())
               for i in range(leaf.shape[1])}
    columns[STEP] = pa.array(result.step_of_row[first], type=pa.int64())
    return pa.table(columns)


class LocalRelease(Release):
    """A local recoding's rows for the writer (:mod:`sqlanon.outputs.writer`)."""

    def __init__(self, spec: Spec, columns: list[str], evaluator: Evaluator, fast: FastEvaluator,
                 result: LocalResult, *, portable: bool) -> None:
        self.spec, self.columns, self.ev, self.fast, self.result = spec, columns, evaluator, fast, result
        self.portable = portable
        self.table: exp.Table | None = None
        self._temporary: str | None = None

    def prepare(self, ds: Dataset, *, keep: str | None = None) -> None:
        data = step_table(self.fast, self.result)
        if keep is not None:
            ds.engine.create_table_from_arrow(keep, data, schema=ds.schema)
            self.table = table(keep, ds.schema)
        else:
            self._temporary = internal(f"steps_{uuid.uuid4().hex[:12]}")
            ds.engine.create_table_from_arrow(self._temporary, data, temporary=True)
            self.table = table(self._temporary)

    def close(self, ds: Dataset) -> None:
        if self._temporary is not None:
            ds.engine.drop(self._temporary)
            self._temporary = None

    def query(self, target: DialectProfile) -> OutputQuery:
        assert self.table is not None, "prepare() first"
        p = self.ev.p
        steps = self.result.steps
        top = {a: max(s.levels[i] for s in steps) for i, a in enumerate(p.qis)}
        lookups: dict[str, exp.Expression] = {}
        ctes: list[tuple[str, exp.Expression]] = []
        loaded = self.ev.generalizer.lookups if not self.portable else {}
        for i, a in enumerate(p.qis):
            h = p.hierarchies[a]
            if top[a] and isinstance(h, TableHierarchy) and h.needs_lookup():
                if a in loaded:
                    lookups[a] = loaded[a]
                    continue
                name = internal(f"lookup{i}")
                ctes.append((name, exp.select(exp.Star()).from_(lookup_values(h, internal("v"), target))))
                lookups[a] = table(name)
        g = Generalizer(p.qis, p.hierarchies, lookups)
        step = col(STEP, STEPS)
        mask = self.spec.transformation.suppressed == "mask"
        types = {**declared_types(p.attribute_types),
                 **parse_types(p.column_types.items(), (p.engine.dialect if p.engine is not None
                                                        else target).sqlglot)}
        out = OutputQuery(exp.select(), types=types)
        projections: list[exp.Expression] = []
        for c in self.columns:
            if c in p.qis:
                projections.append(alias(self._value(g, c, step, mask), c))
            elif (released := out.released(self.spec, c, col(c, ROWS), target)) is not None:
                projections.append(released)
        src = as_expression(exp.alias_(p.source.copy(), ROWS, table=True, quoted=True))
        on = as_expression(exp.and_(*[
            exp.NullSafeEQ(this=p.hierarchies[a].key(col(a, ROWS)), expression=col(key_column(i), STEPS))
            for i, a in enumerate(p.qis)]))
        query = exp.select(*projections).from_(src).join(
            exp.alias_(self.table.copy(), STEPS, table=True, quoted=True), on=on, join_type="inner")
        for rel, cond in g.joins(top, ROWS):
            query = query.join(rel, on=cond, join_type="left", copy=False)
        if not mask:
            query = query.where(exp.NEQ(this=step.copy(), expression=lit(SUPPRESSED)))
        for name, cte in ctes:
            query = query.with_(name, as_=cte, copy=False)
        out.query = query
        return out

    def _value(self, g: Generalizer, attribute: str, step: exp.Expression, mask: bool) -> exp.Expression:
        i = self.ev.p.qis.index(attribute)
        levels = [s.levels[i] for s in self.result.steps]
        if not any(levels) and not mask:
            return col(attribute, ROWS)
        case = exp.Case()
        for number, level in enumerate(levels):
            case = case.when(exp.EQ(this=step.copy(), expression=lit(number)),
                             as_text(g.expression(attribute, level, ROWS)))
        return case.else_(lit(TOP)) if mask else case
