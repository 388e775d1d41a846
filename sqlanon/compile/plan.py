"""A plan is a list of named relations, each a query over the source or earlier relations.

The same plan runs on an engine (each step materialized as a temporary table) or compiles to one
statement (each step a CTE), so what sqlanon executes and what it prints for a dialect are the same SQL.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from sqlglot import exp

from sqlanon.sql.nodes import nullsafe_join, table

__all__ = ["Plan", "nullsafe_join"]


@dataclass
class Plan:
    steps: list[tuple[str, exp.Select]] = field(default_factory=list)
    prefix: str = field(default_factory=lambda: "__sa_" + uuid.uuid4().hex[:8] + "_")

    def add(self, name: str, query: exp.Select) -> exp.Table:
        """Append a step; returns a reference to it for later steps."""
        full = self.prefix + name
        if any(n == full for n, _ in self.steps):
            raise ValueError(f"duplicate plan step {name}")
        self.steps.append((full, query))
        return table(full)

    def has(self, name: str) -> bool:
        """Whether a step ``name`` is in the plan."""
        return any(n == self.prefix + name for n, _ in self.steps)

    def ref(self, name: str) -> exp.Table:
        return table(self.prefix + name)

    def as_query(self, final: exp.Select, *, copy: bool = True, copy_steps: bool = True) -> exp.Select:
        """One statement: every step a CTE of ``final`` (``copy`` False: ``final`` itself, changed,
        for a caller that built it for this statement alone; ``copy_steps`` False: the steps
        themselves, for a plan whose steps serve this statement alone).

        The WITH clause is built in one go: ``Select.with_`` copies the whole statement, earlier CTEs
        included, on every call, which is quadratic in the plan and costly for large inline relations.
        """
        query = final.copy() if copy else final
        if not self.steps:
            return query
        ctes = [exp.CTE(this=step.copy() if copy_steps else step,
                        alias=exp.TableAlias(this=exp.to_identifier(name, quoted=True)))
                for name, step in self.steps]
        existing = query.args.get("with_")
        if existing is not None:
            existing.set("expressions", [*existing.expressions, *ctes])
        else:
            query.set("with_", exp.With(expressions=ctes))
        return query
