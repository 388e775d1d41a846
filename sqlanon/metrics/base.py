"""Utility and risk metrics computed from a checked node (ARX's definitions where ARX has one)."""

from __future__ import annotations

import abc
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, ClassVar

from sqlglot import exp

from sqlanon.compile.checks import KEEP, SIZE
from sqlanon.compile.sql import alias, as_text, col
from sqlanon.errors import SpecError, did_you_mean
from sqlanon.hierarchy.base import HierarchyTable
from sqlanon.hierarchy.table import TableHierarchy

if TYPE_CHECKING:
    from sqlanon.evaluate import Evaluator, NodeCheck


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
        """Σ|E| over kept classes, per generalized value of ``attribute`` (as the hierarchy's label)."""
        key = self.label(attribute)
        q = exp.select(alias(key, "g"), alias(exp.Sum(this=col(SIZE)), "s")).from_(
            self.node.verdict.copy()).where(self.kept()).group_by(key.copy())
        return {r[0]: int(r[1]) for r in self.engine.fetch(q)[1]}

    @cached_property
    def class_sizes(self) -> list[tuple[int, bool]]:
        q = exp.select(col(SIZE), col(KEEP)).from_(self.node.verdict.copy())
        return [(int(r[0]), bool(r[1])) for r in self.engine.fetch(q)[1]]


class Metric(abc.ABC):
    """One number describing a checked node."""

    name: ClassVar[str]
    kind: ClassVar[str] = "utility"
    """``utility`` (information loss; lower is better unless stated) or ``risk``."""
    monotonic_with_suppression: ClassVar[bool] = False
    monotonic_with_generalization: ClassVar[bool] = True

    @abc.abstractmethod
    def compute(self, ctx: MetricContext) -> float: ...

    def lower_bound(self, ctx: MetricContext) -> float | None:
        """A value no generalization of this node can go below (for pruning), when known."""
        return None

    def is_monotonic(self, suppression_limit: float) -> bool:
        return self.monotonic_with_suppression if suppression_limit > 0 else \
            self.monotonic_with_generalization


METRICS: dict[str, Callable[[], Metric]] = {}


def register(cls: type[Metric]) -> type[Metric]:
    METRICS[cls.name] = cls
    return cls


def get_metric(name: str, path: str = "metrics") -> Metric:
    from sqlanon.metrics import load_all

    load_all()
    if name not in METRICS:
        raise SpecError(f"unknown metric {name!r}; known: {', '.join(sorted(METRICS))}."
                        + did_you_mean(name, METRICS), path=path)
    return METRICS[name]()
