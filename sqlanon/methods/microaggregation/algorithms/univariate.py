"""Optimal univariate microaggregation: the partition into groups of ``k..2k-1`` with the least SSE.

Hansen SL, Mukherjee S. A polynomial algorithm for optimal univariate microaggregation. IEEE Transactions on
Knowledge and Data Engineering 2003;15(4):1043-1044.

Hansen and Mukherjee show that some optimal partition groups values that are consecutive once sorted and
that no group needs more than ``2k-1`` values (a larger one splits into two without raising the SSE). On
the sorted values ``x_1 <= ... <= x_n`` the problem is therefore a shortest path from node 0 to node
``n`` in a graph with an arc ``i -> j`` for every ``k <= j - i <= 2k - 1``, weighted by the SSE of
``x_{i+1..j}`` around their mean. Prefix sums of ``x`` and ``x^2`` give each weight in O(1), so the
path costs O(n·k) after the O(n log n) sort.

The values are centred on their mean before the prefix sums are taken, which keeps the cancellation in
``sum(x^2) - sum(x)^2 / m`` small. Among partitions with the same SSE the one found gives the group that
ends at each node the fewest values (the smallest group size wins a tie, scanning from the end).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from sqlanon.errors import SpecError

_WHAT = "optimal univariate microaggregation"


def _validated(values: Sequence[float] | np.ndarray, k: object) -> tuple[np.ndarray, int]:
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 2:
        raise SpecError(f"{_WHAT}: k must be an integer >= 2, got {k!r}")
    try:
        x = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as e:
        raise SpecError(f"{_WHAT}: values must be numbers ({e})") from e
    if x.ndim != 1:
        raise SpecError(f"{_WHAT}: values must be one-dimensional, got shape {x.shape}")
    if not np.isfinite(x).all():
        bad = int(np.flatnonzero(~np.isfinite(x))[0])
        raise SpecError(f"{_WHAT}: values[{bad}] is {float(x[bad])!r}; only finite numbers can be grouped")
    if len(x) < k:
        raise SpecError(f"{_WHAT}: {len(x)} values cannot form a group of k = {k}")
    return x, int(k)


def _group_costs(sorted_values: np.ndarray, k: int) -> np.ndarray:
    """``cost[j, t]``: the SSE of the ``k + t`` sorted values ending before index ``j`` (inf if none)."""
    n = len(sorted_values)
    x = sorted_values - sorted_values.mean()
    c1 = np.concatenate(([0.0], np.cumsum(x)))
    c2 = np.concatenate(([0.0], np.cumsum(x * x)))
    sizes = np.arange(k, 2 * k)
    ends = np.arange(n + 1)[:, None]
    starts = ends - sizes[None, :]
    valid = starts >= 0
    s = np.where(valid, starts, 0)
    total = c1[ends] - c1[s]
    cost = (c2[ends] - c2[s]) - total * total / sizes[None, :]
    cost = np.maximum(cost, 0.0)  # rounding can leave -1e-17 for equal values
    return np.where(valid, cost, np.inf)


def optimal_univariate(values: Sequence[float] | np.ndarray, k: int) -> np.ndarray:
    """Group ids (0, 1, ... in increasing order of value) of a minimum-SSE partition into groups of k..2k-1.

    Args:
        values: the numbers, one per record, in record order.
        k: the minimum group size (>= 2).

    Returns:
        An int64 array with one group id per value, in the input's order.

    Raises:
        SpecError: ``k`` is not an integer >= 2, fewer than ``k`` values are given, or a value is not a
            finite number (the message names its index).

    Example:
        For 1, 2, 3, 4, 20, 21, 22 and k = 3, individual ranking gives 1, 2, 3 | 4, 20, 21, 22
        (SSE 2 + 218.75); the optimum is 1, 2, 3, 4 | 20, 21, 22 (SSE 5 + 2).

        >>> optimal_univariate([22, 1, 20, 3, 4, 2, 21], 3).tolist()
        [1, 0, 1, 0, 0, 0, 1]
    """
    x, k = _validated(values, k)
    n = len(x)
    order = np.argsort(x, kind="stable")
    cost = _group_costs(x[order], k)
    sizes = np.arange(k, 2 * k)
    pad = 2 * k  # best[j] lives at best[pad + j]; the padding stays unreachable
    best = np.full(pad + n + 1, np.inf)
    best[pad] = 0.0
    size_of = np.zeros(n + 1, dtype=np.int64)
    # The ends j in [b, b + k) only need best[] before b: solve a block of k ends at once.
    offsets = np.arange(k)[:, None] - sizes[None, :]
    for b in range(k, n + 1, k):
        m = min(k, n + 1 - b)
        candidates = best[pad + b + offsets[:m]] + cost[b:b + m]
        choice = np.argmin(candidates, axis=1)
        best[pad + b:pad + b + m] = candidates[np.arange(m), choice]
        size_of[b:b + m] = sizes[choice]
    bounds = [n]
    while bounds[-1] > 0:
        bounds.append(bounds[-1] - int(size_of[bounds[-1]]))
    sorted_ids = np.repeat(np.arange(len(bounds) - 1), np.diff(bounds[::-1]))
    groups = np.empty(n, dtype=np.int64)
    groups[order] = sorted_ids
    return groups
