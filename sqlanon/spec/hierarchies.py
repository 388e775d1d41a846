"""Hierarchies in the spec: one reader per kind (``csv``, ``intervals``, ``date``, ``mask``,
``ordered``, ``map``), registered in :data:`HIERARCHY_BUILDERS` with the keys it takes beside its own.

A reader gets the spec value under its kind and returns the :class:`Hierarchy`; adding a kind is one
decorated reader here (and its builder in :mod:`sqlanon.domain.hierarchy`).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlanon.domain.hierarchy.base import Hierarchy
from sqlanon.domain.hierarchy.builders import (
    DateHierarchy,
    IntervalHierarchy,
    MapHierarchy,
    MaskHierarchy,
    OrderedHierarchy,
)
from sqlanon.domain.hierarchy.table import read_arx_csv
from sqlanon.errors import HierarchyError
from sqlanon.registry import Registry
from sqlanon.spec.context import Context, join, kind_of
from sqlanon.spec.values import choose


@dataclass(frozen=True)
class HierarchyEntry:
    """What a reader gets: the value under its kind, where it is, and the entry's other keys."""

    c: Context
    body: Any
    path: str
    """The key path of ``body`` (``attributes.age.hierarchy.intervals``)."""
    entry: dict[str, Any]
    """The whole hierarchy entry (its ``delimiter``, ``null``)."""
    order: list[Any] | None
    """The attribute's ``order``, if it has one."""
    inline: str
    """How messages name a hierarchy written inside the spec (``spec.yaml: <path>``)."""


Reader = Callable[[HierarchyEntry], Hierarchy]

HIERARCHY_BUILDERS: Registry[Reader] = Registry("hierarchy kind", sort=False)
"""Kind -> reader, in the order messages list the kinds; trait ``options``: the entry's other keys."""


@HIERARCHY_BUILDERS.register("csv", options=("delimiter", "null"))
def _csv(h: HierarchyEntry) -> Hierarchy:
    return read_arx_csv(h.c.file(h.body, h.path), delimiter=h.entry.get("delimiter", ";"),
                        null_leaf=h.entry.get("null"))


@HIERARCHY_BUILDERS.register("intervals", options=())
def _intervals(h: HierarchyEntry) -> Hierarchy:
    b = h.c.mapping(h.body, h.path)
    h.c.keys(b, ("widths", "origin", "bottom", "top"), h.path)
    widths = b.get("widths")
    if not isinstance(widths, list) or not widths:
        raise h.c.error(join(h.path, "widths"), "must be a non-empty list of widths")
    return IntervalHierarchy(tuple(widths), origin=b.get("origin", 0), bottom=b.get("bottom"),
                             top=b.get("top"))


@HIERARCHY_BUILDERS.register("date", options=())
def _date(h: HierarchyEntry) -> Hierarchy:
    if not isinstance(h.body, list):
        raise h.c.error(h.path, "must be a list of units such as [month, year, decade], got "
                        + kind_of(h.body))
    return DateHierarchy(tuple(h.body))


@HIERARCHY_BUILDERS.register("mask", options=())
def _mask(h: HierarchyEntry) -> Hierarchy:
    b = h.c.mapping(h.body, h.path)
    h.c.keys(b, ("levels", "from", "char"), h.path)
    side = choose(b.get("from", "right"), ("right", "left"), join(h.path, "from"), "side")
    levels: Any = b.get("levels")  # as written, missing or not: MaskHierarchy says what is wrong with it
    return MaskHierarchy(levels, from_right=side == "right", char=b.get("char", "*"))


@HIERARCHY_BUILDERS.register("ordered", options=("null",))
def _ordered(h: HierarchyEntry) -> Hierarchy:
    b = h.c.mapping(h.body, h.path)
    h.c.keys(b, ("values", "sizes"), h.path)
    values = b.get("values", h.order)
    if not isinstance(values, list):
        raise h.c.error(join(h.path, "values"),
                        "needs the values, lowest first (or the attribute's `order`)")
    if not isinstance(b.get("sizes"), list):
        raise h.c.error(join(h.path, "sizes"), "needs the group sizes per level, e.g. [2, 4]")
    return OrderedHierarchy(values, b["sizes"], source=h.inline, null_leaf=h.entry.get("null"))


@HIERARCHY_BUILDERS.register("map", options=("null",))
def _map(h: HierarchyEntry) -> Hierarchy:
    if not isinstance(h.body, dict):
        raise h.c.error(h.path, "must map each value to its list of generalizations, got "
                        + kind_of(h.body))
    return MapHierarchy(h.body, source=h.inline, null_leaf=h.entry.get("null"))


def hierarchy_from_dict(value: Any, *, path: str = "hierarchy", source: str | None = None,
                        base: str | os.PathLike[str] = ".", order: list[Any] | None = None) -> Hierarchy:
    """A hierarchy from its spec form: ``{csv: file}``, ``{intervals: {...}}``, ``{date: [...]}``, ...

    A bare string is a CSV file. ``order`` (the attribute's ``order``) supplies the values of an
    ``ordered`` hierarchy that lists none. Errors name ``source``, ``path`` and, for files, the file.
    """
    c = Context(source, Path(base))
    if isinstance(value, str):
        value = {"csv": value}
    v = c.mapping(value, path)
    known = tuple(HIERARCHY_BUILDERS.names())
    kinds = [k for k in v if k in known]
    if len(kinds) != 1:
        c.keys(v, (*known, "delimiter", "null"), path)
        raise c.error(path, f"give exactly one of {', '.join(known)}")
    kind = kinds[0]
    c.keys(v, (kind, *HIERARCHY_BUILDERS.traits(kind)["options"]), path)
    null = v.get("null")
    if null is not None and not isinstance(null, str):
        raise c.error(join(path, "null"), f"must be the leaf label that stands for NULL, got {null!r}")
    p = join(path, kind)
    inline = f"{c.source or 'spec'}: {p}"
    try:
        return HIERARCHY_BUILDERS.get(kind)(HierarchyEntry(c, v[kind], p, v, order, inline))
    except HierarchyError as e:
        if e.source and e.source not in (c.source, inline):  # a file: name it inside the message
            raise HierarchyError(f"{e.source}: {e.rule}", path=p, source=c.source) from None
        raise HierarchyError(e.rule, path=join(p, e.path), source=c.source) from None
