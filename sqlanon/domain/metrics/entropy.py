"""Distribution-based information loss: ARX's non-uniform entropy and the KL divergence.

Counts come from SQL (GROUP BY on the frequency table and the per-class verdict); the final sums run
in Python so that their floating-point order can follow ARX's.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar
from weakref import WeakKeyDictionary

from sqlglot import exp

from sqlanon.domain.hierarchy.base import Hierarchy
from sqlanon.domain.hierarchy.table import TableHierarchy
from sqlanon.domain.metrics.base import Metric, MetricContext, register, trunc10
from sqlanon.domain.metrics.memory import Leaves, MemoryNode, MemoryTable, add_terms
from sqlanon.domain.models.base import KEEP, SIZE, N
from sqlanon.sql.nodes import alias, as_double, as_text, col, internal, lit, nullsafe_join

if TYPE_CHECKING:
    import numpy as np

    from sqlanon.methods.generalization.evaluator import Evaluator

LN2 = math.log(2)
_SRC = internal("src")
_LEAF = internal("v")
_COUNT = internal("c")
_POS = internal("pos")

# Per evaluator (one problem on one engine): first-appearance positions and G_i(L) by (attribute, level).
_CACHE: WeakKeyDictionary[Evaluator, dict[Any, Any]] = WeakKeyDictionary()


def log2(x: float) -> float:
    """ln(x)/ln(2), as ARX computes it (not ``math.log2``, which may differ in the last bit)."""
    return math.log(x) / LN2


def leaf_key(h: Hierarchy, column: exp.Expression) -> exp.Expression:
    """A raw value as the text its hierarchy's leaves are compared with."""
    return h.key(column) if isinstance(h, TableHierarchy) else as_text(column)


def _cache(ev: Evaluator) -> dict[Any, Any]:
    return _CACHE.setdefault(ev, {})


def first_appearance(ev: Evaluator) -> dict[str, dict[str | None, int]]:
    """Per QI, each leaf value's first row in the source's scan order (ARX's dictionary order).

    ARX encodes values in order of first appearance in the data and sums G_i in that order. The order
    only moves the last bits of the sum, but those can cross a truncation step: summing Adult's ages
    in sorted order gives 170257.859699799 at ARX's §6.1 node instead of ARX's 170257.8596997991.
    The order of a relation is taken as its scan order, ``ROW_NUMBER() OVER ()`` over the source:
    insertion order on DuckDB and on a freshly loaded PostgreSQL table; engines that scan in parallel
    without an order may differ from ARX in the 10th decimal. Where the dialect names a function that
    grows in scan order (Spark's ``MONOTONICALLY_INCREASING_ID()``), its smallest value per leaf gives
    the same first rows without numbering the table (a sort of every row in one partition).
    """
    cache = _cache(ev)
    if "first" not in cache:
        branches = []
        scan_order = ev.engine.dialect.scan_order
        position = exp.Anonymous(this=scan_order, expressions=[]) if scan_order else exp.Window(
            this=exp.RowNumber())
        for i, attribute in enumerate(ev.p.qis):
            h = ev.p.hierarchies[attribute]
            numbered = exp.select(alias(leaf_key(h, col(attribute)), _LEAF),
                                  alias(position.copy(), _POS)).from_(ev.p.source.copy())
            branches.append(exp.select(alias(lit(i), "a"), col(_LEAF), alias(exp.Min(this=col(_POS)), "f"))
                            .from_(exp.alias_(exp.Subquery(this=numbered), internal(f"r{i}")))
                            .group_by(col(_LEAF)))
        query: exp.Select | exp.Union = branches[0]
        for b in branches[1:]:
            query = exp.union(query, b, distinct=False)
        out: dict[str, dict[str | None, int]] = {a: {} for a in ev.p.qis}
        for a, v, f in ev.engine.fetch(query)[1]:
            out[ev.p.qis[int(a)]][v] = int(f)
        cache["first"] = out
    return cache["first"]


def generalization_term(ctx: MetricContext, attribute: str) -> float:
    """Σ_v c(v)·log2(c(v)/C(g(v))) over leaf values v in ARX's order (≤ 0; G_i is its negation)."""
    level = ctx.node.levels[attribute]
    if level == 0:
        return 0.0
    ev = ctx.evaluator
    cache = _cache(ev)
    sub = ctx.subset
    key = ("G", attribute, level, None if sub is None else sub.subset)
    if key not in cache:
        h = ev.p.hierarchies[attribute]
        # c(v): the rows of the population (ARX's cardinalities count the research subset's rows)
        counts, count = (ev.freq, N) if sub is None else (ev.plan.ref(sub.step), sub.matched)
        per_leaf = ev.generalizer.select(counts, {attribute: level}, keep=[count], relation=_SRC,
                                         extra=[alias(leaf_key(h, col(attribute, _SRC)), _LEAF)])
        q = exp.select(col(_LEAF), alias(as_text(col(attribute)), "g"),
                       alias(exp.Sum(this=col(count)), _COUNT)) \
            .from_(exp.alias_(exp.Subquery(this=per_leaf), internal("l"))) \
            .group_by(col(_LEAF), as_text(col(attribute)))
        rows = [r for r in ev.engine.fetch(q)[1] if r[2]]
        totals: dict[Any, int] = defaultdict(int)
        for _, g, c in rows:
            totals[g] += int(c)
        order = first_appearance(ev)[attribute]
        value = 0.0
        for _, g, c in sorted(rows, key=lambda r: order.get(r[0], math.inf)):
            a, b = float(c), float(totals[g])
            value += a * log2(a / b)
        cache[key] = value
    return cache[key]


def suppression_term(ctx: MetricContext, attribute: str) -> float:
    """Σ_x s(x)·log2(s(x)/S) over the generalized values x of the suppressed rows (≤ 0)."""
    pop = ctx.population
    s = pop.suppressed
    if s == 0:
        return 0.0
    g = col(attribute)
    q = exp.select(alias(exp.Sum(this=pop.weight.copy()), _COUNT)).from_(ctx.node.verdict.copy()) \
        .where(exp.Not(this=col(KEEP))).group_by(g)
    value = 0.0
    for (count,) in sorted(r for r in ctx.engine.fetch(q)[1] if r[0]):
        value += count * log2(count / s)
    return value


def generalization_terms_in_memory(leaves: Leaves, first: Mapping[Any, int]) -> list[float]:
    """:func:`generalization_term` of one attribute at every level, in memory: summed over the leaves
    present in order of their first row in the source, as ARX does."""
    import numpy as np

    present = sorted((first.get(k, math.inf), j) for j, k in enumerate(leaves.keys) if leaves.rows[j])
    out = [0.0]
    for per_leaf in leaves.labels[1:]:
        totals = np.bincount(per_leaf, weights=leaves.rows).astype(np.int64)
        value = 0.0
        for _, j in present:
            a, b = float(leaves.rows[j]), float(totals[per_leaf[j]])
            value += a * log2(a / b)
        out.append(value)
    return out


def _generalization_terms(table: MemoryTable) -> list[list[float]]:
    """G_i(L) per attribute and level, computed once per loaded table."""
    return table.memo("entropy", lambda: [generalization_terms_in_memory(table.leaves(i), table.first_rows(a))
                                          for i, a in enumerate(table.qis)])


def entropy_in_memory(node: MemoryNode, suppressed: int) -> float:
    """Σ_i w_i · trunc(G_i(L_i) + T_i), T_i over the suppressed rows' labels (counts ascending)."""
    import numpy as np

    t = node.table
    terms = _generalization_terms(t)
    total = 0.0
    sizes, rows = node.suppressed_members() if suppressed else (None, None)
    for i, (level, w) in enumerate(zip(node.levels, t.weights)):
        raw = terms[i][level]
        if sizes is not None:
            labels = t.codes[i][level][rows]
            counts = np.bincount(labels, weights=sizes).astype(np.int64)
            term = 0.0
            for count in sorted(int(x) for x in counts if x):
                term += count * log2(count / suppressed)
            raw = raw + term
        total += trunc10(-raw if raw != 0.0 else raw) * w
    return total


def per_attribute_entropy(ctx: MetricContext) -> list[float]:
    """ent_i = trunc(G_i(L_i) + T_i) in QI order (peer-semantics §3.6)."""
    out = []
    for attribute in ctx.qis:
        raw = generalization_term(ctx, attribute) + suppression_term(ctx, attribute)
        out.append(trunc10(-raw if raw != 0.0 else raw))
    return out


@register
class NonUniformEntropy(Metric):
    """ARX's non-monotonic non-uniform entropy (``createEntropyMetric()``), summed over attributes.

    Per attribute, G_i(L) = Σ_v c(v)·log2(C(g(v))/c(v)) over all rows (suppressed ones included), plus
    T_i = Σ_x s(x)·log2(S/s(x)) over the suppressed rows' generalized values, truncated to 10 decimals.
    The monotonic variant (``createEntropyMetric(true)``, MetricMDNUEntropy) is Σ_i trunc(G_i(L_i)):
    suppressed rows are charged nothing beyond their generalization.
    Gionis & Tassa, k-Anonymization with minimal loss of information, TKDE 21(2), 2009; Prasser &
    Kohlmayer, Putting statistical disclosure control into practice: the ARX data anonymization tool,
    in Medical Data Privacy Handbook, Springer 2015.
    """

    name: ClassVar[str] = "entropy"
    counts_population: ClassVar[bool] = True
    options: ClassVar[tuple[str, ...]] = ("monotonic",)
    variants: ClassVar[tuple[str, str] | None] = ("non-monotonic non-uniform entropy",
                                                  "monotonic non-uniform entropy")

    def compute(self, ctx: MetricContext) -> float:
        if self.monotonic:  # MetricMDNUEntropy: the generalization part only, suppression is free
            return self.lower_bound(ctx)
        total = 0.0
        for ent, w in zip(per_attribute_entropy(ctx), ctx.weight_factors()):
            total += ent * w
        return total

    def lower_bound(self, ctx: MetricContext) -> float:
        """Σ trunc(G_i(L_i)): G grows with the level and T ≥ 0 (ARX's bound for this model)."""
        total = 0.0
        for attribute, w in zip(ctx.qis, ctx.weight_factors()):
            g = generalization_term(ctx, attribute)
            total += trunc10(-g if g != 0.0 else g) * w
        return total

    def prepare_in_memory(self, table: MemoryTable) -> None:
        _generalization_terms(table)

    def in_memory(self, node: MemoryNode) -> float:
        return entropy_in_memory(node, 0 if self.monotonic else node.suppressed)

    def lower_bound_in_memory(self, node: MemoryNode) -> float:
        return entropy_in_memory(node, 0)

    def prior_bounds_in_memory(self, table: MemoryTable, levels: list[np.ndarray]) -> np.ndarray:
        return add_terms([[trunc10(-g if g != 0.0 else g) * w for g in per_level]
                          for per_level, w in zip(_generalization_terms(table), table.weights)], levels)


def kl_terms(ctx: MetricContext, power: int) -> float:
    """Σ_t w_t/n · log2(p(t)/q(t)) over distinct raw QI tuples t with w_t = c_t**power.

    p(t) = c_t/n. A tuple of a kept class E gets q(t) = (|E|/n) / area(E), with area(E) = Π_i (number
    of hierarchy rows under g_i(E) at L_i): the class's mass spread uniformly over the leaf
    combinations it covers. A suppressed tuple gets q(t) = (S/n) / Π_i |D_i|: the suppressed rows form
    one class covering the whole domain; as in ARX, that mass is not added to the kept classes' cells
    it overlaps, and a tuple is only compared with its own class. The sum is split into SQL aggregates:
    Σ w log2 c − Σ_E W_E log2|E| + Σ_i Σ_x W_{i,x} log2 rows_i(x) − W_O (log2 S − Σ_i log2|D_i|),
    all over n, with W the sums of w per class, per kept label and over suppressed tuples.
    """
    ev, n, s = ctx.evaluator, ctx.n, ctx.suppressed
    qis = ctx.qis
    tuples = exp.select(*[col(q) for q in qis], alias(exp.Sum(this=col(N)), _COUNT)) \
        .from_(ev.freq.copy()).group_by(*[col(q) for q in qis])
    gen = ev.generalizer.select(tuples, ctx.node.levels, keep=[_COUNT], relation=_SRC)
    joined = exp.select(*[alias(col(q, "g"), q) for q in qis], col(_COUNT, "g"), col(SIZE, "v"),
                        col(KEEP, "v")) \
        .from_(exp.alias_(exp.Subquery(this=gen), "g", quoted=True)) \
        .join(exp.alias_(ctx.node.verdict.copy(), "v", table=True, quoted=True),
              on=nullsafe_join("g", "v", qis))
    rel = exp.alias_(exp.Subquery(this=joined), internal("t"))
    c = as_double(col(_COUNT))
    w = c if power == 1 else exp.Mul(this=c, expression=c.copy())
    kept = ctx.kept()

    def when(cond: exp.Expression, value: exp.Expression) -> exp.Expression:
        return exp.Sum(this=exp.Case().when(cond, value).else_(lit(0.0)))

    totals = ctx.engine.fetch(exp.select(
        exp.Sum(this=exp.Mul(this=w.copy(), expression=exp.Ln(this=c.copy()))),
        when(kept.copy(), exp.Mul(this=w.copy(), expression=exp.Ln(this=as_double(col(SIZE))))),
        when(kept.copy(), w.copy()),
        when(exp.Not(this=kept.copy()), w.copy()),
    ).from_(rel.copy()))[1][0]
    w_ln_c, w_ln_size, w_kept, w_out = (float(x or 0.0) for x in totals)
    log2n = log2(n)
    value = (w_ln_c / LN2 - (w_kept + w_out) * log2n) - (w_ln_size / LN2 - w_kept * log2n)
    for attribute in qis:
        table = ctx.hierarchy_table(attribute)
        level = ctx.node.levels[attribute]
        label = ctx.label(attribute)
        q = exp.select(alias(label, "g"), alias(exp.Sum(this=w.copy()), "w")).from_(rel.copy()) \
            .where(kept.copy()).group_by(label.copy())
        for g, wl in ctx.engine.fetch(q)[1]:
            value += float(wl) * log2(table.label_count(g, level))
    if s and w_out:
        domain = sum(log2(ctx.hierarchy_table(a).domain_size) for a in qis)
        value -= w_out * (log2(s) - log2n - domain)
    return value / n


@register
class KLDivergence(Metric):
    """KL divergence Σ_t p(t)·log2(p(t)/q(t)) between the original and the released QI distribution.

    q spreads each class's share uniformly over the leaf combinations it covers (see :func:`kl_terms`).
    LeFevre, DeWitt & Ramakrishnan, Workload-aware anonymization, KDD 2006; Machanavajjhala et al.,
    l-diversity: privacy beyond k-anonymity, TKDD 1(1), 2007 (the reference of ARX's model).
    """

    name: ClassVar[str] = "kl_divergence"

    def compute(self, ctx: MetricContext) -> float:
        return kl_terms(ctx, 1)


@register
class KLDivergenceARX(Metric):
    """ARX's ``createKLDivergenceMetric()``: the same terms, summed once per row instead of per tuple.

    ARX's MetricSDNMKLDivergence iterates over the n rows, so a tuple occurring c_t times contributes
    c_t·p(t)·log2(p(t)/q(t)). It equals ``kl_divergence`` when every QI tuple is unique.
    """

    name: ClassVar[str] = "kl_divergence_arx"

    def compute(self, ctx: MetricContext) -> float:
        return kl_terms(ctx, 2)
