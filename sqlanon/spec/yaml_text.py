"""Parse YAML text the way every spec and builder is read: safe types, and no key written twice.

PyYAML keeps the last of two equal keys silently (``k: 5`` then ``k: 1`` gives k = 1). Here a key
repeated in one mapping is an error naming its key path and both lines. Keys brought in by a merge
(``<<: *anchor``) may be overridden, as YAML intends.
"""

from __future__ import annotations

from typing import Any

import yaml

from sqlanon.errors import SpecError

_MERGE = "tag:yaml.org,2002:merge"


class _Duplicate(Exception):
    def __init__(self, mapping: yaml.MappingNode, key: Any, first: int, second: int) -> None:
        super().__init__(key)
        self.mapping, self.key, self.first, self.second = mapping, key, first, second


class _Loader(yaml.SafeLoader):
    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[Any, int] = {}
        for key_node, _ in node.value:
            if key_node.tag == _MERGE:
                continue
            key = self.construct_object(key_node, deep=True)
            try:
                if key in seen:
                    raise _Duplicate(node, key, seen[key] + 1, key_node.start_mark.line + 1)
                seen[key] = key_node.start_mark.line
            except TypeError:  # an unhashable key: SafeLoader says so below
                continue
        return super().construct_mapping(node, deep=deep)


def parse_yaml(text: str, *, source: str | None = None, path: str = "", kind: str = "YAML") -> Any:
    """The data of ``text``; errors name ``source`` (the file), the key path under ``path`` and, for
    text that does not parse, what it should have been (``kind``).

    Raises:
        SpecError: the text is not valid YAML, or a mapping repeats a key.
    """
    loader = _Loader(text)
    try:
        root = loader.get_single_node()
        if root is None:
            return None
        try:
            return loader.construct_document(root)
        except _Duplicate as d:
            where = _join(path, _path_to(root, d.mapping) or "")
            raise SpecError(f"duplicate key (lines {d.first} and {d.second})",
                            path=_join(where, _label(d.key)), source=source) from None
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
        problem = getattr(e, "problem", None) or str(e)
        raise SpecError(f"{where}not valid {kind} ({problem})", path=path, source=source) from None
    finally:
        loader.dispose()


def _label(key: Any) -> str:
    return key if isinstance(key, str) else repr(key)


def _join(path: str, key: str) -> str:
    if not path or not key:
        return path or key
    return path + key if key.startswith("[") else f"{path}.{key}"


def _path_to(node: yaml.Node, target: yaml.Node) -> str | None:
    """The key path from ``node`` down to ``target`` (``privacy[0].k_anonymity``), or None."""
    stack: list[tuple[yaml.Node, str]] = [(node, "")]
    visited: set[int] = set()
    while stack:
        current, path = stack.pop()
        if current is target:
            return path
        if id(current) in visited:  # aliases may share (or nest) nodes
            continue
        visited.add(id(current))
        if isinstance(current, yaml.MappingNode):
            for k, v in current.value:
                key = k.value if isinstance(k, yaml.ScalarNode) else "?"
                stack.append((v, _join(path, key)))
        elif isinstance(current, yaml.SequenceNode):
            for i, v in enumerate(current.value):
                stack.append((v, f"{path}[{i}]"))
    return None
