"""Checks of single spec values: a choice among names, a bounded number, a name, a metric name.

Each raises :class:`~sqlanon.errors.SpecError` carrying the YAML key path of the value.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from sqlanon.errors import SpecError, did_you_mean


def choose(value: Any, choices: Iterable[str], path: str, what: str = "value") -> str:
    """``value`` if it is one of ``choices``, else a SpecError with a did-you-mean."""
    choices = tuple(choices)
    if not isinstance(value, str) or value not in choices:
        raise SpecError(f"unknown {what} {value!r}; use one of {', '.join(choices)}."
                        + did_you_mean(str(value), choices), path=path)
    return value


def number(value: Any, path: str, *, low: float | None = None, high: float | None = None) -> float:
    """``value`` as a float if it is a finite number within ``[low, high]``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise SpecError(f"must be a number, got {value!r}", path=path)
    if (low is not None and value < low) or (high is not None and value > high):
        bounds = f"[{low if low is not None else '-inf'}, {high if high is not None else 'inf'}]"
        raise SpecError(f"must be in {bounds}, got {value!r}", path=path)
    return float(value)


def name(value: Any, path: str, what: str = "a name") -> str:
    """``value`` if it is non-empty text, else a SpecError showing what was found."""
    if not isinstance(value, str) or not value:
        raise SpecError(f"must be {what}, got {value!r}", path=path)
    return value


def check_metric_name(value: Any, path: str) -> str:
    """``value`` if it names a registered metric."""
    from sqlanon.domain.metrics import METRICS

    if not isinstance(value, str):
        raise SpecError(f"must be a metric name, got {value!r}", path=path)
    try:
        METRICS.get(value)
    except SpecError as e:
        raise SpecError(e.rule, path=path) from None
    return value
