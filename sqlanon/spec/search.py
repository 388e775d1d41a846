"""The search strategies ``transformation.search`` may name.

The strategies live with the lattice search (:mod:`sqlanon.methods.generalization.search`), which
registers each one here; the spec checks a name without importing the search, which is loaded on
the first lookup.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlanon.errors import SpecError, did_you_mean
from sqlanon.registry import Registry


def _unknown_strategy(kind: str, name: str, known: Sequence[str]) -> SpecError:
    return SpecError(f"unknown {kind} {name!r}; known: {', '.join(known)}." + did_you_mean(name, known),
                     path="strategy")


SEARCH_STRATEGIES: Registry[Any] = Registry(
    "search strategy", sort=False, unknown=_unknown_strategy,
    modules=("sqlanon.methods.generalization.search.strategies",
             "sqlanon.methods.generalization.search.heuristic"))
"""Strategy name -> ``(lattice, node evaluator) -> SearchResult``, listed in registration order."""
