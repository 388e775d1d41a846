"""``generalize_first: {search: optimal}``: the generalization levels, searched, before cells are
suppressed.

Every node of the lattice of the quasi-identifiers' hierarchies (one level per attribute with a
hierarchy) is a candidate: its rows are generalized to those levels and the settings' solver
suppresses cells. The objective is the precision loss of the released table (Sweeney's Prec, as
ARX's precision metric counts it): every cell of a quasi-identifier costs ``level / height`` of its
attribute, and a suppressed cell costs as much as a fully generalized one (1), times
``cell_weight``; the sum is divided by rows × quasi-identifiers, so 0 is the untouched table and 1
the table with every cell generalized to the top or suppressed.

The search visits the nodes in ascending generalization loss G (the objective without suppressed
cells) and prunes by two monotone properties: the objective of a node is at least
``min(1, cell_weight) · G``, so once that reaches the best objective found no later node can beat it;
and a node whose table needs no suppressed cell makes every node above it (coarser at every
attribute, so no frequency falls) need none either, so their objective is their G, at least that
node's. The result is the node of least objective over the lattice (ties: smaller G, then the
levels in order), the same as evaluating every node (tests compare both on small lattices).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

Evaluate = Callable[[dict[str, int]], tuple[dict[str, int], int]]
"""Levels -> (suppressed cells per quasi-identifier, rows)."""


@dataclass
class Node:
    levels: dict[str, int]
    generalization: float
    cells: int = 0
    objective: float = 0.0


@dataclass
class Searched:
    best: Node
    evaluated: list[Node] = field(default_factory=list)
    lattice: int = 0

    @property
    def pruned(self) -> int:
        return self.lattice - len(self.evaluated)


def generalization_loss(levels: Mapping[str, int], heights: Mapping[str, int], qis: Sequence[str]) -> float:
    """Every cell at its attribute's ``level / height`` (attributes without hierarchy at 0)."""
    return sum(levels.get(a, 0) / heights[a] for a in qis if heights.get(a)) / len(qis)


def objective(levels: Mapping[str, int], heights: Mapping[str, int], qis: Sequence[str],
              cells: Mapping[str, int], rows: int, cell_weight: float) -> float:
    total = 0.0
    for a in qis:
        g = levels.get(a, 0) / heights[a] if heights.get(a) else 0.0
        c = cells.get(a, 0)
        total += (rows - c) * g + cell_weight * c
    return total / (rows * len(qis)) if rows else 0.0


def nodes(heights: Mapping[str, int], qis: Sequence[str]) -> list[Node]:
    """The lattice in visiting order: ascending G, then the levels."""
    searched = [a for a in qis if heights.get(a)]
    out = []
    for combo in itertools.product(*[range(heights[a] + 1) for a in searched]):
        levels = dict(zip(searched, combo))
        out.append(Node(levels, generalization_loss(levels, heights, qis)))
    out.sort(key=lambda n: (n.generalization, tuple(n.levels.values())))
    return out


def _evaluate(node: Node, evaluate: Evaluate, heights: Mapping[str, int], qis: Sequence[str],
              cell_weight: float) -> Node:
    cells, rows = evaluate(dict(node.levels))
    node.cells = sum(cells.values())
    node.objective = objective(node.levels, heights, qis, cells, rows, cell_weight)
    return node


def _key(node: Node) -> tuple[float, float, tuple[int, ...]]:
    return (round(node.objective, 12), node.generalization, tuple(node.levels.values()))


def search(heights: Mapping[str, int], qis: Sequence[str], evaluate: Evaluate, cell_weight: float = 1.0
           ) -> Searched:
    lattice = nodes(heights, qis)
    out = Searched(lattice[0], [], len(lattice))
    best: Node | None = None
    safe: list[dict[str, int]] = []
    for node in lattice:
        if best is not None and min(1.0, cell_weight) * node.generalization > best.objective + 1e-12:
            break
        if any(all(node.levels[a] >= z[a] for a in z) for z in safe):
            continue  # needs no cell either, and generalizes more
        out.evaluated.append(_evaluate(node, evaluate, heights, qis, cell_weight))
        if node.cells == 0:
            safe.append(node.levels)
        if best is None or _key(node) < _key(best):
            best = node
    assert best is not None
    out.best = best
    return out


def exhaustive(heights: Mapping[str, int], qis: Sequence[str], evaluate: Evaluate, cell_weight: float = 1.0
               ) -> Searched:
    """Every node evaluated (the reference of the tests)."""
    lattice = [_evaluate(n, evaluate, heights, qis, cell_weight) for n in nodes(heights, qis)]
    return Searched(min(lattice, key=_key), lattice, len(lattice))
