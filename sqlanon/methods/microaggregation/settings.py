"""The ``transformation`` settings of ``method: microaggregation``, validated (docs/microaggregation.md).

Everything that can be checked without the data is checked here, when the spec is built; column
names outside ``attributes`` (``key``, ``block_by``) and the attributes' types are checked when the
source is opened (:mod:`sqlanon.methods.microaggregation.pipeline`).
"""

from __future__ import annotations

import inspect
import math
import numbers
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlanon.errors import SpecError, did_you_mean
from sqlanon.methods.microaggregation.algorithms.registry import ALGORITHMS, get_algorithm, traits
from sqlanon.methods.microaggregation.distance.centroids import get_centroid

SQL_METHODS = ("individual_ranking", "projection")
"""Algorithms that run as one SQL query, without pulling the data."""
STATISTICS = ("mean", "median")
PROJECTIONS = ("pca", "zscore")
GENERIC_KEYS = ("algorithm", "k", "attributes", "statistic", "projection", "block_by", "block_size",
                "key", "centroid")
"""Settings the pipeline reads itself; every other option goes to the partitioner."""
NOT_FOR_MICROAGGREGATION = ("search", "metric", "weights", "time_limit")


@dataclass(frozen=True)
class MicroaggregationSettings:
    algorithm: str
    k: int
    attributes: tuple[str, ...]
    statistic: str = "mean"
    projection: str = "pca"
    block_by: tuple[str, ...] = ()
    block_size: int | None = None
    key: tuple[str, ...] = ()
    centroid: str = "mode"
    options: Mapping[str, Any] | None = None
    """Options for the partitioner (``gamma``, ``seed``, ``t``, ...)."""

    @property
    def in_sql(self) -> bool:
        """Whether the algorithm is one SQL query (no data is pulled)."""
        return self.algorithm in SQL_METHODS

    @property
    def partitioner_options(self) -> dict[str, Any]:
        return dict(self.options or {})


def _names(value: Any, path: str) -> tuple[str, ...]:
    """A column name or a list of distinct column names."""
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, (list, tuple)) or not value:
        raise SpecError(f"must be a column name or a non-empty list of them, got {value!r}", path=path)
    out: list[str] = []
    for i, v in enumerate(value):
        if not isinstance(v, str) or not v:
            raise SpecError(f"must be a column name, got {v!r}", path=f"{path}[{i}]")
        if v in out:
            raise SpecError(f"{v!r} is listed twice", path=f"{path}[{i}]")
        out.append(v)
    return tuple(out)


def _integer(value: Any, path: str, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise SpecError(f"must be an integer >= {low}, got {value!r}", path=path)
    return value


def _k(options: Mapping[str, Any], privacy: Sequence[Any]) -> int:
    if "k" in options:
        return _integer(options["k"], "transformation.k", 2)
    ks = [m.k for m in privacy if getattr(m, "name", None) == "k_anonymity"]
    if ks:
        return _integer(max(ks), "privacy.k_anonymity.k", 2)
    raise SpecError("microaggregation needs the group size: set transformation.k (e.g. `k: 5`)",
                    path="transformation.k")


def _algorithm(options: Mapping[str, Any]) -> str:
    name = options.get("algorithm", "mdav")
    if not isinstance(name, str):
        raise SpecError(f"must be an algorithm name, got {name!r}", path="transformation.algorithm")
    if name in SQL_METHODS:
        return name
    try:
        get_algorithm(name)
    except SpecError:
        known = sorted({*ALGORITHMS, *SQL_METHODS})
        raise SpecError(f"unknown microaggregation algorithm {name!r}; use one of {', '.join(known)}."
                        + did_you_mean(name, known), path="transformation.algorithm") from None
    return name


def _attributes(options: Mapping[str, Any], roles: Mapping[str, str]) -> tuple[str, ...]:
    qis = tuple(a for a, role in roles.items() if role == "quasi_identifier")
    if "attributes" not in options:
        return qis
    names = _names(options["attributes"], "transformation.attributes")
    for i, a in enumerate(names):
        path = f"transformation.attributes[{i}]"
        if a not in roles:
            raise SpecError(f"unknown attribute {a!r}; declare it under attributes as a "
                            "quasi_identifier." + did_you_mean(a, roles), path=path)
        if roles[a] != "quasi_identifier":
            raise SpecError(f"{a!r} has role {roles[a]}; only quasi-identifiers are microaggregated",
                            path=path)
    return names


def _sensitive_attribute(value: Any, roles: Mapping[str, str]) -> None:
    """The confidential attribute of the t-closeness and (k,p,q,r) algorithms."""
    path = "transformation.attribute"
    if not isinstance(value, str) or not value:
        raise SpecError(f"must be a sensitive attribute's name, got {value!r}", path=path)
    if roles.get(value) != "sensitive":
        sensitive = [a for a, role in roles.items() if role == "sensitive"]
        raise SpecError(f"{value!r} is not a declared sensitive attribute." + did_you_mean(value, sensitive),
                        path=path)


def _number_rule(low: float, high: float | None = None, *, low_open: bool = False, integer: bool = False
                 ) -> Callable[[Any], bool]:
    def ok(v: Any) -> bool:
        if isinstance(v, bool) or not isinstance(v, numbers.Real) or not math.isfinite(v):
            return False
        if integer and not isinstance(v, numbers.Integral):
            return False
        x = float(v)
        return (x > low if low_open else x >= low) and (high is None or x <= high)
    return ok


def _distinct_list(v: Any) -> bool:
    return isinstance(v, (list, tuple)) and bool(v) and len({repr(x) for x in v}) == len(v)


OPTION_RULES: dict[str, tuple[Callable[[Any], bool], str]] = {
    "gamma": (_number_rule(0), "a number >= 0"),
    "t": (_number_rule(0, 1, low_open=True), "a number in (0, 1]"),
    "p": (_number_rule(1, integer=True), "an integer >= 1"),
    "q": (_number_rule(0, 1, low_open=True), "a number in (0, 1]"),
    "r": (_number_rule(0, 1), "a number in [0, 1]"),
    "seed": (_number_rule(0, integer=True), "an integer >= 0"),
    "distance": (lambda v: v in ("ordered", "equal", "hierarchical"), "one of ordered, equal, hierarchical"),
    "order": (_distinct_list, "a non-empty list of distinct values, lowest first"),
}
"""Rules of partitioner options that hold whatever the data (checked when the spec is loaded; the
algorithms check the rest, such as p <= k, against the rows)."""


def _partitioner_options(algorithm: str, options: Mapping[str, Any]) -> dict[str, Any]:
    extra = {k: v for k, v in options.items() if k not in GENERIC_KEYS}
    if algorithm in SQL_METHODS:
        if extra:
            key = next(iter(extra))
            raise SpecError(f"{key!r} does not apply to algorithm {algorithm}",
                            path=f"transformation.{key}")
        return {}
    params = inspect.signature(get_algorithm(algorithm)).parameters
    for name, p in params.items():
        if p.kind == p.KEYWORD_ONLY and p.default is p.empty and name not in extra:
            raise SpecError(f"algorithm {algorithm} needs {name!r}", path=f"transformation.{name}")
    takes_any = any(p.kind == p.VAR_KEYWORD for p in params.values())
    accepted = [n for n, p in params.items() if p.kind == p.KEYWORD_ONLY or
                (p.kind == p.POSITIONAL_OR_KEYWORD and n not in ("records", "k"))]
    for key in extra:
        if not takes_any and key not in accepted:
            raise SpecError(f"{key!r} does not apply to algorithm {algorithm}"
                            + (f" (its options: {', '.join(accepted)})" if accepted else ""),
                            path=f"transformation.{key}")
        if key in OPTION_RULES and not OPTION_RULES[key][0](extra[key]):
            raise SpecError(f"must be {OPTION_RULES[key][1]}, got {extra[key]!r}",
                            path=f"transformation.{key}")
    return extra


def microaggregation_settings(options: Mapping[str, Any], roles: Mapping[str, str],
                              privacy: Sequence[Any] = (), levels: Mapping[str, int] | None = None,
                              suppression: tuple[float, str] = (0.0, "remove")
                              ) -> MicroaggregationSettings:
    """Validate ``transformation`` options for ``method: microaggregation``.

    Args:
        options: ``Transformation.options``.
        roles: attribute name -> role, in declaration order.
        privacy: the spec's privacy models (a ``k_anonymity`` model supplies ``k`` when unset).
        levels: ``transformation.levels``; must be empty.
        suppression: ``transformation.suppression_limit`` and ``suppressed``; must be the defaults.

    Raises:
        SpecError: naming the key and the rule broken.
    """
    if levels:
        raise SpecError("levels apply to method generalization; microaggregation replaces values by "
                        "group statistics", path="transformation.levels")
    if suppression != (0.0, "remove"):
        key = "suppression_limit" if suppression[0] else "suppressed"
        raise SpecError("microaggregation suppresses no rows; suppression applies to generalization",
                        path=f"transformation.{key}")
    for key in NOT_FOR_MICROAGGREGATION:
        if key in options:
            raise SpecError(f"{key!r} applies to the generalization search, not to microaggregation",
                            path=f"transformation.{key}")
    algorithm = _algorithm(options)
    k = _k(options, privacy)
    attributes = _attributes(options, roles)
    if "attribute" in options:
        _sensitive_attribute(options["attribute"], roles)
    statistic = options.get("statistic", "mean")
    if statistic not in STATISTICS:
        raise SpecError(f"unknown statistic {statistic!r}; use one of {', '.join(STATISTICS)}."
                        + did_you_mean(str(statistic), STATISTICS), path="transformation.statistic")
    block_by = _names(options["block_by"], "transformation.block_by") if "block_by" in options else ()
    block_size = (_integer(options["block_size"], "transformation.block_size", k)
                  if "block_size" in options else None)
    if (block_by or block_size) and (algorithm in SQL_METHODS or traits(algorithm).per_attribute):
        key = "block_by" if block_by else "block_size"
        raise SpecError(f"blocking applies to multivariate algorithms that group pulled records "
                        f"(mdav, vmdav, ...), not to {algorithm}", path=f"transformation.{key}")
    if block_by and block_size:
        raise SpecError("give block_by (strata) or block_size (blocks of the projection order), "
                        "not both", path="transformation.block_size")
    projection = options.get("projection", "pca")
    if projection not in PROJECTIONS:
        raise SpecError(f"unknown projection {projection!r}; use one of {', '.join(PROJECTIONS)}."
                        + did_you_mean(str(projection), PROJECTIONS), path="transformation.projection")
    if "projection" in options and algorithm != "projection" and not block_size:
        raise SpecError("projection applies to algorithm projection and to block_size",
                        path="transformation.projection")
    row_key = _names(options["key"], "transformation.key") if "key" in options else ()
    centroid = options.get("centroid", "mode")
    if not isinstance(centroid, str):
        raise SpecError(f"must be a centroid name, got {centroid!r}", path="transformation.centroid")
    get_centroid(centroid)
    return MicroaggregationSettings(algorithm, k, attributes, statistic, projection, block_by,
                                    block_size, row_key, centroid, _partitioner_options(algorithm, options))
