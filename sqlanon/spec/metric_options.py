"""The ``metrics.options`` a spec may set: one table, checked when the spec is loaded.

A metric that reads a new option adds one row to :data:`METRIC_OPTIONS` (its name, the metrics that
read it, and the rule its value must follow); docs/spec.md lists the same table.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from sqlanon.errors import SpecError, did_you_mean

Check = Callable[[Any, str, Mapping[str, Any]], None]
"""``check(value, key path, attributes by name)`` raises SpecError when the value breaks the rule."""


@dataclass(frozen=True)
class MetricOption:
    read_by: str
    """The metrics that read the option (for messages and docs)."""
    check: Check


def attribute_name(*roles: str) -> Check:
    """A declared attribute with one of ``roles``."""
    def check(value: Any, path: str, attributes: Mapping[str, Any]) -> None:
        if not isinstance(value, str) or not value:
            raise SpecError(f"must be an attribute name, got {value!r}", path=path)
        if value not in attributes:
            raise SpecError(f"unknown attribute {value!r}." + did_you_mean(value, attributes), path=path)
        if attributes[value].role not in roles:
            wanted = " or ".join(r.replace("_", "-") for r in roles)
            raise SpecError(f"{value!r} is not a {wanted} (role {attributes[value].role})", path=path)
    return check


def attribute_names(*roles: str) -> Check:
    """A non-empty list of distinct declared attributes, each with one of ``roles``."""
    one = attribute_name(*roles)
    what = " or ".join(r.replace("_", "-") + "s" for r in roles)

    def check(value: Any, path: str, attributes: Mapping[str, Any]) -> None:
        if not isinstance(value, (list, tuple)) or not value:
            raise SpecError(f"must be a non-empty list of {what}, got {value!r}", path=path)
        for i, v in enumerate(value):
            one(v, f"{path}[{i}]", attributes)
            if v in value[:i]:
                raise SpecError(f"{v!r} is listed twice", path=f"{path}[{i}]")
    return check


def number_in(low: float, high: float) -> Check:
    def check(value: Any, path: str, attributes: Mapping[str, Any]) -> None:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
                or not low <= value <= high:
            raise SpecError(f"must be a number in [{low:g}, {high:g}], got {value!r}", path=path)
    return check


def relation_name(value: Any, path: str, attributes: Mapping[str, Any]) -> None:
    """A table or view name (its existence is checked when the database is open); the Python API may
    pass a sqlglot relation instead."""
    from sqlglot import exp

    if isinstance(value, exp.Expression):
        return
    if not isinstance(value, str) or not value.strip():
        raise SpecError(f"must be a table name, got {value!r}", path=path)


def monotonic_variants(value: Any, path: str, attributes: Mapping[str, Any]) -> None:
    """``true``, ``false`` or a list of the metrics with a monotonic variant (ARX's names)."""
    from sqlanon.domain.metrics.base import monotonic_choice

    try:
        monotonic_choice({"monotonic": value})
    except SpecError as e:
        raise SpecError(e.rule, path=path) from None


def population_size(value: Any, path: str, attributes: Mapping[str, Any]) -> None:
    """A population size: a whole number ≥ 1, or ``usa`` (ARX's preset)."""
    if isinstance(value, str) and value.lower() == "usa":
        return
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise SpecError(f"must be a whole number of people or 'usa', got {value!r}", path=path)


def sampling_fraction(value: Any, path: str, attributes: Mapping[str, Any]) -> None:
    """The share of the population the table holds, f = n/N in (0, 1]."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
            or not 0 < value <= 1:
        raise SpecError(f"must be a number in (0, 1], got {value!r}", path=path)


METRIC_OPTIONS: dict[str, MetricOption] = {
    "target": MetricOption("classification", attribute_name("quasi_identifier", "sensitive")),
    "suppressed_penalty": MetricOption("classification", number_in(0, 1)),
    "population": MetricOption("journalist risks", relation_name),
    "numeric": MetricOption("numeric change metrics", attribute_names("quasi_identifier")),
    "monotonic": MetricOption("entropy, precision, discernibility", monotonic_variants),
    "gs_factor": MetricOption("loss, loss_arithmetic", number_in(0, 1)),
    "population_size": MetricOption("population_uniques, sqlanon risk", population_size),
    "sampling_fraction": MetricOption("population_uniques, sqlanon risk", sampling_fraction),
    "risk_threshold": MetricOption("sqlanon risk (records at risk)", number_in(0, 1)),
    "sampling_weight": MetricOption("sqlanon risk (sdcMicro's individual risk)",
                                    attribute_name("insensitive")),
}


def check_metric_options(options: Mapping[Any, Any], attributes: Mapping[str, Any],
                         path: str = "metrics.options") -> None:
    """Every option known and its value valid.

    Raises:
        SpecError: an unknown option (with the closest known one) or a value that breaks its rule.
    """
    for key, value in options.items():
        where = f"{path}.{key}"
        if key not in METRIC_OPTIONS:
            raise SpecError(f"unknown metric option {key!r}; known: {', '.join(METRIC_OPTIONS)}."
                            + did_you_mean(str(key), METRIC_OPTIONS), path=where)
        METRIC_OPTIONS[key].check(value, where, attributes)
    if "population_size" in options and "sampling_fraction" in options:
        raise SpecError("give population_size or sampling_fraction, not both",
                        path=f"{path}.sampling_fraction")
