"""A categorical attribute's generalization hierarchy as the tree Mondrian cuts by (rule 8 of
docs/local-recoding.md#mondrian): leaves coded in depth-first order, so every node covers a run of
codes, children in file order."""

from __future__ import annotations

from collections.abc import Sequence

from sqlanon.methods.mondrian.cuts import Hierarchical


class HierarchyTree(Hierarchical):
    """Nodes are numbered from 0 (the root); a path of labels from the top names each node."""

    def __init__(self, rows: Sequence[Sequence[str | None]]) -> None:
        kids: dict[tuple[str, ...], list[tuple[str, ...]]] = {(): []}
        for row in rows:
            labels = [str(v) for v in row]
            path: tuple[str, ...] = ()
            for label in reversed(labels):  # from the most general level down to the leaf
                child = (*path, label)
                if child not in kids:
                    kids[child] = []
                    kids[path].append(child)
                path = child
        root: tuple[str, ...] = ()
        if len(kids[()]) == 1:  # one top value (``*``): it is the root
            root = kids[()][0]
        self._paths: list[tuple[str, ...]] = []
        self._children: list[list[int]] = []
        self._span: list[tuple[int, int]] = []
        self.leaves: list[str] = []
        """Leaf values in code order."""

        def visit(path: tuple[str, ...]) -> int:
            node = len(self._paths)
            self._paths.append(path)
            self._children.append([])
            self._span.append((0, 0))
            first = len(self.leaves)
            if not kids[path]:
                self.leaves.append(path[-1])
            for child in kids[path]:
                self._children[node].append(visit(child))
            self._span[node] = (first, len(self.leaves) - 1)
            return node

        visit(root)
        self._codes = {v: i for i, v in enumerate(self.leaves)}

    def root(self) -> int:
        return 0

    def children(self, node: int) -> list[int]:
        return self._children[node]

    def span(self, node: int) -> tuple[int, int]:
        return self._span[node]

    def width(self, node: int) -> float:
        low, high = self._span[node]
        return 0.0 if low == high else (high - low + 1) / len(self.leaves)

    def label(self, node: int) -> str:
        path = self._paths[node]
        return path[-1] if path else "*"

    def code(self, value: str) -> int | None:
        return self._codes.get(value)

    def node_of(self, span: tuple[float, float]) -> int:
        """The node whose leaves are exactly the codes ``span`` (a box of a hierarchical attribute)."""
        wanted = (int(span[0]), int(span[1]))
        return self._span.index(wanted)
