"""The ``transformation`` settings of ``method: mondrian``, validated when the spec is built."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlanon.errors import SpecError, did_you_mean

MONDRIAN_KEYS = ("mode", "width", "k", "intervals", "path")
MODES = ("strict", "relaxed")
WIDTHS = ("exact", "inherited")
INTERVALS = ("text", "columns")
PATHS = ("auto", "memory", "database")


@dataclass(frozen=True)
class MondrianSettings:
    k: int
    mode: str = "strict"
    width: str = "exact"
    intervals: str = "text"
    """``text``: a numeric box as ``[lo-hi]``; ``columns``: two columns ``<name>_lo``, ``<name>_hi``."""
    models: tuple[Any, ...] = ()
    """Privacy models besides k-anonymity that every cut's two sides must satisfy."""
    path: str = "auto"
    """Where the cuts are computed: ``memory``, ``database``, or ``auto`` (memory when the data a
    run reads fits :data:`~sqlanon.methods.mondrian.paths.MEMORY_LIMIT`)."""

    @property
    def strict(self) -> bool:
        return self.mode == "strict"

    @property
    def exact(self) -> bool:
        return self.width == "exact"


def _choice(options: Mapping[str, Any], key: str, allowed: Sequence[str], default: str) -> str:
    value = options.get(key, default)
    if value not in allowed:
        raise SpecError(f"must be one of {', '.join(allowed)}, got {value!r}."
                        + did_you_mean(str(value), allowed), path=f"transformation.{key}")
    return str(value)


def mondrian_settings(options: Mapping[str, Any], privacy: Sequence[Any],
                      suppression: tuple[float, str] = (0.0, "remove"),
                      levels: Mapping[str, int] | None = None) -> MondrianSettings:
    """Validate ``transformation`` for ``method: mondrian``; raises :class:`SpecError` naming the key."""
    if levels:
        raise SpecError("levels apply to method generalization; mondrian chooses a box per partition",
                        path="transformation.levels")
    if suppression != (0.0, "remove"):
        key = "suppression_limit" if suppression[0] else "suppressed"
        raise SpecError("mondrian suppresses no rows: every partition holds k rows or more",
                        path=f"transformation.{key}")
    for key in options:
        if key not in MONDRIAN_KEYS:
            raise SpecError(f"unknown mondrian setting {key!r}; use {', '.join(MONDRIAN_KEYS)}."
                            + did_you_mean(key, MONDRIAN_KEYS), path=f"transformation.{key}")
    mode = _choice(options, "mode", MODES, "strict")
    width = _choice(options, "width", WIDTHS, "exact")
    intervals = _choice(options, "intervals", INTERVALS, "text")
    where = _choice(options, "path", PATHS, "auto")
    ks = [m.k for m in privacy if getattr(m, "name", None) == "k_anonymity"]
    if "k" in options:
        k = options["k"]
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise SpecError(f"must be an integer >= 1, got {k!r}", path="transformation.k")
        k = max([k, *ks])
    elif ks:
        k = max(ks)
    else:
        k = 1
    models = []
    for i, m in enumerate(privacy):
        name = getattr(m, "name", type(m).__name__)
        if name == "k_anonymity":
            continue
        path = f"privacy[{i}].{name}"
        if not m.monotonicity.generalization:
            raise SpecError(f"{name} is not monotone under splitting, so a cut cannot be judged by its two "
                            "sides; mondrian supports k_anonymity, l_diversity and t_closeness", path=path)
        if not _in_memory(m):
            raise SpecError(f"{name} has no per-class form mondrian can evaluate on a cut's sides", path=path)
        models.append(m)
    if k < 2 and not models:
        raise SpecError("mondrian needs k >= 2: set transformation.k or a k_anonymity model",
                        path="transformation.k")
    if where == "memory" and models:
        raise SpecError("the in-memory path judges cuts by k alone; with other privacy models use path: "
                        "database (or auto)", path="transformation.path")
    return MondrianSettings(k, mode, width, intervals, tuple(models), where)


def _in_memory(model: Any) -> bool:
    from sqlanon.domain.models.base import has_memory_form

    return bool(has_memory_form(model)) and all(
        not {"tree", "population", "numbers"} & s.memory_inputs for s in model.statistics())
