"""Plain-Python oracles over the rows: the figures by their definitions, record by record, and the
steps of sdcMicro's own code (R and C++) re-run by hand, without numpy's vectorization."""

from __future__ import annotations

import math
from itertools import combinations
from typing import Any

import numpy as np

Row = tuple[Any, ...]


def _compatible(a: Row, b: Row) -> bool:
    return all(x is None or y is None or x == y for x, y in zip(a, b))


def frequencies_by_row(rows: list[Row], weights: list[float], alpha: float = 1.0
                       ) -> list[tuple[float, float]]:
    """(fk, Fk) of each record: the records it matches, a missing value matching any value."""
    n, q = len(rows), len(rows[0])
    out = []
    for r in rows:
        if all(v is None for v in r):
            out.append((float(n), float(sum(weights))))
            continue
        fk = Fk = 0.0
        for s, w in zip(rows, weights):
            if s == r:
                share = 1.0
            elif q == 1:
                share = alpha if (r[0] is not None and s[0] is None) else 0.0
            elif None not in r:
                # complete record: records of classes with missing values matching it, except all-missing
                share = alpha if (None in s and not all(v is None for v in s) and _compatible(r, s)) else 0.0
            elif None in s:
                share = alpha if _compatible(r, s) else 0.0
            else:
                share = 1.0 if _compatible(r, s) else 0.0
            fk += share
            Fk += share * w
        out.append((fk, Fk))
    return out


def risk_by_row(rows: list[Row], weights: list[float] | None, alpha: float = 1.0) -> list[float]:
    """sdcMicro's ``indivRisk`` (method approx), its R loop over the records re-run."""
    freqs = frequencies_by_row(rows, weights or [1.0] * len(rows), alpha)
    risks = []
    for fk, Fk in freqs:
        if weights is None:
            risks.append(1.0 / fk)
            continue
        if fk == Fk:  # R computes the formulas first (NaN at pk = 1), then overrides them
            risks.append(1 / fk)
            continue
        pk = fk / Fk
        rk = 0.0
        if fk > 2:
            rk = pk / (fk - (1 - pk))
        if fk == 2:
            rk = (pk / (1 - pk)) - ((pk / (1 - pk)) ** 2) * math.log(1 / pk)
        if fk == 1:
            rk = (pk / (1 - pk)) * math.log(1 / pk)
        risks.append(rk)
    return risks


def threshold_by_row(risks: list[float], max_global_risk: float) -> float | None:
    """sdcMicro's ``measure_threshold`` (C++) over the records sorted by decreasing risk, with
    ``measure_risk``'s NA rule."""
    r = sorted(risks, reverse=True)
    er = max_global_risk * len(r)
    sum_risk = sum(r)
    current = r[0]
    sum_freq = 0
    if sum_risk < er:
        threshold = current
    else:
        threshold = 0.0
        for risk in r:
            if risk != current:
                if sum_risk + risk * sum_freq < er:
                    threshold = risk
                    break
                current = risk
            sum_freq += 1
            sum_risk -= risk
    return None if threshold == current else threshold


def msus_by_row(rows: list[Row], max_size: int) -> list[list[tuple[int, ...]]]:
    """Each record's MSUs: every QI subset of at most ``max_size`` QIs, without a missing value of the
    record, on which no other record has its values, and no smaller such subset inside it."""
    q = len(rows[0])
    out = []
    for i, r in enumerate(rows):
        def unique(subset: tuple[int, ...], r: Row = r, i: int = i) -> bool:
            return all(any(s[v] != r[v] for v in subset) for j, s in enumerate(rows) if j != i)

        found: list[tuple[int, ...]] = []
        for size in range(1, max_size + 1):
            for subset in combinations(range(q), size):
                if any(r[v] is None for v in subset) or not unique(subset):
                    continue
                if not any(set(m) < set(subset) for m in found):
                    found.append(subset)
        out.append(found)
    return out


def _hash16(values: list[int]) -> int:
    """CEntry::InitValue: the 16-bit hash of a record's integer codes."""
    h = 0
    for v in values:
        carry = h & 0x8000
        h = (h << 1) & 0xFFFF
        h = (h + v) & 0xFFFF
        if carry:
            h = (h + 1) & 0xFFFF
    return h


def sdcmicro_scores(rows: list[Row], msus: list[list[tuple[int, ...]]], dis_fraction: float,
                    original_scores: bool = True) -> tuple[list[float], list[float], int]:
    """The SUDA and DIS scores of each record as sdcMicro's ``Suda2`` (C++) computes them from the
    records' MSUs (all sizes searched): g_ab, the duplicate pass over the hash buckets (which counts
    as unique only a record alone in its bucket), the single-precision DIS and Q, AdjFactor. Values
    are coded as R codes a factor: 1.. in sorted order, missing as -999. Also returns that count of
    uniques."""
    f32 = np.float32
    q = len(rows[0])
    a = max(q, 3)  # suda2WORK adds constant columns up to three
    levels = [sorted({r[v] for r in rows if r[v] is not None}) for v in range(q)]
    coded = [[(levels[v].index(r[v]) + 1) if r[v] is not None else -999 for v in range(q)] + [1] * (a - q)
             for r in rows]
    g_ab = []
    for i in range(a):
        if original_scores:
            result = 1.0
            for j in range(i + 1, a):
                result *= a - j
            g_ab.append(result)
        else:
            n = a - (i + 1)
            g_ab.append((2.0 ** n - 1) * math.factorial(i + 1) * math.factorial(n) / math.factorial(a))
    buckets: dict[int, list[int]] = {}
    for i, c in enumerate(coded):
        buckets.setdefault(_hash16(c), []).append(i)
    nb_unique = sum(1 for b in buckets.values() if len(b) == 1)
    groups: dict[tuple[int, ...], int] = {}
    for c in coded:
        groups[tuple(c)] = groups.get(tuple(c), 0) + 1
    nb_pair = 2 * sum(1 for g in groups.values() if g == 2)
    f = f32(dis_fraction)
    dis = f32(f32(nb_unique) * f) / (f32(f32(nb_unique) * f) + f32(f32(nb_pair) * (f32(1.0) - f)))
    scores = [sum(g_ab[len(m) - 1] for m in found) for found in msus]
    qexp = float(f32(1.0) + (f32(8.0) - f32(a)) / f32(20.0))
    adj = sum(1.0 / s ** qexp for s in scores if s)
    spread = float(f32(f32(f32(nb_unique) / dis) - f32(nb_unique)))
    dis_scores = [1.0 / (1.0 + spread / (s ** qexp * adj)) if s else 0.0 for s in scores]
    return scores, dis_scores, nb_unique
