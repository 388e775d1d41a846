"""The temporary relations of one problem on one engine: created through its plan, dropped at the end.

Two lifetimes: *lasting* relations (the frequency table, hierarchy look-ups, a statistic's own input)
live until :meth:`Temporaries.close`; *node* relations (one node's generalized table, histograms,
statistics, verdict) live until the next node is checked (:meth:`Temporaries.drop_node`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlglot import exp

from sqlanon.compile.plan import Plan
from sqlanon.engines.base import Engine
from sqlanon.sql.nodes import col, lit, table

if TYPE_CHECKING:
    import pyarrow as pa


def attribute_part(relation: exp.Table, columns: tuple[str, ...], attribute: int) -> exp.Expression:
    """The rows of one attribute (column ``attribute`` equal to its index) of a table shared by
    several attributes, as a subquery of ``columns``: one table instead of one per attribute."""
    return exp.select(*map(col, columns)).from_(relation.copy()).where(
        exp.EQ(this=col("attribute"), expression=lit(attribute))).subquery()


class Temporaries:
    """Creates and drops the temporary tables of one evaluator; every name carries the plan's prefix."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.plan = Plan()
        self._lasting: list[str] = []
        self._node: list[str] = []
        self._node_views: list[str] = []

    def name(self, name: str) -> str:
        """The full name a relation called ``name`` gets."""
        return self.plan.prefix + name

    def rows(self, name: str, columns: list[tuple[str, str]], rows: list[tuple]) -> exp.Table:
        """A lasting temporary table of ``columns`` (name, SQL type) holding ``rows``."""
        full = self.name(name)
        self.engine.execute(exp.Create(
            this=exp.Schema(this=table(full), expressions=[
                exp.ColumnDef(this=exp.to_identifier(c, quoted=True), kind=exp.DataType.build(t))
                for c, t in columns]),
            kind="TABLE", properties=exp.Properties(expressions=[exp.TemporaryProperty()])))
        self._lasting.append(full)
        self.engine.insert_rows(full, rows)
        return table(full)

    def arrow(self, name: str, data: pa.Table) -> exp.Table:
        """A lasting temporary table holding ``data`` (columns typed from the Arrow types)."""
        full = self.name(name)
        self.engine.create_table_from_arrow(full, data, temporary=True)
        self._lasting.append(full)
        return table(full)

    def lasting(self, name: str, query: exp.Select) -> exp.Table:
        """Materialize ``query`` as a plan step that lives until :meth:`close`."""
        ref = self.plan.add(name, query)
        self.engine.create_table_as(ref.name, query, temporary=True)
        self._lasting.append(ref.name)
        return ref

    def node(self, name: str, query: exp.Select) -> exp.Table:
        """Materialize ``query`` as a plan step of the node being checked."""
        full = self.name(name)
        self.plan.steps.append((full, query))
        self.engine.create_table_as(full, query, temporary=True, replace=True)
        self._node.append(full)
        return table(full)

    def node_reading_pending(self, name: str, query: exp.Select, *, view: bool = False) -> exp.Table:
        """Materialize ``query`` as a node step, the plan steps it reads that have no table yet (a
        statistic's per-class query) inlined as its CTEs: one table is written instead of one per step.

        ``view``: a temporary view instead, for a query that only projects tables already written
        (recomputing it on each read costs less than writing every class once more)."""
        done = set(self._lasting) | set(self._node) | set(self._node_views)
        pending = [(n, q) for n, q in self.plan.steps if n not in done]
        self.plan.steps = [(n, q) for n, q in self.plan.steps if n in done]
        # the pending steps leave the plan for this statement, and the caller built ``query`` for it
        query = Plan(steps=pending, prefix=self.plan.prefix).as_query(query, copy=False, copy_steps=False)
        if not view:
            return self.node(name, query)
        full = self.name(name)
        self.plan.steps.append((full, query))
        self.engine.create_view(full, query, temporary=True)
        self._node_views.append(full)
        return table(full)

    def discard(self, relation: exp.Table) -> None:
        """Drop a lasting relation now (one to be built again another way) and forget its step."""
        self.engine.drop(relation.name)
        self._lasting.remove(relation.name)
        self.plan.steps = [(n, q) for n, q in self.plan.steps if n != relation.name]

    def own(self, name: str) -> None:
        """Drop a table created outside the plan (a loaded file) at :meth:`close`."""
        self._lasting.append(name)

    def drop_node(self) -> None:
        """Drop the node's relations and forget their plan steps."""
        for name in reversed(self._node_views):
            self.engine.drop(name, kind="VIEW")
        self._node_views.clear()
        for name in reversed(self._node):
            self.engine.drop(name)
        self._node.clear()
        self.plan.steps = [(n, q) for n, q in self.plan.steps if n in self._lasting]

    def close(self) -> None:
        self.drop_node()
        for name in reversed(self._lasting):
            try:
                self.engine.drop(name)
            except Exception:  # the connection may already be gone
                pass
        self._lasting.clear()
