"""Metrics: each one class registered by name (the names used in the spec and the JSON report)."""

from __future__ import annotations

from sqlanon.domain.metrics.base import METRICS, Metric, MetricContext, get_metric

__all__ = ["METRICS", "Metric", "MetricContext", "get_metric"]
