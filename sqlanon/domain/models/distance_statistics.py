"""EMD statistics that need more than one GROUP BY: the ordered and the hierarchical ground distance.

Both read the histogram of a sensitive attribute (one row per class and value, see
:class:`~sqlanon.domain.models.base.HistogramColumns`) and return one row per class. The reference
distribution is the attribute's distribution over all rows of the table, suppressed rows included (ARX).

Li N, Li T, Venkatasubramanian S. t-closeness: privacy beyond k-anonymity and l-diversity. ICDE 2007.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from sqlglot import exp

from sqlanon.domain.hierarchy.materialize import uncovered_values
from sqlanon.domain.models.arithmetic import add, div, mul, sub
from sqlanon.domain.models.base import CheckContext, ClassTable, H, Statistic, StatisticInputs
from sqlanon.domain.models.ordering import check_numbers, order_key
from sqlanon.errors import HierarchyError, SpecError
from sqlanon.sql.nodes import alias, as_double, as_expression, as_text, col, data_type, internal, lit

if TYPE_CHECKING:
    import numpy as np

K = internal("k")
CE = internal("ce")
GC = internal("gc")
R = internal("r")
NT = internal("nt")
GCUM = internal("gcum")
LVL = internal("lvl")
PARENT = internal("parent")
CHILD = internal("child")
PG = internal("pg")
POS = internal("pos")
NEG = internal("neg")
PCUM = internal("pcum")
PTOT = internal("ptot")
IDX = internal("idx")
SA = internal("sa")
SB = internal("sb")
SM = internal("sm")
FT = internal("ft")
FIRST = internal("first")
MK = internal("mk")
KIND = internal("kind")
CNT = internal("cnt")
PA = internal("pa")
PM = internal("pm")
PB = internal("pb")


# The builders below take their arguments without copying them (copy=False): a query grows by
# nesting, and a copy at every step cost time quadratic in its depth (40 ms a statement).
def _sub(query: exp.Query, name: str) -> exp.Expression:
    return _named(query, internal(name))


def _named(query: exp.Query, name: str) -> exp.Expression:
    return as_expression(exp.alias_(exp.Subquery(this=query), name, quoted=True, copy=False))


def _case(condition: exp.Expression, then: exp.Expression, otherwise: exp.Expression) -> exp.Case:
    return exp.Case(ifs=[exp.If(this=condition, true=then)], default=otherwise)


@dataclass(frozen=True)
class OrderedDistance(Statistic):
    """EMD with the ordered ground distance |rank(i) − rank(j)| / (r − 1).

    ``EMD = 1/(r−1) · Σ_{i=1..r} |Σ_{j≤i} (p_j − q_j)|`` over all r distinct values of the attribute in
    the table, in the attribute's order (values absent from a class have p = 0). This is the corrected
    cumulative form (the inner sum runs over j ≤ i). With r = 1 the distance is 0.

    The sum is computed exactly in integers (counts scaled by n·|E|) and divided once at the end.
    """

    attribute: str
    memory_inputs: ClassVar[frozenset[str]] = frozenset({"order"})

    def prepare(self, inputs: StatisticInputs) -> None:
        """Check, once per problem, that the attribute can be ordered and its order covers the data."""
        what = f"the ordered distance of {self.attribute!r}"
        key = order_key(self.attribute, col(self.attribute), inputs.value_order, inputs.column_types,
                        inputs.attribute_types, inputs.engine.dialect.sqlglot, what=what)
        order = inputs.value_order.get(self.attribute)
        if order:
            listed = {str(v) for v in order}
            q = exp.select(alias(as_text(col(self.attribute)), "v")).distinct().from_(
                inputs.sensitive_source.copy())
            missing = [v for (v,) in inputs.engine.fetch(q)[1] if v is not None and v not in listed]
            if missing:
                raise SpecError(f"{len(missing)} value(s) of {self.attribute!r} are missing from its "
                                "`order:` list (NULL sorts last and needs no entry)",
                                path=f"attributes.{self.attribute}.order")
        elif isinstance(key, exp.Cast):
            check_numbers(inputs, self.attribute, what)

    def in_memory(self, classes: ClassTable) -> np.ndarray:
        """Σ_i |Σ_{j≤i} (p_j − q_j)| scaled by n·|E|: exact integers, divided once (the values are
        numbered in the attribute's order)."""
        import numpy as np

        h, sizes, n = classes.histogram(self.attribute), classes.sizes, classes.n
        r = h.shape[1]
        if r <= 1:
            return np.zeros(len(sizes))
        diff = h.astype(np.int64) * n - classes.global_counts(self.attribute)[None, :] * sizes[:, None]
        total = np.abs(np.cumsum(diff, axis=1)).sum(axis=1)
        return total / (sizes.astype(np.float64) * n * (r - 1))

    def class_query(self, ctx: CheckContext) -> exp.Select:
        """One row per class, in time linear in the histogram plus the domain (no class × domain grid).

        With the domain's values numbered 1..r in order, G(i) their cumulative global count, P(i) =
        G(1) + ... + G(i), and a class's values present at positions a_1 < a_2 < ... with cumulative
        class counts F_t, the class's cumulative count is F_t on the segment [a_t, a_{t+1}) (and 0
        before a_1). On a segment the term F_t·n − G(i)·|E| falls as i grows (G does not fall), so it
        is non-negative up to the first position where G(i) > ⌊F_t·n / |E|⌋ and negative after: with
        that split point m, the segment's sum of absolute terms is a difference of P at a_t − 1,
        m − 1 and a_{t+1} − 1. The split point is found for every segment at once by sorting the
        segments' thresholds among the domain's G values.
        """
        qis = ctx.qis
        key = order_key(self.attribute, col(H.value), ctx.value_order, ctx.column_types,
                        ctx.attribute_types, ctx.dialect, what=f"the ordered distance of {self.attribute!r}")
        hist = ctx.histograms[self.attribute].copy()
        # class × ordered value counts
        grouped = exp.select(*[col(q) for q in qis], alias(key, K), alias(exp.Sum(this=col(H.count)), CE)) \
            .from_(hist, copy=False).group_by(*[col(q) for q in qis], key.copy(), copy=False)
        # the domain: each value's position, G, r and n; then P
        dom0 = exp.select(col(K), alias(exp.Sum(this=col(CE)), GC)).from_(_sub(grouped, "o0"), copy=False) \
            .group_by(col(K), copy=False)
        # NULL last through a first key; NULLS FIRST is every target's default or spelled out
        # (BigQuery cannot spell NULLS LAST in a window's ORDER BY)
        is_null = _case(exp.Is(this=col(K), expression=exp.Null()), lit(1), lit(0))
        by_k = exp.Order(expressions=[exp.Ordered(this=is_null, nulls_first=True),
                                      exp.Ordered(this=col(K), nulls_first=True)])
        dom1 = exp.select(
            col(K),
            alias(exp.Window(this=exp.RowNumber(), order=by_k), IDX),
            alias(_running(exp.Sum(this=col(GC)), by_k.copy()), GCUM),
            alias(exp.Window(this=exp.Count(this=exp.Star())), R),
            alias(exp.Window(this=exp.Sum(this=col(GC))), NT),
        ).from_(_sub(dom0, "o1"), copy=False)
        by_pos = exp.Order(expressions=[exp.Ordered(this=col(IDX), nulls_first=True)])
        dom = exp.select(col(K), col(IDX), col(GCUM), col(R), col(NT),
                         alias(_running(exp.Sum(this=_dec(col(GCUM))), by_pos.copy()), PCUM),
                         alias(exp.Window(this=exp.Sum(this=_dec(col(GCUM)))), PTOT)) \
            .from_(_sub(dom1, "o2"), copy=False)
        # the classes' segments: start a, end b (exclusive), F, |E|, the class's first position, and
        # P(a − 1), P(b − 1) (P before a present value is its P less its G; after the last, P(r))
        pairs = exp.select(*[col(q, "g") for q in qis], col(CE, "g"), col(IDX, "d"), col(R, "d"),
                           col(NT, "d"), alias(sub(col(PCUM, "d"), _dec(col(GCUM, "d"))), PA),
                           col(PTOT, "d")) \
            .from_(_named(grouped.copy(), "g"), copy=False) \
            .join(_named(dom.copy(), "d"), on=exp.NullSafeEQ(this=col(K, "g"), expression=col(K, "d")),
                  join_type="inner", copy=False)
        in_class = exp.Order(expressions=[exp.Ordered(this=col(IDX), nulls_first=True)])

        def by_class() -> list[exp.Expression] | None:
            return [col(q) for q in qis] or None

        def next_in_class(column: str, last: exp.Expression) -> exp.Expression:
            return exp.Coalesce(this=exp.Window(this=exp.Lead(this=col(column)), partition_by=by_class(),
                                                order=in_class.copy()), expressions=[last])

        segs0 = exp.select(
            *[col(q) for q in qis], col(R), col(NT), alias(col(IDX), SA),
            alias(next_in_class(IDX, add(col(R), lit(1))), SB),
            alias(exp.Window(this=exp.Sum(this=col(CE)), partition_by=by_class(), order=in_class.copy(),
                             spec=exp.WindowSpec(kind="ROWS", start="UNBOUNDED", start_side="PRECEDING")),
                  FT),
            alias(exp.Window(this=exp.Sum(this=col(CE)), partition_by=by_class()), H.size),
            alias(exp.Window(this=exp.Min(this=col(IDX)), partition_by=by_class()), FIRST),
            col(PA), alias(next_in_class(PA, col(PTOT)), PB),
        ).from_(_sub(pairs, "o3"), copy=False)
        carried = [*qis, R, NT, SA, SB, FT, H.size, FIRST, PA, PB]
        # G(i) <= floor(F·n / |E|) exactly when G(i)·|E| <= F·n (the division is of an exact multiple)
        fn = mul(_dec(col(FT)), _dec(col(NT)))
        multiple = sub(fn, exp.Mod(this=fn.copy(), expression=_dec(col(H.size))))
        threshold = exp.IntDiv(this=exp.Paren(this=multiple), expression=_dec(col(H.size)))
        # c: how many domain positions have G(i) <= the threshold (domain rows sort first on ties),
        # by sorting the segments' thresholds among the domain's G values
        kind_domain, kind_segment = lit(0), lit(1)
        merged = exp.union(
            exp.select(*[col(c) for c in carried], alias(threshold, MK), alias(kind_segment, KIND))
            .from_(_sub(segs0, "o4"), copy=False),
            exp.select(*[alias(exp.Null(), c) for c in carried], alias(_dec(col(GCUM)), MK),
                       alias(kind_domain, KIND)).from_(_sub(dom.copy(), "o5"), copy=False),
            distinct=False, copy=False)
        by_key = exp.Order(expressions=[exp.Ordered(this=col(MK), nulls_first=True),
                                        exp.Ordered(this=col(KIND), nulls_first=True)])
        counted = exp.select(
            *[col(c) for c in carried], col(KIND),
            alias(_running(exp.Sum(this=_case(exp.EQ(this=col(KIND), expression=kind_domain.copy()),
                                              lit(1), lit(0))), by_key), CNT),
        ).from_(_sub(merged, "o6"), copy=False)
        # each segment with its split point m = clamp(c + 1, a, b), and P(m − 1)
        m = exp.Greatest(this=col(SA), expressions=[
            exp.Least(this=col(SB), expressions=[add(col(CNT), lit(1))])])
        located = exp.select(*[col(c) for c in carried], alias(m, SM)) \
            .from_(_sub(counted, "o7"), copy=False) \
            .where(exp.EQ(this=col(KIND), expression=kind_segment.copy()), copy=False)
        looked = exp.select(*[col(c, "l") for c in carried], col(SM, "l"),
                            alias(exp.Coalesce(this=col(PCUM, "p"), expressions=[_dec(lit(0))]), PM)) \
            .from_(_named(located, "l"), copy=False) \
            .join(_named(exp.select(col(IDX), col(PCUM)).from_(_sub(dom.copy(), "o8"), copy=False), "p"),
                  on=exp.EQ(this=col(IDX, "p"), expression=sub(col(SM, "l"), lit(1))), join_type="left",
                  copy=False)
        fn = mul(_dec(col(FT)), _dec(col(NT)))
        size = _dec(col(H.size))
        above = sub(mul(fn, _dec(sub(col(SM), col(SA)))), mul(size.copy(), sub(col(PM), col(PA))))
        below = sub(mul(size.copy(), sub(col(PB), col(PM))), mul(fn.copy(), _dec(sub(col(SB), col(SM)))))
        before = _case(exp.EQ(this=col(SA), expression=col(FIRST)), mul(size.copy(), col(PA)), _dec(lit(0)))
        total = exp.Sum(this=add(add(above, below), before))
        denom = mul(mul(as_double(col(H.size)), col(NT)), sub(col(R), lit(1)))
        emd = _case(exp.GT(this=col(R), expression=lit(1)), div(as_double(total), denom), lit(0.0))
        return exp.select(*[col(q) for q in qis], alias(emd, self.column)) \
            .from_(_sub(looked, "o9"), copy=False) \
            .group_by(*[col(q) for q in qis], col(H.size), col(R), col(NT), copy=False)


def _running(aggregate: exp.Expression, order: exp.Order) -> exp.Window:
    """``aggregate`` over the rows up to this one in ``order``."""
    return exp.Window(this=aggregate, order=order,
                      spec=exp.WindowSpec(kind="ROWS", start="UNBOUNDED", start_side="PRECEDING"))


def _dec(e: exp.Expression) -> exp.Expression:
    """An exact integer wide enough for n²·r (BIGINT products of counts could overflow)."""
    return exp.cast(e, data_type("DECIMAL(38, 0)"), copy=False)


@dataclass(frozen=True)
class HierarchicalDistance(Statistic):
    """EMD with the hierarchical ground distance, computed as ARX does but exactly.

    The tree's leaves are the attribute's values present in the table; its inner nodes are their
    generalizations at levels 1..H of the attribute's own hierarchy. With counts scaled by n·|E|, a
    node's *extra* is ``C(N)·|E| − c_E(N)·n`` (C: count in the table, c_E: count in the class); an inner
    node N costs ``level(N)/H · min(pos(N), neg(N))``, where pos and neg sum the positive and the
    negative extras of its children, and ``EMD = Σ cost / (n·|E|)``.

    Children absent from the class have extra ``C·|E| > 0``, so they enter pos as ``|E|·(C(N) − Σ C of
    the present children)``: only nodes present in the class are grouped, no class × domain grid.
    Counts stay integers (64-bit or wider), so there is no 32-bit overflow as in ARX on large tables.
    """

    attribute: str
    memory_inputs: ClassVar[frozenset[str]] = frozenset({"tree"})

    def _hierarchy(self, hierarchies: Mapping[str, object]) -> Any:
        h = hierarchies.get(self.attribute)
        if h is None:
            raise SpecError(f"the hierarchical distance needs a hierarchy for {self.attribute!r}",
                            path=f"attributes.{self.attribute}.hierarchy")
        if h.height < 1:  # type: ignore[attr-defined]
            raise HierarchyError(f"the hierarchy of {self.attribute!r} has height 0; the hierarchical "
                                 "distance needs at least one level above the values",
                                 path=f"attributes.{self.attribute}.hierarchy")
        return h

    def prepare(self, inputs: StatisticInputs) -> None:
        """Check that the hierarchy exists and covers every value of the attribute in the table."""
        h = self._hierarchy(inputs.sensitive_hierarchies)
        missing = uncovered_values(h, inputs.engine, inputs.sensitive_source, self.attribute)
        if missing:
            hint = " (NULL needs a hierarchy row: set `null:` to its leaf label)" if None in missing else ""
            raise HierarchyError(f"{len(missing)} value(s) of sensitive attribute {self.attribute!r} are "
                                 f"missing from its hierarchy{hint}", source=getattr(h, "source", None))

    def memory_refusal(self, sensitive_hierarchies: Mapping[str, Any]) -> str | None:
        h = sensitive_hierarchies.get(self.attribute)
        return "its hierarchy is not a table" if getattr(h, "table", lambda: None)() is None else None

    def in_memory(self, classes: ClassTable) -> np.ndarray:
        """The same EMD in memory: a node's extra is C(N)·|E| − c_E(N)·n; an inner node at level l
        costs l · min(Σ positive, Σ |negative| child extras); EMD = Σ cost / (H · |E| · n)."""
        import numpy as np

        tree, sizes, n = classes.tree(self.attribute), classes.sizes, classes.n
        counts = np.rint(classes.histogram(self.attribute)).astype(np.int64)  # class × node, one level down
        total = classes.global_counts(self.attribute).astype(np.int64)
        e = sizes.astype(np.int64)[:, None]
        cost = np.zeros(len(sizes), dtype=np.int64)
        for level, up in enumerate(tree, 1):
            extra = total[None, :] * e - counts * n
            pos = np.maximum(extra, 0) @ up
            neg = np.maximum(-extra, 0) @ up
            cost += level * np.minimum(pos, neg).sum(axis=1)
            counts, total = counts @ up, total @ up
        return cost.astype(np.float64) / (float(len(tree)) * sizes.astype(np.float64) * n)

    def class_query(self, ctx: CheckContext) -> exp.Select:
        qis = ctx.qis
        h = self._hierarchy(ctx.hierarchies)
        height = h.height
        v = col(H.value)
        # one row per class and leaf with the leaf's ancestors a1..aH
        anc = [alias(v.copy(), internal("a0"))]
        anc += [alias(as_text(h.expression(v.copy(), j)), internal(f"a{j}")) for j in range(1, height + 1)]
        hx = exp.select(*[col(q) for q in qis], col(H.size), col(H.total), col(H.count), *anc).from_(
            ctx.histograms[self.attribute].copy(), copy=False)
        levels = []
        for j in range(1, height + 1):
            child = col(internal(f"a{j - 1}"))
            parent = col(internal(f"a{j}"))
            child_expr = as_text(child) if j == 1 else child
            levels.append(exp.select(
                *[col(q) for q in qis], col(H.size), col(H.total), alias(lit(j), LVL),
                alias(parent.copy(), PARENT), alias(child_expr, CHILD),
                alias(exp.Sum(this=col(H.count)), CE),
            ).from_(_sub(hx.copy(), "x0"), copy=False)
                .group_by(*[col(q) for q in qis], col(H.size), col(H.total), child.copy(), parent.copy(),
                          copy=False))
        union: exp.Query = levels[0]
        for q in levels[1:]:
            union = exp.union(union, q, distinct=False, copy=False)
        # global counts of each child and of each parent node (sums over all classes)
        windowed = exp.select(
            exp.Star(),
            alias(exp.Window(this=exp.Sum(this=col(CE)), partition_by=[col(LVL), col(PARENT), col(CHILD)]),
                  GC),
            alias(exp.Window(this=exp.Sum(this=col(CE)), partition_by=[col(LVL), col(PARENT)]), PG),
        ).from_(_sub(union, "x1"), copy=False)
        extra = sub(mul(col(GC), col(H.size)), mul(col(CE), col(H.total)))
        absent = sub(exp.Max(this=col(PG)), exp.Sum(this=col(GC)))
        pos = add(exp.Sum(this=exp.Greatest(this=extra, expressions=[lit(0)])), mul(col(H.size), absent))
        neg = exp.Sum(this=exp.Greatest(this=sub(mul(col(CE), col(H.total)), mul(col(GC), col(H.size))),
                                        expressions=[lit(0)]))
        group = [*[col(q) for q in qis], col(H.size), col(H.total)]
        nodes = exp.select(*[c.copy() for c in group], col(LVL), alias(pos, POS), alias(neg, NEG)).from_(
            _sub(windowed, "x2"), copy=False) \
            .group_by(*[c.copy() for c in group], col(LVL), col(PARENT), copy=False)
        cost = exp.Sum(this=mul(col(LVL), exp.Least(this=col(POS), expressions=[col(NEG)])))
        denom = mul(mul(lit(float(height)), as_double(col(H.size))), col(H.total))
        return exp.select(*[col(q) for q in qis], alias(div(as_double(cost), denom), self.column)).from_(
            _sub(nodes, "x3"), copy=False).group_by(*group, copy=False)
