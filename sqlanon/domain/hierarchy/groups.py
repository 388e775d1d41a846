"""Categories grouped into a table hierarchy: ordered runs and explicit maps."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sqlanon.domain.hierarchy.base import TOP
from sqlanon.domain.hierarchy.table import TableHierarchy
from sqlanon.errors import HierarchyError


def OrderedHierarchy(values: Sequence[Any], group_sizes: Sequence[int], *,
                     source: str = "ordered", null_leaf: str | None = None) -> TableHierarchy:
    """Ordered categories grouped into runs of neighbours, then ``*``.

    ``group_sizes=[2, 4]`` groups 2 neighbours at level 1 and 4 at level 2; each size must be a
    multiple of the previous one so that every group has one parent. Labels are ``first-last`` of
    each run (a run of one value keeps the value).

    Example:
        >>> h = OrderedHierarchy(["low", "mid", "high"], [2])
        >>> [list(r) for r in h.table().rows]
        [['low', 'low-mid', '*'], ['mid', 'low-mid', '*'], ['high', 'high', '*']]
    """
    labels = [str(v) for v in values]
    if not labels:
        raise HierarchyError("ordered values must not be empty", path="values")
    if len(set(labels)) != len(labels):
        dup = next(v for v in labels if labels.count(v) > 1)
        raise HierarchyError(f"ordered values must be distinct; {dup!r} is listed twice", path="values")
    rows: list[list[str]] = [[v] for v in labels]
    prev = 1
    for i, size in enumerate(group_sizes):
        if isinstance(size, bool) or not isinstance(size, int) or size < 1 or size % prev:
            raise HierarchyError(f"group size {size!r} must be a positive multiple of the previous "
                                 f"size {prev}", path=f"sizes[{i}]")
        prev = size
        for start in range(0, len(labels), size):
            run = labels[start:start + size]
            label = run[0] if len(run) == 1 else f"{run[0]}-{run[-1]}"
            for r in rows[start:start + size]:
                r.append(label)
    for r in rows:
        r.append(TOP)
    return TableHierarchy(rows, source=source, null_leaf=null_leaf)


def MapHierarchy(mapping: Mapping[Any, Sequence[Any] | Any], *, source: str = "map",
                 null_leaf: str | None = None) -> TableHierarchy:
    """Grouped categories: each value mapped to its generalizations, level 1 first.

    A single generalization may be given without a list. Every value needs the same number of
    generalizations; write the top (usually ``*``) explicitly.

    Example:
        >>> h = MapHierarchy({"flu": ["respiratory", "*"], "cold": ["respiratory", "*"],
        ...                   "ulcer": ["stomach", "*"]})
        >>> h.height, h.table().share("respiratory", 1)
        (2, 0.6666666666666666)
    """
    if not isinstance(mapping, Mapping) or not mapping:
        raise HierarchyError("must map each value to its list of generalizations", path="")
    rows = []
    for leaf, ancestors in mapping.items():
        chain = list(ancestors) if isinstance(ancestors, (list, tuple)) else [ancestors]
        for j, a in enumerate(chain, start=1):
            if a is None or isinstance(a, (dict, list, tuple)):
                raise HierarchyError(f"value {leaf!r}: generalization {j} must be a label, got {a!r}",
                                     path=str(leaf))
        rows.append([str(leaf), *(str(a) for a in chain)])
    return TableHierarchy(rows, source=source, null_leaf=null_leaf)
