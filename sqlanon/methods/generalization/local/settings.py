"""``transformation.recoding`` and ``transformation.local_recoding``: which of ARX's local recodings.

ARX 3.9 turns a global transformation into a local recoding by anonymizing the records it suppressed
again, as a data set of their own, until nothing more is recovered (``ARXResult.optimizeIterative``
and ``optimizeIterativeFast``). The two variants and their parameters are ARX's:

* ``fast``: each step may suppress all but ``records`` (a share of the whole table, 0.01 by default)
  of the records it is given; the metric keeps its own gs-factor. Steps go on while one recovers any.
* ``iterative``: each step keeps the spec's suppression limit and searches with the Loss metric at
  gs-factor ``gs_factor``; a step that recovers nothing raises the gs-factor by ``adaption`` (while it
  stays ≤ 1) and tries again; at most ``iterations`` steps.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sqlanon.errors import SpecError, did_you_mean

RECODINGS = ("global", "local")
VARIANTS = ("fast", "iterative")
KEYS = ("variant", "records", "gs_factor", "iterations", "adaption")
PATH = "transformation.local_recoding"


@dataclass(frozen=True)
class LocalRecoding:
    variant: str = "fast"
    records: float = 0.01
    """fast: the share of the table's records each step must recover at least (ARX's ``records``)."""
    gs_factor: float = 0.5
    """iterative: the Loss metric's gs-factor of the first step."""
    iterations: int = 100
    """iterative: the most steps."""
    adaption: float = 0.05
    """iterative: added to the gs-factor when a step recovers nothing."""

    def as_dict(self) -> dict[str, Any]:
        if self.variant == "fast":
            return {"variant": "fast", "records": self.records}
        return {"variant": "iterative", "gs_factor": self.gs_factor, "iterations": self.iterations,
                "adaption": self.adaption}


def _number(value: Any, path: str, low: float, high: float, *, low_open: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
            or not (low < value if low_open else low <= value) or value > high:
        bound = f"({low:g}, {high:g}]" if low_open else f"[{low:g}, {high:g}]"
        raise SpecError(f"must be a number in {bound}, got {value!r}", path=path)
    return float(value)


def recoding_of(options: Mapping[str, Any]) -> str:
    """``global`` (one level per attribute, the default) or ``local``."""
    value = options.get("recoding", "global")
    if value not in RECODINGS:
        raise SpecError(f"must be one of {', '.join(RECODINGS)}, got {value!r}."
                        + did_you_mean(str(value), RECODINGS), path="transformation.recoding")
    return str(value)


def local_recoding(options: Mapping[str, Any]) -> LocalRecoding | None:
    """The validated settings of a local recoding, or None for a global one.

    Raises:
        SpecError: an unknown key or variant, a value out of range, or ``local_recoding`` given
            while ``recoding`` is global.
    """
    raw = options.get("local_recoding")
    if recoding_of(options) == "global":
        if raw is not None:
            raise SpecError("is read only with recoding: local", path=PATH)
        return None
    raw = {} if raw is None else raw
    if not isinstance(raw, Mapping):
        raise SpecError(f"must be a mapping of {', '.join(KEYS)}, got {raw!r}", path=PATH)
    for key in raw:
        if key not in KEYS:
            raise SpecError(f"unknown key {key!r}; known: {', '.join(KEYS)}." + did_you_mean(str(key), KEYS),
                            path=f"{PATH}.{key}")
    variant = raw.get("variant", "fast")
    if variant not in VARIANTS:
        raise SpecError(f"must be one of {', '.join(VARIANTS)}, got {variant!r}."
                        + did_you_mean(str(variant), VARIANTS), path=f"{PATH}.variant")
    own = {"fast": ("records",), "iterative": ("gs_factor", "iterations", "adaption")}[variant]
    for key in raw:
        if key != "variant" and key not in own:
            raise SpecError(f"is not read by variant {variant!r} (it reads {', '.join(own)})",
                            path=f"{PATH}.{key}")
    if variant == "fast":
        return LocalRecoding(variant, records=_number(raw.get("records", 0.01), f"{PATH}.records", 0, 1,
                                                      low_open=True))
    iterations = raw.get("iterations", 100)
    if isinstance(iterations, bool) or not isinstance(iterations, int) or iterations < 1:
        raise SpecError(f"must be a whole number ≥ 1, got {iterations!r}", path=f"{PATH}.iterations")
    return LocalRecoding(variant, gs_factor=_number(raw.get("gs_factor", 0.5), f"{PATH}.gs_factor", 0, 1),
                         iterations=iterations,
                         adaption=_number(raw.get("adaption", 0.05), f"{PATH}.adaption", 0, 1))
