"""Metrics: each one class registered by name (the names used in the spec and the JSON report)."""

from __future__ import annotations

from sqlanon.domain.metrics.base import METRICS, Metric, MetricContext, get_metric

_MODULES = ("sqlanon.domain.metrics.arx", "sqlanon.domain.metrics.entropy", "sqlanon.domain.metrics.numeric",
            "sqlanon.domain.metrics.risk", "sqlanon.domain.metrics.counting")


def load_all() -> None:
    import importlib

    for m in _MODULES:
        try:
            importlib.import_module(m)
        except ModuleNotFoundError as e:
            if e.name != m:
                raise


__all__ = ["METRICS", "Metric", "MetricContext", "get_metric", "load_all"]
