"""The ``transformation`` settings of ``method: local_suppression`` (docs/local-recoding.md)."""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlanon.errors import SpecError, did_you_mean

KEYS = ("k", "importance", "solver", "heuristic", "time_limit", "suppressed_value", "alpha",
        "generalize_first")
SEARCHES = ("optimal",)
SOLVERS = ("heuristic", "exact")
HEURISTICS = ("cover", "pattern", "sdcmicro", "rounds", "batch_cover")
DEFAULT_TIME_LIMIT = 60.0


@dataclass(frozen=True)
class LocalSuppressionSettings:
    k: int
    importance: dict[str, float] = field(default_factory=dict)
    """Cost of one suppressed cell per attribute (1 when not given)."""
    solver: str = "heuristic"
    heuristic: str = "cover"
    time_limit: float = DEFAULT_TIME_LIMIT
    suppressed_value: str | None = None
    """Written instead of NULL in a suppressed cell (the quasi-identifiers are then text)."""
    levels: dict[str, int] = field(default_factory=dict)
    """Generalization levels applied before any cell is suppressed."""
    alpha: float = 1.0
    """What a row with a missing (suppressed) cell counts in other rows' frequencies (sdcMicro's
    ``alpha``): 1, every wildcard match counts; 0, such rows count for no other row."""
    cell_weight: float | None = None
    """Set by ``generalize_first: {search: optimal}``: the levels are searched, a suppressed cell
    costing this many fully generalized cells (:mod:`.level_search`)."""

    def weight(self, attribute: str) -> float:
        return float(self.importance.get(attribute, 1.0))


def _positive(value: Any, path: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value) \
            or value <= 0:
        raise SpecError(f"must be a number > 0, got {value!r}", path=path)
    return float(value)


def _k(options: Mapping[str, Any], privacy: Sequence[Any]) -> int:
    if "k" in options:
        k = options["k"]
        path = "transformation.k"
    else:
        ks = [m.k for m in privacy if getattr(m, "name", None) == "k_anonymity"]
        if not ks:
            raise SpecError("local_suppression needs k: set transformation.k (e.g. `k: 5`) or a "
                            "k_anonymity privacy model", path="transformation.k")
        k, path = max(ks), "privacy.k_anonymity.k"
    if isinstance(k, bool) or not isinstance(k, int) or k < 2:
        raise SpecError(f"must be an integer >= 2, got {k!r}", path=path)
    return k


def _choice(options: Mapping[str, Any], key: str, allowed: tuple[str, ...], default: str) -> str:
    value = options.get(key, default)
    if value not in allowed:
        raise SpecError(f"unknown {key} {value!r}; use one of {', '.join(allowed)}."
                        + did_you_mean(str(value), allowed), path=f"transformation.{key}")
    return str(value)


def local_suppression_settings(options: Mapping[str, Any], roles: Mapping[str, str],
                               hierarchies: Mapping[str, bool], privacy: Sequence[Any] = (),
                               levels: Mapping[str, int] | None = None,
                               suppression: tuple[float, str] = (0.0, "remove")) -> LocalSuppressionSettings:
    """Validate the ``transformation`` section.

    Args:
        options: ``Transformation.options``.
        roles: attribute name -> role.
        hierarchies: attribute name -> whether it has a hierarchy (a level needs one).
        privacy: the spec's privacy models (a ``k_anonymity`` model gives k when unset).
        levels: ``transformation.levels``: generalization applied first.
        suppression: ``suppression_limit`` and ``suppressed``; must be the defaults.
    """
    for key in options:
        if key not in KEYS:
            raise SpecError(f"{key!r} does not apply to local_suppression (its settings: {', '.join(KEYS)})."
                            + did_you_mean(str(key), KEYS), path=f"transformation.{key}")
    if suppression != (0.0, "remove"):
        key = "suppression_limit" if suppression[0] else "suppressed"
        raise SpecError("local_suppression suppresses cells, never rows; drop this setting (or use "
                        "suppressed_value for a marker in suppressed cells)", path=f"transformation.{key}")
    qis = [a for a, role in roles.items() if role == "quasi_identifier"]
    for name, level in (levels or {}).items():
        if name in roles and roles[name] == "quasi_identifier" and level and not hierarchies.get(name):
            raise SpecError(f"{name!r} has no hierarchy to generalize it with; declare one or drop "
                            "its level", path=f"transformation.levels.{name}")
    importance: dict[str, float] = {}
    raw = options.get("importance", {})
    if not isinstance(raw, Mapping):
        raise SpecError("must map quasi-identifiers to weights, e.g. {age: 2, sex: 1}",
                        path="transformation.importance")
    for name, weight in raw.items():
        path = f"transformation.importance.{name}"
        if name not in qis:
            raise SpecError(f"{name!r} is not a quasi_identifier." + did_you_mean(str(name), qis), path=path)
        importance[str(name)] = _positive(weight, path)
    solver = _choice(options, "solver", SOLVERS, "heuristic")
    heuristic = _choice(options, "heuristic", HEURISTICS, "cover")
    if "heuristic" in options and solver == "exact":
        raise SpecError("heuristic applies to solver heuristic", path="transformation.heuristic")
    if "time_limit" in options and solver != "exact":
        raise SpecError("time_limit applies to solver exact", path="transformation.time_limit")
    time_limit = _positive(options.get("time_limit", DEFAULT_TIME_LIMIT), "transformation.time_limit")
    marker = options.get("suppressed_value")
    if marker is not None and not isinstance(marker, str):
        raise SpecError(f"must be a text marker such as '*', got {marker!r}",
                        path="transformation.suppressed_value")
    alpha = options.get("alpha", 1.0)
    if isinstance(alpha, bool) or not isinstance(alpha, numbers.Real) or not 0 <= float(alpha) <= 1:
        raise SpecError(f"must be a number in [0, 1], got {alpha!r}", path="transformation.alpha")
    weight = _level_search(options.get("generalize_first"), levels or {}, hierarchies, qis)
    return LocalSuppressionSettings(_k(options, privacy), importance, solver, heuristic, time_limit, marker,
                                    dict(levels or {}), float(alpha), weight)


def _level_search(raw: Any, levels: Mapping[str, int], hierarchies: Mapping[str, bool], qis: list[str]
                  ) -> float | None:
    """``generalize_first: {search: optimal, cell_weight: 1}``: the weight of a suppressed cell."""
    path = "transformation.generalize_first"
    if raw is None:
        return None
    if not isinstance(raw, Mapping):
        raise SpecError("must be a mapping such as {search: optimal}", path=path)
    for key in raw:
        if key not in ("search", "cell_weight"):
            raise SpecError(f"unknown key {key!r} (its keys: search, cell_weight)."
                            + did_you_mean(str(key), ("search", "cell_weight")), path=f"{path}.{key}")
    if raw.get("search") not in SEARCHES:
        raise SpecError(f"search must be one of {', '.join(SEARCHES)}, got {raw.get('search')!r}",
                        path=f"{path}.search")
    if any(levels.values()):
        raise SpecError("the levels are searched: drop transformation.levels (or generalize_first)",
                        path=path)
    if not any(hierarchies.get(a) for a in qis):
        raise SpecError("no quasi-identifier has a hierarchy to generalize it with", path=path)
    return _positive(raw.get("cell_weight", 1.0), f"{path}.cell_weight")
