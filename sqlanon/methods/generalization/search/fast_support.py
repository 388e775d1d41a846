"""What the in-memory node check can run: the models, statistics and metrics with an in-memory form."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sqlanon.domain.metrics import get_metric
from sqlanon.domain.metrics.base import METRICS as REGISTERED_METRICS
from sqlanon.domain.metrics.base import Metric
from sqlanon.domain.models.base import PrivacyModel, Statistic, has_memory_form
from sqlanon.errors import UnsupportedError


def memory_metrics() -> tuple[str, ...]:
    """The metrics with an in-memory form, in source order (module, then line): the same list
    whichever metric module was imported first."""
    get_metric("loss")  # loads every metric module
    found = [cls for _, cls in REGISTERED_METRICS.items() if cls.computes_in_memory()]
    found.sort(key=lambda cls: (cls.__module__, cls.in_memory.__code__.co_firstlineno))
    return tuple(cls.name for cls in found)


def refusal(m: PrivacyModel, qis: Sequence[str], sensitive_hierarchies: Mapping[str, object]) -> str | None:
    """Why the in-memory check cannot decide model ``m``, or None."""
    if not has_memory_form(m):
        return m.label
    for s in m.statistics():
        reason = s.memory_refusal(sensitive_hierarchies)
        if reason is not None:
            return reason
    if any(a in qis for a in m.sensitive_attributes()):
        return "its attribute is a quasi-identifier"
    return None


def check_supported(models: Sequence[PrivacyModel], qis: Sequence[str],
                    sensitive_hierarchies: Mapping[str, object], metric_name: str | None = None) -> None:
    """Refuse, naming them, the models and the metric the in-memory check cannot run.

    Raises:
        UnsupportedError: the caller then checks nodes in SQL.
    """
    bad = [f"{m} ({reason})" for m in models
           if (reason := refusal(m, qis, sensitive_hierarchies)) is not None]
    if bad:
        raise UnsupportedError("the in-memory node check does not support: " + "; ".join(bad)
                               + " (check these nodes in SQL)")
    if metric_name is not None and metric_name not in (supported := memory_metrics()):
        raise UnsupportedError(f"the in-memory node check does not support metric {metric_name!r}"
                               f"; supported: {', '.join(supported)} (check these nodes in SQL)")


def memory_metric(name: str, monotonic: bool, options: Mapping[str, Any] | None = None) -> Metric:
    """The metric ``name``, in its monotonic variant when asked and when it has one, built with the
    ``options`` its constructor reads."""
    return get_metric(name, options={**(options or {}), "monotonic": monotonic})


def statistics_of(models: Sequence[PrivacyModel]) -> list[Statistic]:
    return list(dict.fromkeys(s for m in models for s in m.statistics()))


def attributes_needing(statistics: Sequence[Statistic], what: str) -> set[str]:
    """The sensitive attributes some statistic reads with ``what`` (``order``, ``tree``)."""
    return {a for s in statistics if what in s.memory_inputs and (a := getattr(s, "attribute", None))}
