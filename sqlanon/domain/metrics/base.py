"""Utility and risk metrics computed from a checked node (ARX's definitions where ARX has one)."""

from __future__ import annotations

import abc
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, ClassVar

from sqlglot import exp

from sqlanon.domain.hierarchy.base import HierarchyTable
from sqlanon.domain.hierarchy.table import TableHierarchy
from sqlanon.domain.models.base import KEEP, SIZE
from sqlanon.errors import SpecError, did_you_mean
from sqlanon.registry import Registry
from sqlanon.sql.nodes import alias, as_expression, as_text, col, lit

if TYPE_CHECKING:
    import numpy as np

    from sqlanon.domain.metrics.memory import MemoryNode, MemoryTable
    from sqlanon.methods.generalization.evaluator import Evaluator, NodeCheck


@dataclass(frozen=True)
class Population:
    """The rows ARX's quality models count (peer-semantics §3): the table's, or, with δ-presence, the
    research subset's. ARX measures information loss and suppression over the subset it releases:
    a class then weighs its subset rows, and classes without any count for nothing.
    """

    name: str
    """``table`` or ``research subset``."""
    subset: str | None
    """The research subset (a table name or file), with δ-presence."""
    rows: int
    """n: the rows counted."""
    suppressed: int
    """S: counted rows in suppressed classes (0 when the node is not anonymous)."""
    weight: exp.Expression
    """Per class of the node's verdict, the rows it counts (the class size, or its subset rows)."""
    classes: int
    """Kept classes holding counted rows (every class holding some, when nothing is suppressed)."""
    dm_star: int
    """Σ weight² over all classes."""
    dm_kept: int
    """Σ weight² over kept classes."""

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"rows": self.rows, "population": self.name}
        if self.subset is not None:
            out["subset"] = self.subset
        return out


def trunc10(x: float) -> float:
    """ARX's 1e-10 floor: truncation (not rounding) to 10 decimals."""
    return math.floor(x * 1e10) / 1e10


@dataclass
class MetricContext:
    """A checked node and what metrics may read: the evaluator's relations and the hierarchies."""

    evaluator: Evaluator
    node: NodeCheck
    weights: Mapping[str, float] = field(default_factory=dict)
    options: Mapping[str, Any] = field(default_factory=dict)
    _memo: dict[Any, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def engine(self):  # noqa: ANN201
        return self.evaluator.engine

    @property
    def qis(self) -> list[str]:
        return self.evaluator.p.qis

    @property
    def n(self) -> int:
        return self.node.rows

    @property
    def suppressed(self) -> int:
        """S: rows in outlier classes when the node is anonymous (they are suppressed), else 0."""
        return self.node.suppressed_rows

    def weight_factors(self) -> list[float]:
        """w_i / max_j w_j in QI order (1 each by default), as ARX scales per-attribute values."""
        ws = [float(self.weights.get(a, 1.0)) for a in self.qis]
        top = max(ws) if ws else 1.0
        return [w / top for w in ws]

    def kept(self) -> exp.Expression:
        """Condition for classes that are kept (all classes when nothing is suppressed)."""
        return col(KEEP) if self.node.anonymous else exp.true()

    def hierarchy_table(self, attribute: str) -> HierarchyTable:
        """The hierarchy as a table: the file for ARX hierarchies, else built over the data's values."""
        return self.evaluator.hierarchy_table(attribute)

    def counted(self, metric: Metric) -> dict[str, Any]:
        """Which rows ``metric`` counts (and which of ARX's variants it is), for the report."""
        if metric.counts_population:
            out = self.population.as_dict()
        elif metric.counts_released:
            out = {"rows": self.n - self.suppressed, "population": "released table"}
        else:
            out = {"rows": self.n, "population": "table"}
        if metric.variant is not None:
            out["variant"] = metric.variant
        return out

    def memo(self, key: Any, compute: Callable[[], Any]) -> Any:
        """``compute()`` once per context: metrics that share one computation (e.g. numeric moments)."""
        if key not in self._memo:
            self._memo[key] = compute()
        return self._memo[key]

    def label(self, attribute: str, relation: str | None = None) -> exp.Expression:
        """The node's generalized value of ``attribute`` as the hierarchy table's label (text)."""
        h = self.evaluator.p.hierarchies[attribute]
        g = col(attribute, relation)
        if self.node.levels[attribute] == 0 and isinstance(h, TableHierarchy):
            return h.key(g)
        return as_text(g)

    def kept_sizes_by_label(self, attribute: str) -> dict[str | None, int]:
        """Σ|E| over kept classes, per generalized value of ``attribute`` (as the hierarchy's label);
        |E| counts the rows of the :attr:`population`. One query reads them for every QI."""
        return self.memo("kept_sizes_by_label", lambda: self._sizes_by_label(self.kept()))[attribute]

    def suppressed_sizes_by_label(self, attribute: str) -> dict[str | None, int]:
        """:meth:`kept_sizes_by_label` over the suppressed classes (none unless the node is anonymous)."""
        if not self.node.anonymous:
            return {}
        return self.memo("suppressed_sizes_by_label",
                         lambda: self._sizes_by_label(exp.Not(this=col(KEEP))))[attribute]

    def _sizes_by_label(self, condition: exp.Expression) -> dict[str, dict[str | None, int]]:
        parts = []
        for i, a in enumerate(self.qis):
            key = self.label(a)
            parts.append(exp.select(alias(lit(i), "a"), alias(key, "g"),
                                    alias(exp.Sum(this=self.population.weight.copy()), "s"))
                         .from_(self.node.verdict.copy()).where(condition.copy()).group_by(key.copy()))
        out: dict[str, dict[str | None, int]] = {a: {} for a in self.qis}
        if not parts:
            return out
        query: exp.Query = parts[0]
        for part in parts[1:]:
            query = exp.union(query, part, distinct=False)
        for i, g, s in self.engine.fetch(query)[1]:
            if s:
                out[self.qis[i]][g] = int(s)
        return out

    @cached_property
    def subset(self) -> Any:
        """The research subset's statistic of the first δ-presence model (ARX's subset), or None:
        the statistic whose in-memory form reads ``subset`` (found without importing δ-presence's
        module, which a spec without it does not load)."""
        return next((s for m in self.evaluator.p.models for s in m.statistics()
                     if "subset" in s.memory_inputs), None)

    @cached_property
    def population(self) -> Population:
        """The rows ARX's quality models count: the research subset with δ-presence, else the table."""
        node, sub = self.node, self.subset
        if sub is None:
            return Population("table", None, node.rows, node.suppressed_rows, col(SIZE), node.classes,
                              node.dm_star, node.dm_kept)
        w = exp.Coalesce(this=col(sub.column), expressions=[lit(0)])
        keep = col(KEEP)

        def total(value: exp.Expression, cond: exp.Expression | None = None) -> exp.Expression:
            v = value if cond is None else exp.Case().when(cond, value).else_(lit(0))
            return exp.Coalesce(this=exp.Sum(this=v), expressions=[lit(0)])

        square = exp.Mul(this=w.copy(), expression=w.copy())
        holds = exp.GT(this=w.copy(), expression=lit(0))
        q = exp.select(
            alias(total(w.copy()), "n"), alias(total(w.copy(), exp.Not(this=keep.copy())), "s"),
            alias(total(square), "dm_star"), alias(total(square.copy(), keep.copy()), "dm_kept"),
            alias(total(lit(1), as_expression(exp.and_(keep.copy(), holds.copy()))), "kept"),
            alias(total(lit(1), holds.copy()), "holding"),
        ).from_(node.verdict.copy())
        r = {k: int(v or 0) for k, v in self.engine.fetch_one(q).items()}
        anonymous = node.anonymous
        return Population("research subset", sub.subset, r["n"], r["s"] if anonymous else 0, w,
                          r["kept"] if anonymous else r["holding"], r["dm_star"], r["dm_kept"])

    @cached_property
    def class_sizes(self) -> list[tuple[int, bool]]:
        q = exp.select(col(SIZE), col(KEEP)).from_(self.node.verdict.copy())
        return [(int(r[0]), bool(r[1])) for r in self.engine.fetch(q)[1]]


MONOTONIC = "monotonic"
"""The metric option choosing ARX's monotonic variant of the metrics that have one."""


class Metric(abc.ABC):
    """One number describing a checked node."""

    name: ClassVar[str]
    kind: ClassVar[str] = "utility"
    """``utility`` (information loss; lower is better unless stated) or ``risk``."""
    monotonic_with_suppression: ClassVar[bool] = False
    monotonic_with_generalization: ClassVar[bool] = True
    options: ClassVar[tuple[str, ...]] = ()
    """The keys of ``metrics.options`` this metric reads."""
    counts_population: ClassVar[bool] = False
    """Whether the metric counts the rows of :attr:`MetricContext.population` (ARX's quality models:
    the research subset with δ-presence) rather than every row of the table."""
    counts_released: ClassVar[bool] = False
    """Whether the metric counts the released records only, U = n − S (the risk figures)."""
    variants: ClassVar[tuple[str, str] | None] = None
    """ARX's names of its (non-monotonic, monotonic) variants, for the metrics that have both; the
    option ``monotonic`` chooses the second."""

    def __init__(self, *, monotonic: bool = False) -> None:
        if monotonic and self.variants is None:
            raise SpecError(f"metric {self.name!r} has no monotonic variant",
                            path="metrics.options.monotonic")
        self.monotonic = monotonic
        """ARX's monotonic variant: suppressed rows are not charged (chosen by option ``monotonic``)."""

    @property
    def variant(self) -> str | None:
        """ARX's name of the variant computed, for metrics with two."""
        if self.variants is None:
            return None
        return self.variants[1 if self.monotonic else 0]

    bounded_by_unsuppressed: ClassVar[bool] = False
    """Whether the value with nothing suppressed is a lower bound of the node and of all its
    generalizations (ARX: suppressed rows only add loss, and without suppression the metric never
    decreases under generalization; peer-semantics §5)."""

    @abc.abstractmethod
    def compute(self, ctx: MetricContext) -> float: ...

    def lower_bound(self, ctx: MetricContext) -> float | None:
        """A value no generalization of this node can go below (for pruning), when known."""
        return None

    # -- the in-memory form: the same doubles from a node held in numpy arrays -----------------------
    def in_memory(self, node: MemoryNode) -> float:
        """The numpy form of :meth:`compute` (same terms, same order, same double)."""
        raise NotImplementedError(self.name)

    def lower_bound_in_memory(self, node: MemoryNode) -> float:
        """ARX's lower bound of the node and its generalizations, in memory (default: the value)."""
        return self.in_memory(node)

    def prior_bounds_in_memory(self, table: MemoryTable, levels: list[np.ndarray]) -> np.ndarray | None:
        """The bound of every node at once, known before any check, when the metric with nothing
        suppressed depends on the levels alone; ``levels[i]`` holds attribute i's level of each node.
        Each bound must equal :meth:`lower_bound_in_memory` bit for bit."""
        return None

    def prepare_in_memory(self, table: MemoryTable) -> None:
        """Compute, once per loaded table, what every node's in-memory value reuses (an optional hook)."""
        return None

    @classmethod
    def computes_in_memory(cls) -> bool:
        """Whether the metric has an in-memory form."""
        return cls.in_memory is not Metric.in_memory

    def is_monotonic(self, suppression_limit: float) -> bool:
        if self.monotonic:
            return True
        return self.monotonic_with_suppression if suppression_limit > 0 else \
            self.monotonic_with_generalization


def _unknown_metric(kind: str, name: str, known: Sequence[str]) -> SpecError:
    return SpecError(f"unknown metric {name!r}; known: {', '.join(known)}." + did_you_mean(name, known))


METRICS: Registry[type[Metric]] = Registry("metric", packages=("sqlanon.domain.metrics",),
                                           unknown=_unknown_metric)
"""Metric name (in the spec and the JSON report) -> metric class, filled by :func:`register` in the
modules of this package."""


def register(cls: type[Metric]) -> type[Metric]:
    """Class decorator: add a metric to :data:`METRICS` under its ``name``."""
    return METRICS.register(cls.name)(cls)


def with_variants() -> list[str]:
    """The metrics that have a monotonic and a non-monotonic variant in ARX."""
    return sorted(n for n, cls in METRICS.items() if getattr(cls, "variants", None) is not None)


def monotonic_choice(options: Mapping[str, Any]) -> bool | frozenset[str]:
    """The validated option ``monotonic``: false (ARX's defaults, the non-monotonic variants), true
    (the monotonic variant of every metric that has one), or a list of such metric names."""
    value = options.get(MONOTONIC, False)
    if isinstance(value, bool):
        return value
    known = with_variants()
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise SpecError(f"must be true, false or a list of metric names ({', '.join(known)}), got "
                        f"{value!r}", path="metrics.options.monotonic")
    for v in value:
        if v not in known:
            raise SpecError(f"metric {v!r} has no monotonic variant; metrics with one: "
                            f"{', '.join(known)}." + did_you_mean(v, known), path="metrics.options.monotonic")
    return frozenset(value)


def get_metric(name: str, path: str = "metrics", options: Mapping[str, Any] | None = None) -> Metric:
    """The metric ``name``, in the variant ``options`` choose (``monotonic``), with the options its
    constructor reads (``gs_factor``)."""
    try:
        cls = METRICS.get(name)
    except SpecError as e:
        raise SpecError(e.rule, path=path) from None
    options = options or {}
    choice = monotonic_choice(options)
    has_variants = getattr(cls, "variants", None) is not None
    monotonic = has_variants and (choice if isinstance(choice, bool) else name in choice)
    built = {k: options[k] for k in CONSTRUCTOR_OPTIONS if k in cls.options and k in options}
    return cls(monotonic=True, **built) if monotonic else cls(**built)


CONSTRUCTOR_OPTIONS = ("gs_factor",)
"""The metric options a metric takes when it is built (the others it reads from its context)."""
