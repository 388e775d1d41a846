"""What every Anatomy output must satisfy, checked by brute force against the source."""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any


def check_release(source: list[tuple[Any, ...]], qit: list[tuple[Any, ...]], st: list[tuple[Any, ...]],
                  l: int) -> dict[int, list[Any]]:  # noqa: E741
    """``source`` rows (id, ..., sensitive), ``qit`` rows (id, ..., group), ``st`` rows (group, value,
    count): every source row once in the QIT with its other columns unchanged, every group's rows
    holding l or more distinct sensitive values, each once, and the ST their exact counts. Returns
    each group's values."""
    by_id = {r[0]: r for r in source}
    assert len(by_id) == len(source) == len(qit)
    values: dict[int, list[Any]] = defaultdict(list)
    for r in qit:
        original = by_id[r[0]]
        assert r[:-1] == original[:-1]
        values[r[-1]].append(original[-1])
    for group, vs in values.items():
        assert len(vs) == len(set(vs)) >= l, (group, vs)
    assert Counter((g, v) for g, vs in values.items() for v in vs) == \
        Counter({(g, v): c for g, v, c in st})
    assert sorted(values) == list(range(1, len(values) + 1))
    return values
