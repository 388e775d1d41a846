"""Plain-Python brute force for the metrics: rows in, numbers out, straight from the definitions.

A table is a list of dicts; a hierarchy is a list of rows ``[leaf, level1, ..., levelH]`` (strings).
"""

from __future__ import annotations

import csv
import math
from collections import Counter
from pathlib import Path

_MAPS: dict[int, tuple[list, dict[str, list[str]]]] = {}


def gen(hier: list[list[str]], value: object, level: int) -> str:
    """``value`` generalized to ``level`` (the last row of a leaf wins)."""
    cached = _MAPS.get(id(hier))
    if cached is None or cached[0] is not hier:  # the list is kept alive, so its id stays its own
        cached = _MAPS[id(hier)] = (hier, {r[0]: r for r in hier})
    return cached[1][str(value)][level]


def classes(rows, qis, hiers, levels) -> list[tuple[str, ...]]:
    """Each row's generalized QI tuple."""
    return [tuple(gen(hiers[q], r[q], levels[q]) for q in qis) for r in rows]


def released(rows, qis, hiers, levels, k, limit) -> tuple[list[tuple[str, ...]], list[bool]]:
    """Class keys and, per row, whether it is released (k-anonymity, whole outlier classes suppressed)."""
    keys = classes(rows, qis, hiers, levels)
    size = Counter(keys)
    outliers = sum(1 for key in keys if size[key] < k)
    anonymous = outliers <= math.floor(limit * len(rows))
    return keys, [not anonymous or size[key] >= k for key in keys]


def arx_entropy(rows, qis, hiers, levels, kept) -> list[float]:
    """ARX's per-attribute non-uniform entropy, G summed in order of first appearance, truncated."""
    n_sup = sum(1 for k in kept if not k)
    out = []
    for q in qis:
        lv = levels[q]
        count = Counter(str(r[q]) for r in rows)
        label_total = Counter(gen(hiers[q], r[q], lv) for r in rows)
        value = 0.0
        for v in dict.fromkeys(str(r[q]) for r in rows):
            value += count[v] * (math.log(count[v] / label_total[gen(hiers[q], v, lv)]) / math.log(2))
        supp = Counter(gen(hiers[q], r[q], lv) for r, k in zip(rows, kept) if not k)
        for c in supp.values():
            value += c * (math.log(c / n_sup) / math.log(2))
        value = -value if value != 0.0 else value
        out.append(math.floor(value * 1e10) / 1e10)
    return out


def kl(rows, qis, hiers, levels, kept, *, per_row: bool) -> float:
    """Σ p log2(p/q) over distinct tuples (or over rows, as ARX iterates) with q spread over leaves."""
    n = len(rows)
    keys = classes(rows, qis, hiers, levels)
    size = Counter(key for key, k in zip(keys, kept) if k)
    n_sup = sum(1 for k in kept if not k)
    domain = math.prod(len(hiers[q]) for q in qis)
    tuples = Counter(tuple(str(r[q]) for q in qis) for r in rows)
    total = 0.0
    seen = set()
    for r, key, k in zip(rows, keys, kept):
        t = tuple(str(r[q]) for q in qis)
        if not per_row and t in seen:
            continue
        seen.add(t)
        p = tuples[t] / n
        if k:
            area = math.prod(sum(1 for h in hiers[q] if h[levels[q]] == key[i]) for i, q in enumerate(qis))
            q_t = size[key] / n / area
        else:
            q_t = n_sup / n / domain
        total += p * math.log2(p / q_t)
    return total


def classification(rows, keys, kept, target, penalty=1.0) -> float:
    labels: dict[tuple, Counter] = {}
    for r, key, k in zip(rows, keys, kept):
        if k:
            labels.setdefault(key, Counter())[r[target]] += 1
    wrong = 0
    for counter in labels.values():
        ranked = counter.most_common()
        unique_top = len(ranked) == 1 or ranked[0][1] > ranked[1][1]
        wrong += sum(counter.values()) - ranked[0][1] if unique_top else sum(counter.values())
    return (wrong + penalty * sum(1 for k in kept if not k)) / len(rows)


def read_adult(adult_dir: Path, qis: list[str]) -> tuple[list[dict[str, str]], dict[str, list[list[str]]]]:
    """Adult's rows (as ARX reads them: text) and its ARX hierarchy files, straight from the CSVs."""
    with open(adult_dir / "adult.csv", encoding="utf-8") as f:
        rows = list(csv.DictReader(f, delimiter=";"))
    hiers = {}
    for q in qis:
        with open(adult_dir / f"adult_hierarchy_{q}.csv", encoding="utf-8") as f:
            hiers[q] = list(csv.reader(f, delimiter=";"))
    return rows, hiers
