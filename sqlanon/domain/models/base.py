"""Privacy models: data plus a per-class predicate over SQL aggregates (the ARX design).

A model declares the per-class statistics it reads. Statistics are computed once per check, in SQL,
over the *histogram* of a sensitive attribute: one row per (equivalence class, sensitive value) with
the columns described by :class:`HistogramColumns`. A model's predicate then decides, per class,
whether the class satisfies it; classes that fail any model are the outliers that suppression removes.

Each statistic and model also has an in-memory form beside its SQL form: ``in_memory`` computes the
statistic for every class of a node held as numpy arrays (:class:`ClassTable`), and
``satisfied_in_memory`` decides the classes from those arrays, with the same formulas and tolerances
as the SQL. A statistic or model without one is checked in SQL only. numpy is imported where these
forms run, so that reading a spec does not load it.
"""

from __future__ import annotations

import abc
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from sqlglot import exp

from sqlanon.errors import SpecError, did_you_mean
from sqlanon.registry import Registry
from sqlanon.sql.nodes import col, internal

if TYPE_CHECKING:
    import numpy as np
    from sqlglot.expressions import Table

    from sqlanon.compile.generalize import Generalizer
    from sqlanon.compile.plan import Plan
    from sqlanon.domain.hierarchy.base import Hierarchy
    from sqlanon.engines.base import Engine


N = internal("n")
"""The row count of a frequency-table row (and of a node's generalized table)."""
SIZE = internal("size")
"""|E|, the size column of the per-class relations."""
KEEP = internal("keep")
"""Whether a class is kept: it satisfies every model (the verdict's column)."""


@dataclass(frozen=True)
class Monotonicity:
    """Whether satisfaction survives generalization / suppression (ARX's two flags)."""

    generalization: bool
    suppression: bool


@dataclass(frozen=True)
class HistogramColumns:
    """Names of the histogram relation's columns, available to statistics.

    Per row (one class × one sensitive value present in it): ``value`` the sensitive value, ``count`` its
    count in the class, ``size`` the class size, ``global_count`` the value's count over all rows,
    ``total`` the number of rows, ``rank_in_class`` 1 for the most frequent value of the class,
    ``value_rank`` the value's rank in the attribute's order over all rows (1-based, dense) and
    ``domain`` the number of distinct values over all rows.
    """

    value: str = internal("v")
    count: str = internal("c")
    size: str = internal("size")
    global_count: str = internal("gc")
    total: str = internal("total")
    rank_in_class: str = internal("rk")
    value_rank: str = internal("vr")
    domain: str = internal("dom")

    def c(self, name: str) -> exp.Column:
        """A column of the histogram by field name: ``h.c('count')``."""
        return col(getattr(self, name))


H = HistogramColumns()


class ClassTable(Protocol):
    """The equivalence classes of one node in memory: what the statistics' numpy forms read."""

    sizes: np.ndarray
    """|E| of every class (int64)."""
    n: int
    """The table's rows (suppressed ones included)."""

    def histogram(self, attribute: str) -> np.ndarray:
        """Class × value counts of a sensitive attribute (float64; values numbered by the loader,
        in the attribute's order when a statistic asked for ``order``)."""

    def global_counts(self, attribute: str) -> np.ndarray:
        """Each value's count over the whole table (int64), in the histogram's numbering."""

    def tree(self, attribute: str) -> list[np.ndarray]:
        """The attribute's hierarchy over its values (when a statistic asked for ``tree``): per level
        1..H a 0/1 matrix from the nodes one level down (the values first) to the nodes at that level."""

    def numbers(self, attribute: str) -> np.ndarray:
        """Each value's number (float64, NaN for NULL), in the histogram's numbering (when a
        statistic asked for ``numbers``)."""


class StatisticInputs(Protocol):
    """What the statistics' own relations are built from, in the database: the problem's table,
    its engine and the evaluator's temporaries (implemented by the generalization evaluator)."""

    @property
    def engine(self) -> Engine: ...

    @property
    def source(self) -> exp.Expression:
        """The table checked."""

    @property
    def qis(self) -> list[str]: ...

    @property
    def value_order(self) -> Mapping[str, list[Any]]: ...

    @property
    def sensitive_hierarchies(self) -> Mapping[str, Hierarchy]: ...

    @property
    def column_types(self) -> Mapping[str, str]:
        """SQL types of the source's columns (empty when unknown)."""

    @property
    def attribute_types(self) -> Mapping[str, str]:
        """Types declared in the spec (``type:``), by attribute."""

    @property
    def sensitive_source(self) -> Table:
        """A relation holding the raw sensitive attributes."""

    @property
    def generalizer(self) -> Generalizer: ...

    def relation_name(self, name: str) -> str:
        """The name a temporary relation of this evaluator called ``name`` gets."""

    def add_relation(self, name: str, query: exp.Select) -> Table:
        """Materialize ``query`` as a relation that lives as long as the evaluator (a plan step)."""

    def own_table(self, name: str) -> None:
        """Drop a table created outside the plan (a loaded file) when the evaluator closes."""


@dataclass
class CheckContext:
    """What a statistic's own per-class query may use."""

    plan: Plan
    qis: list[str]
    gen: exp.Table
    histograms: dict[str, exp.Table]
    value_order: Mapping[str, list[Any]]
    hierarchies: Mapping[str, Hierarchy]
    levels: Mapping[str, int]
    """The node's level per quasi-identifier."""
    column_types: Mapping[str, str]
    attribute_types: Mapping[str, str]
    dialect: str = "duckdb"
    """The sqlglot dialect the statement is built for."""
    generalizer: Generalizer | None = None
    """How the statement being built generalizes raw rows (a statistic that reads its own raw
    relation generalizes it with this, so the relation stays within the statement's own lookups)."""
    inputs: StatisticInputs | None = None
    """The evaluator's relations in the database, or None when compiling without a connection."""
    portable: bool = False
    """The statement must run outside this connection (a view, printed SQL): it may read no
    temporary relation of the evaluator."""

    @property
    def class_columns(self) -> list[str]:
        return self.qis


class Statistic(abc.ABC):  # noqa: B024 - a base to subclass; every hook has a default
    """A per-class aggregate. Equal statistics (same class and fields) are computed once."""

    # Subclasses that read a sensitive attribute's histogram declare a field ``attribute``.

    @property
    def column(self) -> str:
        """The output column name, unique per distinct statistic."""
        parts = [type(self).__name__.lower()]
        for key, value in sorted(vars(self).items()):
            parts.append(f"{key}_{value}")
        name = "_".join(parts)
        if len(name) > 40:  # PostgreSQL truncates identifiers at 63 bytes: keep names short and unique
            import hashlib

            name = f"{parts[0][:20]}_{hashlib.sha256(name.encode()).hexdigest()[:16]}"
        return internal(name)

    def aggregate(self, h: HistogramColumns) -> exp.Expression:
        """An aggregate over the histogram rows of one class (GROUP BY the class)."""
        raise NotImplementedError(type(self).__name__)

    def class_query(self, ctx: CheckContext) -> exp.Select | None:
        """A whole per-class query for statistics that need more than one GROUP BY (EMD); else None.

        The query must return the class columns ``ctx.class_columns`` and one column named ``self.column``.
        """
        return None

    def prepare(self, inputs: StatisticInputs) -> None:
        """Validate the inputs or build the statistic's own relations, once per evaluator (an
        optional hook)."""
        return None

    memory_inputs: ClassVar[frozenset[str]] = frozenset()
    """What the in-memory form reads of its attribute beyond the class histogram: ``order`` (values
    numbered in the attribute's order), ``tree`` (the attribute's hierarchy over its values) and
    ``numbers`` (each value read as a number); or beyond the table, ``population`` (a population
    table's records per class)."""

    def in_memory(self, classes: ClassTable) -> np.ndarray:
        """The numpy form: this statistic for every class of ``classes``."""
        raise NotImplementedError(type(self).__name__)

    def memory_refusal(self, sensitive_hierarchies: Mapping[str, Any]) -> str | None:
        """Why the in-memory form cannot run on this problem, or None."""
        return None

    def __hash__(self) -> int:
        return hash((type(self).__name__, tuple(sorted(vars(self).items()))))

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and vars(self) == vars(other)


def stat_attribute(s: Statistic) -> str | None:
    """The sensitive attribute a statistic reads, or None for class-level statistics."""
    return getattr(s, "attribute", None)


def has_memory_form(obj: Statistic | PrivacyModel) -> bool:
    """Whether a statistic or model defines its in-memory form (and, for a model, its statistics do)."""
    if isinstance(obj, Statistic):
        return type(obj).in_memory is not Statistic.in_memory
    return type(obj).satisfied_in_memory is not PrivacyModel.satisfied_in_memory and all(
        has_memory_form(s) for s in obj.statistics())


class ClassSize(Statistic):
    """|E|, computed with the classes themselves."""

    @property
    def column(self) -> str:
        return SIZE

    def in_memory(self, classes: ClassTable) -> np.ndarray:
        return classes.sizes


@dataclass(frozen=True)
class ModelResult:
    """What a table achieves under one model."""

    model: str
    holds: bool
    achieved: Any
    violating_classes: int
    violating_rows: int

    def as_dict(self) -> dict[str, Any]:
        achieved = self.achieved
        if isinstance(achieved, float) and (math.isinf(achieved) or math.isnan(achieved)):
            achieved = str(achieved)
        return {"holds": self.holds, "achieved": achieved, "violating_classes": self.violating_classes,
                "violating_rows": self.violating_rows}


class PrivacyModel(abc.ABC):
    """A privacy criterion evaluated per equivalence class of the quasi-identifiers."""

    name: ClassVar[str]
    """The model's key in the spec (``k_anonymity``)."""
    monotonicity: ClassVar[Monotonicity]
    table_reference: ClassVar[bool] = False
    """How the model treats suppressed rows. Every model judges a class on all of its rows, and
    suppression removes whole failing classes. A model with a table reference (a distribution,
    frequency or variance over the whole table) computes that reference over all rows, the suppressed
    ones included, as ARX does; such a model is therefore not monotone under suppression."""

    @abc.abstractmethod
    def statistics(self) -> tuple[Statistic, ...]:
        """The per-class statistics the predicate reads."""

    @abc.abstractmethod
    def satisfied(self, s: dict[Statistic, exp.Expression]) -> exp.Expression:
        """A boolean SQL condition over the statistic columns: does the class satisfy the model?"""

    def satisfied_in_memory(self, s: Mapping[Statistic, np.ndarray]) -> np.ndarray:
        """The numpy form of :meth:`satisfied`: which classes satisfy the model, from the statistics'
        in-memory values (one array per statistic, one entry per class)."""
        raise NotImplementedError(type(self).__name__)

    def achieved(self, s: dict[Statistic, exp.Expression]) -> exp.Expression | None:
        """An aggregate over the kept classes giving the parameter value the table achieves
        (smallest k, smallest l, largest t...), or None when the model has no such number."""
        return None

    def min_class_size(self) -> int:
        """Classes smaller than this always fail (ARX folds k and l into one size bound)."""
        return 1

    def local_recoding(self) -> bool:
        """Whether a local recoding may re-anonymize the suppressed records as a data set of their own
        with this model (ARX's ``isLocalRecodingSupported``; sqlanon's list is in docs/search.md)."""
        return False

    def sensitive_attributes(self) -> tuple[str, ...]:
        return tuple(sorted({a for s in self.statistics() if (a := stat_attribute(s))}))

    def is_monotonic(self, suppression_limit: float) -> bool:
        m = self.monotonicity
        return m.suppression if suppression_limit > 0 else m.generalization

    def validate_against(self, attributes: dict[str, Any], path: str) -> None:  # noqa: B027 - optional
        """Check the model's attribute references against the spec (roles, types)."""

    @property
    def label(self) -> str:
        return self.name

    def describe(self) -> str:
        return str(self)


def _unknown_model(kind: str, name: str, known: Sequence[str]) -> SpecError:
    return SpecError(f"unknown privacy model {name!r}; known: {', '.join(known)}."
                     + did_you_mean(name, known))


MODELS: Registry[type[PrivacyModel]] = Registry("privacy model", packages=("sqlanon.domain.models",),
                                                unknown=_unknown_model)
"""Spec key -> model class, filled by :func:`register` in the modules of this package."""


def register(cls: type[PrivacyModel]) -> type[PrivacyModel]:
    """Class decorator: add a privacy model to :data:`MODELS` under its spec key ``name``."""
    return MODELS.register(cls.name)(cls)
