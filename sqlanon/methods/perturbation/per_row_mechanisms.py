"""The mechanisms that read the values, by name: numeric rewrites (rank swapping, condensation) and
the transition matrices of categorical ones (PRAM, randomized response, invariant PRAM).

:func:`sqlanon.methods.perturbation.draws.per_row` pulls the attributes, looks the mechanism up here
and writes the new values back.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from sqlanon.errors import SpecError
from sqlanon.methods.dp import mechanisms as mech
from sqlanon.methods.perturbation.condensation import condensation
from sqlanon.methods.perturbation.pram import (
    check_matrix,
    invariant_matrix,
    invariant_matrix_theta,
)
from sqlanon.methods.perturbation.swap import rank_swap_column
from sqlanon.registry import Registry

NumericRewrite = Callable[[np.ndarray, dict[str, Any], np.random.Generator], np.ndarray]
NUMERIC_REWRITES: Registry[NumericRewrite] = Registry("numeric per-row mechanism")
"""Mechanism -> the new values of the numeric attributes (one column each, NaN for NULL) computed
from all of them; trait ``keeps_type``: the results are cast back to the columns' types."""


@NUMERIC_REWRITES.register("rank_swap", keeps_type=True)
def _rank_swap(matrix: np.ndarray, p: dict[str, Any], rng: np.random.Generator) -> np.ndarray:
    return np.column_stack([rank_swap_column(matrix[:, j], p["p"], rng) for j in range(matrix.shape[1])])


@NUMERIC_REWRITES.register("condensation", keeps_type=False)
def _condensation(matrix: np.ndarray, p: dict[str, Any], rng: np.random.Generator) -> np.ndarray:
    complete = ~np.isnan(matrix).any(axis=1)
    if complete.sum() < p["k"]:
        raise SpecError(f"needs at least k = {p['k']} rows without NULLs, got "
                        f"{int(complete.sum())}", path="transformation.k")
    new = np.full_like(matrix, np.nan)
    new[complete] = condensation(matrix[complete], p["k"], rng)[0]
    return new


Transitions = Callable[[dict[str, Any], str, dict[Any, int], np.random.Generator],
                       tuple[Sequence[Any], np.ndarray, "dict[str, Any] | None"]]
CATEGORY_TRANSITIONS: Registry[Transitions] = Registry("categorical mechanism")
"""Mechanism -> per attribute, given its values' counts (NULL as None): its categories, the transition
matrix between them, and the attribute's guarantee (or None); trait ``listed_under``: the setting
that lists the categories."""


@CATEGORY_TRANSITIONS.register("pram", listed_under="matrix")
def _pram(p: dict[str, Any], a: str, values: dict[Any, int], rng: np.random.Generator
          ) -> tuple[Sequence[Any], np.ndarray, dict[str, Any] | None]:
    cats, rows = p["matrix"][a]
    return cats, check_matrix(rows, len(cats)), None


@CATEGORY_TRANSITIONS.register("randomized_response", listed_under="categories")
def _randomized_response(p: dict[str, Any], a: str, values: dict[Any, int], rng: np.random.Generator
                         ) -> tuple[Sequence[Any], np.ndarray, dict[str, Any] | None]:
    cats = p["categories"][a]
    k = len(cats)
    keep = mech.rr_keep_probability(p["epsilon"], k) if "epsilon" in p else p["keep_probability"]
    off = (1.0 - keep) / (k - 1)
    matrix = np.full((k, k), off)
    np.fill_diagonal(matrix, keep)
    return cats, matrix, {"epsilon": mech.rr_epsilon(keep, k), "keep_probability": keep}


@CATEGORY_TRANSITIONS.register("invariant_pram", listed_under="categories")
def _invariant_pram(p: dict[str, Any], a: str, values: dict[Any, int], rng: np.random.Generator
                    ) -> tuple[Sequence[Any], np.ndarray, dict[str, Any] | None]:
    cats = sorted({v for v in values if v is not None and v == v}, key=repr)
    counts = np.array([values[c] for c in cats], dtype=np.int64)
    matrix = invariant_matrix_theta(counts, p["theta"]) if "theta" in p else \
        invariant_matrix(counts, rng, pd=p["pd"], alpha=p["alpha"])
    return cats, matrix, None
