"""The registry of transformation methods: ``transformation.method`` names one of them.

Each method is one module that registers a :class:`~sqlanon.methods.base.Method` here; the spec
reaches a method's settings and traits through this registry only (the spec layer never imports a
method's module by name).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlanon.registry import Registry

if TYPE_CHECKING:
    from sqlanon.methods.base import Method

METHODS: Registry[Method] = Registry("transformation method", modules=(
    "sqlanon.methods.generalization.method",
    "sqlanon.methods.microaggregation.method",
    "sqlanon.methods.mondrian.method",
    "sqlanon.methods.perturbation.method",
    "sqlanon.methods.anatomy.method",
    "sqlanon.methods.local_suppression.method",
    "sqlanon.methods.republication.method",
))


def method_named(name: str) -> Method:
    """The registered method ``name`` (a spec's ``transformation.method``, already validated)."""
    return METHODS.get(name)
