"""Privacy models: data plus a per-class predicate over SQL aggregates (the ARX design).

A model declares the per-class statistics it reads. Statistics are computed once per check, in SQL,
over the *histogram* of a sensitive attribute: one row per (equivalence class, sensitive value) with
the columns described by :class:`HistogramColumns`. A model's predicate then decides, per class,
whether the class satisfies it; classes that fail any model are the outliers that suppression removes.
"""

from __future__ import annotations

import abc
import math
from dataclasses import dataclass
from typing import Any, ClassVar

from sqlglot import exp

from sqlanon.errors import SpecError, did_you_mean
from sqlanon.registry import Registry
from sqlanon.sql.nodes import col, internal


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

    def class_query(self, ctx: Any) -> exp.Select | None:
        """A whole per-class query for statistics that need more than one GROUP BY (EMD); else None.

        The query must return the class columns ``ctx.class_columns`` and one column named ``self.column``.
        """
        return None

    def __hash__(self) -> int:
        return hash((type(self).__name__, tuple(sorted(vars(self).items()))))

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and vars(self) == vars(other)


def stat_attribute(s: Statistic) -> str | None:
    """The sensitive attribute a statistic reads, or None for class-level statistics."""
    return getattr(s, "attribute", None)


class ClassSize(Statistic):
    """|E|, computed with the classes themselves."""

    @property
    def column(self) -> str:
        return internal("size")


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

    def achieved(self, s: dict[Statistic, exp.Expression]) -> exp.Expression | None:
        """An aggregate over the kept classes giving the parameter value the table achieves
        (smallest k, smallest l, largest t...), or None when the model has no such number."""
        return None

    def min_class_size(self) -> int:
        """Classes smaller than this always fail (ARX folds k and l into one size bound)."""
        return 1

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


def _unknown_model(kind: str, name: str, known: list[str]) -> SpecError:
    return SpecError(f"unknown privacy model {name!r}; known: {', '.join(known)}." + did_you_mean(name, known))


MODELS: Registry[type[PrivacyModel]] = Registry("privacy model", packages=("sqlanon.domain.models",),
                                                unknown=_unknown_model)
"""Spec key -> model class, filled by :func:`register` in the modules of this package."""


def register(cls: type[PrivacyModel]) -> type[PrivacyModel]:
    """Class decorator: add a privacy model to :data:`MODELS` under its spec key ``name``."""
    return MODELS.register(cls.name)(cls)
