"""Check a transformation (a node: one level per quasi-identifier) on an engine.

The source is read once into a frequency table; every node is then checked on that table.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlglot import exp

from sqlanon.compile import checks
from sqlanon.compile.generalize import Generalizer, lookup_columns
from sqlanon.compile.plan import Plan
from sqlanon.sql.nodes import alias, as_expression, as_text, col, internal, lit, table
from sqlanon.engines.base import Engine
from sqlanon.errors import HierarchyError, InternalError
from sqlanon.domain.hierarchy.base import Hierarchy, HierarchyTable
from sqlanon.domain.hierarchy.table import TableHierarchy
from sqlanon.domain.models.base import ModelResult, PrivacyModel, stat_attribute


def suppression_budget(limit: float, n: int) -> int:
    """floor(limit · n) computed in doubles, as ARX does (0.29 · 100 gives 28)."""
    return int(math.floor(float(limit) * n))


@dataclass
class Problem:
    """Everything a check needs, resolved against the data: QIs in data column order."""

    engine: Engine
    source: exp.Expression
    qis: list[str]
    hierarchies: dict[str, Hierarchy]
    sensitive: list[str]
    models: list[PrivacyModel]
    value_order: dict[str, list[Any]] = field(default_factory=dict)
    sensitive_hierarchies: dict[str, Hierarchy] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class NodeCheck:
    """The result of checking one node."""

    levels: dict[str, int]
    rows: int
    classes: int
    outlier_rows: int
    outlier_classes: int
    suppression_limit: float
    max_suppressed: int
    min_class_size: int | None
    min_class_size_all: int
    dm_star: int
    dm_kept: int
    models: list[ModelResult]
    verdict: exp.Table
    """The per-class relation (QIs, __sa_size, statistics, __sa_keep) while the evaluator lives."""

    @property
    def anonymous(self) -> bool:
        return self.outlier_rows <= self.max_suppressed

    @property
    def suppressed_rows(self) -> int:
        return self.outlier_rows if self.anonymous else 0


class Evaluator:
    """Owns the frequency table and the hierarchy lookups of one problem on one engine."""

    def __init__(self, problem: Problem, *, scan_levels: Mapping[str, int] | None = None) -> None:
        """Read the source once.

        Without ``scan_levels`` the scan is the frequency table of the raw quasi-identifiers and
        sensitive attributes, from which any node can be checked in SQL; it is built when first
        needed (:attr:`freq`), so a search that checks nodes in memory, which reads the source once
        on its own, never builds it. With ``scan_levels`` the scan generalizes while it reads
        (hierarchy look-ups return integer codes, decoded on the small result), which is cheaper
        when one node is checked; the raw frequency table is again built only if something asks.
        """
        self.p = problem
        self.engine = problem.engine
        self.plan = Plan()
        self._temps: list[str] = []
        self._node_temps: list[str] = []
        self.lookups: dict[str, exp.Expression] = {}
        self._leaf_codes: dict[str, tuple[exp.Table, list[str]]] = {}
        self._built: dict[str, HierarchyTable] = {}
        self._freq: exp.Table | None = None
        self._generalizer: Generalizer | None = None
        self.scan_levels = dict(scan_levels) if scan_levels is not None else None
        self._node_gen: exp.Table | None = None
        if self.scan_levels is not None:
            self.scan_levels = self._checked_levels(self.scan_levels)
            if not self._row_wise(self.scan_levels):
                self.scan_levels = None
        self._rows: int | None = None
        try:
            if self.scan_levels is not None:
                self._node_gen = self._node_scan(self.scan_levels)
            self._prepare_statistics()
        except BaseException:
            self.close()
            raise

    @property
    def rows(self) -> int:
        """The number of rows of the source."""
        if self._rows is None:
            rows_of = self._node_gen if self._node_gen is not None else self.freq
            self._rows = int(self.engine.fetch_one(exp.select(exp.alias_(
                exp.Sum(this=col(checks.N)), "n", quoted=True)).from_(rows_of.copy()))["n"] or 0)
        return self._rows

    @property
    def freq(self) -> exp.Table:
        """The frequency table of the raw QIs and sensitive attributes (built on first use)."""
        self._ensure_raw()
        assert self._freq is not None
        return self._freq

    @property
    def sensitive_source(self) -> exp.Table:
        """A relation holding the raw sensitive attributes with the row count ``__sa_n``."""
        return self._node_gen if self._node_gen is not None else self.freq

    @property
    def generalizer(self) -> Generalizer:
        if self._generalizer is None:
            self._create_lookups()
            self._generalizer = Generalizer(self.p.qis, self.p.hierarchies, self.lookups)
        return self._generalizer

    def _ensure_raw(self) -> None:
        if self._freq is not None:
            return
        self._freq = self._materialize(
            "freq", checks.frequency_query(self.p.source, self.p.qis, self._sensitive_columns()))
        self.validate_coverage(self._freq, [a for a in self.p.qis])

    def _node_scan(self, levels: Mapping[str, int]) -> exp.Table:
        """One GROUP BY of the source at the node's levels; table hierarchies go through integer codes."""
        p = self.p
        src = internal("src")
        projections: list[exp.Expression] = []
        joins: list[tuple[exp.Expression, exp.Expression]] = []
        decode: dict[str, exp.Table] = {}
        for i, a in enumerate(p.qis):
            h, level = p.hierarchies[a], int(levels.get(a, 0))
            if level == 0:
                projections.append(alias(col(a, src), a))
            elif isinstance(h, TableHierarchy):
                if h.needs_lookup():
                    lk, decode[a] = self._codes_from_lookup(a, i, level)
                else:
                    rows = h.lookup_rows()
                    labels = list(dict.fromkeys(r[level] for r in rows))
                    code = {label: j for j, label in enumerate(labels)}
                    lk = self.temp_table(f"code{i}", [("leaf", "varchar"), ("code", "int")],
                                          [(r[0], code[r[level]]) for r in rows])
                    decode[a] = self.temp_table(f"decode{i}", [("code", "int"), ("label", "varchar")],
                                                 list(enumerate(labels)))
                alias_ = f"k{i}"
                joins.append((as_expression(exp.alias_(lk, alias_, table=True, quoted=True)),
                              exp.EQ(this=col("leaf", alias_), expression=h.key(col(a, src)))))
                projections.append(alias(col("code", alias_), a))
            else:
                projections.append(alias(h.expression(col(a, src), level), a))
        sensitive = self._sensitive_columns()
        q = exp.select(*projections, *[alias(col(s_, src), s_) for s_ in sensitive],
                       alias(exp.Count(this=exp.Star()), checks.N)).from_(
            exp.alias_(p.source.copy(), src, table=True, quoted=True))
        for rel, on in joins:
            q = q.join(rel, on=on, join_type="left")
        q = q.group_by(*[e.this.copy() for e in projections],
                       *[col(s_, src) for s_ in sensitive])
        scan = self._materialize("nodescan", q)
        if decode:  # a NULL code: a value (or NULL) the hierarchy lacks; one query for all attributes
            nulls = self.engine.fetch(exp.select(*[
                exp.alias_(exp.Count(this=exp.Case().when(exp.Is(this=col(a), expression=exp.Null()),
                                                          lit(1))), f"n{i}", quoted=True)
                for i, a in enumerate(decode)]).from_(scan.copy()))[1][0]
            for a, bad in zip(decode, nulls):
                if bad:
                    self.validate_coverage(self._materialize(
                        f"uncovered{p.qis.index(a)}",
                        exp.select(col(a)).distinct().from_(p.source.copy())), [a])
        self.validate_coverage(scan, [a for a in p.qis if int(levels.get(a, 0)) == 0])
        if not decode:
            return scan
        out = []
        for a in p.qis:
            if a in decode:
                out.append(alias(col("label", f"d{p.qis.index(a)}"), a))
            else:
                out.append(alias(col(a, "s"), a))
        g = exp.select(*out, *[col(s_, "s") for s_ in sensitive], col(checks.N, "s")).from_(
            exp.alias_(scan.copy(), "s", table=True, quoted=True))
        for a, d in decode.items():
            name = f"d{p.qis.index(a)}"
            g = g.join(exp.alias_(d.copy(), name, table=True, quoted=True),
                       on=exp.EQ(this=col("code", name), expression=col(a, "s")), join_type="left")
        return self._materialize("nodegen", g)

    def _codes_from_lookup(self, attribute: str, i: int, level: int) -> tuple[exp.Table, exp.Table]:
        """The code (``leaf``, ``code``) and decode (``code``, ``label``) tables of a large hierarchy
        at ``level``, numbered in SQL from its lookup table: the hierarchy is loaded once (the
        output joins the same table), not once more as codes."""
        self.generalizer  # noqa: B018 (loads the lookup tables once)
        lookup = self.lookups[attribute]
        label = col(internal(f"l{level}"))
        codes = exp.select(
            alias(col(internal("leaf")), "leaf"),
            alias(exp.Sub(this=exp.Window(this=exp.DenseRank(), order=exp.Order(
                expressions=[exp.Ordered(this=label.copy())])), expression=lit(1)), "code"),
            alias(label, "label")).from_(lookup.copy())
        lk = self.plan.prefix + f"code{i}"
        self.engine.create_table_as(lk, codes, temporary=True)
        self._temps.append(lk)
        dec = self.plan.prefix + f"decode{i}"
        self.engine.create_table_as(dec, exp.select(col("code"), col("label")).distinct().from_(table(lk)),
                                    temporary=True)
        self._temps.append(dec)
        return table(lk), table(dec)

    def leaf_codes(self, attribute: str) -> tuple[exp.Table, list[str]]:
        """A temporary table (``leaf`` key, ``code`` int) numbering a table hierarchy's leaves, and
        the leaf keys in code order (created once per evaluator)."""
        if attribute not in self._leaf_codes:
            h = self.p.hierarchies[attribute]
            keys = [k for k in h.table().mapping if k is not None]
            i = self.p.qis.index(attribute)
            rel = self.temp_table(f"leafcode{i}", [("leaf", "varchar"), ("code", "int")],
                                  [(k, j) for j, k in enumerate(keys)])
            self._leaf_codes[attribute] = (rel, keys)
        return self._leaf_codes[attribute]

    def temp_table(self, name: str, columns: list[tuple[str, str]], rows: list[tuple]) -> exp.Table:
        full = self.plan.prefix + name
        self.engine.execute(exp.Create(
            this=exp.Schema(this=table(full), expressions=[
                exp.ColumnDef(this=exp.to_identifier(c, quoted=True), kind=exp.DataType.build(t))
                for c, t in columns]),
            kind="TABLE", properties=exp.Properties(expressions=[exp.TemporaryProperty()])))
        self._temps.append(full)
        self.engine.insert_rows(full, rows)
        return table(full)

    def _sensitive_columns(self) -> list[str]:
        cols = list(self.p.sensitive)
        for m in self.p.models:
            for a in m.sensitive_attributes():
                if a not in cols and a not in self.p.qis:
                    cols.append(a)
        return cols

    def _prepare_statistics(self) -> None:
        """Statistics with a ``prepare(evaluator)`` hook validate inputs or build their relations once."""
        for s in checks.statistics_of(self.p.models):
            prepare = getattr(s, "prepare", None)
            if prepare is not None:
                prepare(self)

    def add_relation(self, name: str, query: exp.Select) -> exp.Table:
        """Materialize a relation that lives as long as the evaluator (a statistic's own input)."""
        return self._materialize(name, query)

    def own_table(self, name: str) -> None:
        """Drop a table created outside the plan (a loaded file) when the evaluator closes."""
        self._temps.append(name)

    # -- temporaries ------------------------------------------------------------------------------
    def _materialize(self, name: str, query: exp.Select, *, node: bool = False) -> exp.Table:
        ref = self.plan.add(name, query) if not node else self.plan.ref(name)
        full = ref.name
        self.engine.create_table_as(full, query, temporary=True, replace=node)
        (self._node_temps if node else self._temps).append(full)
        return ref

    def _create_lookups(self) -> None:
        for i, attribute in enumerate(self.p.qis):
            h = self.p.hierarchies[attribute]
            if isinstance(h, TableHierarchy) and h.needs_lookup():
                cols = [(c, "varchar") for c in lookup_columns(h)]
                self.lookups[attribute] = self.temp_table(f"lookup{i}", cols, h.lookup_rows())

    def validate_coverage(self, relation: exp.Table, attributes: Sequence[str]) -> None:
        """Every value of ``attributes`` in ``relation`` must be a leaf of its table hierarchy."""
        for attribute in attributes:
            h = self.p.hierarchies[attribute]
            if not isinstance(h, TableHierarchy):
                continue
            key = h.key(col(attribute))
            q = exp.select(exp.alias_(key, "v", quoted=True)).distinct().from_(relation.copy())
            names, rows = self.engine.fetch(q)
            known = h.table().mapping
            missing = [r[0] for r in rows if r[0] not in known]
            if missing:
                shown = ", ".join("NULL" if v is None else repr(v) for v in sorted(
                    missing, key=lambda v: (v is None, str(v)))[:5])
                more = f" and {len(missing) - 5} more" if len(missing) > 5 else ""
                hint = (" (NULL needs a hierarchy row for it: set `null:` to its leaf label)"
                        if None in missing else "")
                raise HierarchyError(
                    f"{len(missing)} value(s) of attribute {attribute!r} are missing from the "
                    f"hierarchy: {shown}{more}{hint}", source=h.source)

    def drop_node_temps(self) -> None:
        for name in reversed(self._node_temps):
            self.engine.drop(name)
        self._node_temps.clear()
        self.plan.steps = [(n, q) for n, q in self.plan.steps if n in self._temps]

    def close(self) -> None:
        self.drop_node_temps()
        for name in reversed(self._temps):
            try:
                self.engine.drop(name)
            except Exception:  # the connection may already be gone
                pass
        self._temps.clear()

    def hierarchy_table(self, attribute: str) -> HierarchyTable:
        """The hierarchy as rows: the file for table hierarchies, else built over the data's values."""
        h = self.p.hierarchies[attribute]
        table_ = h.table()
        if table_ is not None:
            return table_
        if attribute not in self._built:
            c = col(attribute)
            levels = [as_text(h.expression(c, lv)) if lv else as_text(c) for lv in range(h.height + 1)]
            # the attribute's distinct values; without the frequency table, from the source itself
            # (building that table only for this costs a scan of every quasi-identifier)
            if self._freq is None and not any(e.find(exp.Window, exp.AggFunc) for e in levels):
                values: exp.Expression = exp.select(c).distinct().from_(self.p.source.copy()).subquery(
                    internal("v"))
            else:
                values = self.freq.copy()
            q = exp.select(*[alias(e, f"l{lv}") for lv, e in enumerate(levels)]).distinct().from_(values)
            self._built[attribute] = HierarchyTable(tuple(tuple(r) for r in self.engine.fetch(q)[1]))
        return self._built[attribute]

    def _row_wise(self, levels: Mapping[str, int]) -> bool:
        """Whether every builder expression at ``levels`` can stand in a GROUP BY (no window/aggregate)."""
        for a in self.p.qis:
            h = self.p.hierarchies[a]
            if levels[a] and not isinstance(h, TableHierarchy):
                e = h.expression(col(a), levels[a])
                if e.find(exp.Window) is not None or e.find(exp.AggFunc) is not None:
                    return False
        return True

    def _checked_levels(self, levels: Mapping[str, int]) -> dict[str, int]:
        out = {a: int(levels.get(a, 0)) for a in self.p.qis}
        for a, lv in out.items():
            if self.p.hierarchies[a] is None:
                raise HierarchyError("a quasi-identifier needs a hierarchy to be generalized",
                                     path=f"attributes.{a}.hierarchy")
            if lv > self.p.hierarchies[a].height:
                raise HierarchyError(f"level {lv} is above the hierarchy's height "
                                     f"{self.p.hierarchies[a].height}", path=f"transformation.levels.{a}")
        return out

    # -- checking ---------------------------------------------------------------------------------
    def check(self, levels: Mapping[str, int], suppression_limit: float = 0.0) -> NodeCheck:
        """Check a node; the per-class verdict stays available until the next check."""
        self.drop_node_temps()
        p = self.p
        levels = self._checked_levels(levels)
        sensitive = self._sensitive_columns()
        if self._node_gen is not None and levels == self.scan_levels:
            gen = self._node_gen  # the scan already generalized to these levels
        else:
            gen = self._node("gen", checks.generalized_query(self.freq, self.generalizer, levels,
                                                             sensitive))
        statistics = checks.statistics_of(p.models)
        hist_attrs = sorted({a for s in statistics if (a := stat_attribute(s))})
        histograms = {
            a: self._node(f"hist{i}", checks.histogram_query(gen, p.qis, a, p.value_order.get(a)))
            for i, a in enumerate(hist_attrs)
        }
        ctx = checks.CheckContext(self.plan, list(p.qis), gen, histograms, p.value_order,
                                  p.sensitive_hierarchies, dict(p.extra, evaluator=self, levels=levels),
                                  generalizer=self.generalizer)
        stats_sql = checks.stats_query(ctx, statistics)
        # stats_query registered a "classes" step in the plan: materialize it before use
        self._materialize_pending()
        stats = self._node("stats", stats_sql)
        verdict = self._node("verdict", checks.verdict_query(stats, p.models, statistics))
        s = self.engine.fetch_one(checks.summary_query(verdict, p.models, statistics))
        rows = int(s[internal("rows")] or 0)
        if rows != self.rows:
            raise InternalError(f"classes hold {rows} rows but the table has {self.rows}")
        outlier_rows = int(s[internal("outlier_rows")])
        max_sup = suppression_budget(suppression_limit, rows)
        anonymous = outlier_rows <= max_sup
        results = []
        for i, m in enumerate(p.models):
            bad_rows = int(s[internal(f"bad_rows{i}")])
            bad_classes = int(s[internal(f"bad_classes{i}")])
            key = internal(f"ach_kept{i}") if anonymous else internal(f"ach_all{i}")
            achieved = s.get(key)
            if isinstance(achieved, (int, float)) and not isinstance(achieved, bool):
                achieved = float(achieved) if not float(achieved).is_integer() or \
                    isinstance(achieved, float) else int(achieved)
            results.append(ModelResult(m.label, anonymous or bad_rows == 0, achieved, bad_classes,
                                       bad_rows))
        classes_all = int(s[internal("classes_all")])
        kept = int(s[internal("kept_classes")])
        return NodeCheck(
            levels=levels, rows=rows, classes=kept if anonymous else classes_all,
            outlier_rows=outlier_rows, outlier_classes=classes_all - kept,
            suppression_limit=suppression_limit, max_suppressed=max_sup,
            min_class_size=(int(s[internal("min_kept")]) if s[internal("min_kept")] is not None else None)
            if anonymous else int(s[internal("min_all")]),
            min_class_size_all=int(s[internal("min_all")]),
            dm_star=int(s[internal("dm_star")]), dm_kept=int(s[internal("dm_kept")]),
            models=results, verdict=verdict)

    def _node(self, name: str, query: exp.Select) -> exp.Table:
        full = self.plan.prefix + name
        self.plan.steps.append((full, query))
        self.engine.create_table_as(full, query, temporary=True, replace=True)
        self._node_temps.append(full)
        return table(full)

    def _materialize_pending(self) -> None:
        done = set(self._temps) | set(self._node_temps)
        for name, query in self.plan.steps:
            if name not in done:
                self.engine.create_table_as(name, query, temporary=True, replace=True)
                self._node_temps.append(name)

    def __enter__(self) -> Evaluator:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
