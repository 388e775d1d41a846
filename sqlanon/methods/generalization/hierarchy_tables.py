"""The quasi-identifiers' hierarchies in the database: look-up tables, leaf codes, coverage checks."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np
from sqlglot import exp

from sqlanon.compile.generalize import Generalizer, lookup_columns
from sqlanon.domain.hierarchy.base import Hierarchy, HierarchyTable
from sqlanon.domain.hierarchy.table import TableHierarchy
from sqlanon.engines.base import Engine
from sqlanon.errors import HierarchyError
from sqlanon.methods.generalization.temporaries import Temporaries, attribute_part
from sqlanon.sql.nodes import alias, as_text, col, internal, lit


class HierarchyTables:
    """The hierarchies of one problem's quasi-identifiers, as relations of its engine.

    Args:
        qis: the quasi-identifiers, in the problem's order (it numbers the temporary tables).
        hierarchies: each quasi-identifier's hierarchy.
        temporaries: where look-up and code tables are created.
        raw: the relation of raw values a rule-based hierarchy's table is built over (on first use).
        source: the table checked: a rule-based hierarchy's table is built over its distinct values
            when ``raw_built`` says the raw relation does not exist yet (building it only for this
            costs a scan of every quasi-identifier).
    """

    def __init__(self, qis: Sequence[str], hierarchies: Mapping[str, Hierarchy], temporaries: Temporaries,
                 raw: Callable[[], exp.Table], *, source: exp.Expression | None = None,
                 raw_built: Callable[[], bool] = lambda: True) -> None:
        self.qis = list(qis)
        self.hierarchies = hierarchies
        self.temporaries = temporaries
        self._raw = raw
        self._source = source
        self._raw_built = raw_built
        self.lookups: dict[str, exp.Expression] = {}
        self._generalizer: Generalizer | None = None
        self._leaf_codes: dict[str, tuple[exp.Expression, list[str]]] = {}
        self._built: dict[str, HierarchyTable] = {}

    @property
    def engine(self) -> Engine:
        return self.temporaries.engine

    @property
    def generalizer(self) -> Generalizer:
        """Generalizes raw rows, through look-up tables created on first use."""
        if self._generalizer is None:
            for attribute in self.qis:
                h = self.hierarchies[attribute]
                if isinstance(h, TableHierarchy) and h.needs_lookup():
                    self.lookup(attribute)
            self._generalizer = Generalizer(self.qis, self.hierarchies, self.lookups)
        return self._generalizer

    def lookup(self, attribute: str) -> exp.Expression:
        """The look-up table of a large table hierarchy (``leaf``, ``l1``..), created on first use."""
        if attribute not in self.lookups:
            h = self.hierarchies[attribute]
            assert isinstance(h, TableHierarchy)
            i = self.qis.index(attribute)
            data = h.table().lookup_arrow(lookup_columns(h)) if self.engine.capabilities.arrow_in else None
            self.lookups[attribute] = self.temporaries.arrow(f"lookup{i}", data) \
                if data is not None else self.temporaries.rows(
                    f"lookup{i}", [(c, "varchar") for c in lookup_columns(h)], h.lookup_rows())
        return self.lookups[attribute]

    def single_labels(self, levels: Mapping[str, int]) -> dict[str, str]:
        """Per large table hierarchy whose level has one label, that label: a statement that knows
        every value to be a leaf writes it instead of joining the look-up table
        (:attr:`Generalizer.fixed`)."""
        out: dict[str, str] = {}
        for a in self.qis:
            h, level = self.hierarchies[a], int(levels.get(a, 0))
            if level and isinstance(h, TableHierarchy) and h.needs_lookup() \
                    and (label := h.single_label(level)) is not None:
                out[a] = label
        return out

    def codes_from_lookup(self, attribute: str, i: int, level: int, *, decode: bool = True
                          ) -> tuple[exp.Table, exp.Table | None]:
        """The code (``leaf``, ``code``) and decode (``code``, ``label``) tables of a large hierarchy
        at ``level``, numbered in SQL from its look-up table: the hierarchy is loaded once (the
        output joins the same table), not once more as codes. ``decode`` False: no decode table
        (a scan that keeps the codes as class keys)."""
        label = col(internal(f"l{level}"))
        codes = exp.select(
            alias(col(internal("leaf")), "leaf"),
            alias(exp.Sub(this=exp.Window(this=exp.DenseRank(), order=exp.Order(
                expressions=[exp.Ordered(this=label.copy())])), expression=lit(1)), "code"),
            alias(label, "label")).from_(self.lookup(attribute).copy())
        lk = self.temporaries.lasting(f"code{i}", codes)
        dec = self.temporaries.lasting(f"decode{i}", exp.select(col("code"), col("label")).distinct()
                                       .from_(lk.copy())) if decode else None
        return lk, dec

    def leaf_codes(self, attribute: str) -> tuple[exp.Expression, list[str]]:
        """A relation (``leaf`` key, ``code`` int) numbering a table hierarchy's leaves, and the leaf
        keys in code order. The first call numbers every quasi-identifier whose hierarchy table is at
        hand (a file's, or one built over the data already) in one temporary table (one statement,
        not one per attribute); each relation reads its part."""
        if attribute not in self._leaf_codes:
            ready = [a for a in self.qis if a not in self._leaf_codes
                     and (self.hierarchies[a].table() is not None or a in self._built)]
            together = ready if attribute in ready else [attribute]
            rows: list[tuple[int, str, int]] = []
            listed: dict[str, list[str]] = {}
            for a in together:
                table_, i = self.table(a), self.qis.index(a)
                leaves = table_.lookup_arrow(["leaf"]) if self.engine.capabilities.arrow_in else None
                if leaves is not None:  # held as Arrow (a large file): its own table, sent as Arrow
                    from sqlanon.domain.arrow_buffers import int64_array

                    keys = [k for k in table_.level_values(0) if k is not None]
                    codes = int64_array(np.arange(len(keys), dtype=np.int64))
                    rel = self.temporaries.arrow(f"leafcode{i}", leaves.append_column("code", codes))
                    self._leaf_codes[a] = (rel, keys)
                else:
                    listed[a] = [k for k in table_.mapping if k is not None]
                    rows += [(i, k, j) for j, k in enumerate(listed[a])]
            if listed:
                name = "leafcode" if together is ready else f"leafcode{self.qis.index(attribute)}"
                table_rel = self.temporaries.rows(
                    name, [("attribute", "int"), ("leaf", "varchar"), ("code", "int")], rows)
                for a, keys in listed.items():
                    part = attribute_part(table_rel, ("leaf", "code"), self.qis.index(a))
                    self._leaf_codes[a] = (part, keys)
        return self._leaf_codes[attribute]

    def table(self, attribute: str) -> HierarchyTable:
        """The hierarchy as rows: the file for table hierarchies, else built over the data's values.

        Built over the source's distinct values, the first call builds every such table of the
        quasi-identifiers with one query (a UNION ALL tagged by attribute), not one scan each."""
        h = self.hierarchies[attribute]
        table_ = h.table()
        if table_ is not None:
            return table_
        if attribute not in self._built:
            levels = self._levels(attribute)
            if self._source is not None and not self._raw_built() and self._over_values(levels):
                self._build_over_source([a for a in self.qis if a not in self._built and self.hierarchies[
                    a].table() is None and self._over_values(self._levels(a))] or [attribute])
            else:
                q = exp.select(*[alias(e, f"l{lv}") for lv, e in enumerate(levels)]).distinct().from_(
                    self._raw().copy())
                self._built[attribute] = HierarchyTable(tuple(tuple(r) for r in self.engine.fetch(q)[1]))
        return self._built[attribute]

    def _levels(self, attribute: str) -> list[exp.Expression]:
        """Every level of a rule-based hierarchy's attribute as text, the value itself first."""
        h, c = self.hierarchies[attribute], col(attribute)
        return [as_text(h.expression(c, lv)) if lv else as_text(c) for lv in range(h.height + 1)]

    @staticmethod
    def _over_values(levels: Sequence[exp.Expression]) -> bool:
        """Levels computed from each value alone (no window or aggregate over the column)."""
        return not any(e.find(exp.Window, exp.AggFunc) for e in levels)

    def _build_over_source(self, attributes: Sequence[str]) -> None:
        """The tables of ``attributes`` over the source's distinct values, with one query: each part
        is tagged by the attribute's index, its levels padded with NULLs to the tallest hierarchy."""
        assert self._source is not None
        width = max(self.hierarchies[a].height for a in attributes) + 1
        parts = []
        for i, a in enumerate(attributes):
            levels = self._levels(a)
            levels += [as_text(exp.null()) for _ in range(width - len(levels))]
            values = exp.select(col(a)).distinct().from_(self._source.copy()).subquery(internal("v"))
            parts.append(exp.select(alias(lit(i), "a"), *[alias(e, f"l{lv}") for lv, e in enumerate(levels)])
                         .distinct().from_(values))
        query = parts[0] if len(parts) == 1 else exp.union(*parts, distinct=False)
        rows: list[list[tuple[str | None, ...]]] = [[] for _ in attributes]
        for r in self.engine.fetch(query)[1]:
            rows[int(r[0])].append(tuple(r[1:]))
        for a, found in zip(attributes, rows):
            self._built[a] = HierarchyTable(tuple(r[:self.hierarchies[a].height + 1] for r in found))

    def validate_coverage(self, relation: exp.Expression, attributes: Sequence[str]) -> None:
        """Every value of ``attributes`` in ``relation`` must be a leaf of its table hierarchy.

        One query reads the distinct values of them all (a UNION ALL, tagged by attribute): on an
        engine where each statement is a job or a round trip, one instead of one per attribute."""
        checked = {a: h for a in attributes if isinstance(h := self.hierarchies[a], TableHierarchy)}
        if not checked:
            return
        parts = [exp.select(exp.alias_(lit(i), "a", quoted=True),
                            exp.alias_(h.key(col(a)), "v", quoted=True)).distinct().from_(relation.copy())
                 for i, (a, h) in enumerate(checked.items())]
        values = parts[0] if len(parts) == 1 else exp.union(*parts, distinct=False)
        tables = [h.table() for h in checked.values()]
        for (a, h), missing in zip(checked.items(), self._not_leaves(values, tables)):
            if missing:
                shown = ", ".join("NULL" if v is None else repr(v) for v in sorted(
                    missing, key=lambda v: (v is None, str(v)))[:5])
                more = f" and {len(missing) - 5} more" if len(missing) > 5 else ""
                hint = (" (NULL needs a hierarchy row for it: set `null:` to its leaf label)"
                        if None in missing else "")
                raise HierarchyError(
                    f"{len(missing)} value(s) of attribute {a!r} are missing from the "
                    f"hierarchy: {shown}{more}{hint}", source=h.source)

    def _not_leaves(self, values: exp.Expression, tables: Sequence[HierarchyTable]
                    ) -> list[list[str | None]]:
        """Per table, the values of the query ``values`` (columns ``a``, the table's index, and
        ``v``) that are no leaf of it."""
        if not any(t.leaf_array() is not None for t in tables) or not self.engine.capabilities.arrow_in:
            found: list[list[str | None]] = [[] for _ in tables]
            for i, v in self.engine.fetch(values)[1]:
                if v not in tables[int(i)].leaves:
                    found[int(i)].append(v)
            return found
        from sqlanon.domain.arrow_buffers import boolean_array, compute, integers

        data = self.engine.fetch_arrow(values)
        tags, all_values = data.column(0).combine_chunks(), data.column(1).combine_chunks()
        index = integers(tags) if len(tables) > 1 else None
        out = []
        for i, table_ in enumerate(tables):
            # the mask is made in numpy: comparing in Arrow with a Python int would import pandas
            column = all_values if index is None else compute("filter", all_values,
                                                              boolean_array(index == i))
            leaves = table_.leaf_array()
            if leaves is None:
                known = table_.leaves
                out.append([v for v in column.to_pylist() if v not in known])
                continue
            if column.type != leaves.type:
                column = column.cast(leaves.type)
            known_mask = compute("is_in_meta_binary", column, leaves)  # NULL is no leaf: false
            out.append(compute("filter", column, compute("invert", known_mask)).to_pylist())
        return out

    def row_wise(self, levels: Mapping[str, int]) -> bool:
        """Whether every builder expression at ``levels`` can stand in a GROUP BY (no window/aggregate)."""
        return all(not levels[a] or isinstance(h, TableHierarchy) or h.row_wise(levels[a])
                   for a in self.qis for h in [self.hierarchies[a]])

    def checked_levels(self, levels: Mapping[str, int]) -> dict[str, int]:
        """One level per quasi-identifier (0 when not given), each within its hierarchy's height."""
        out = {a: int(levels.get(a, 0)) for a in self.qis}
        for a, lv in out.items():
            if self.hierarchies[a] is None:
                raise HierarchyError("a quasi-identifier needs a hierarchy to be generalized",
                                     path=f"attributes.{a}.hierarchy")
            if lv > self.hierarchies[a].height:
                raise HierarchyError(f"level {lv} is above the hierarchy's height "
                                     f"{self.hierarchies[a].height}", path=f"transformation.levels.{a}")
        return out
