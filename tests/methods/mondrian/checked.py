"""Brute-force checks of a Mondrian output: plain Python over the released and the original rows."""

from __future__ import annotations

from collections import Counter, defaultdict


def contains(label, value) -> bool:
    """Whether a released box (``[lo-hi]``, ``{a,b}`` or a single value) holds the original value."""
    text = str(label)
    if text.startswith("[") and text.endswith("]"):
        low, high = _bounds(text[1:-1])
        return low <= float(value) <= high
    if text.startswith("{") and text.endswith("}"):
        return str(value) in text[1:-1].split(",")
    return text == str(value)


def _bounds(inner: str) -> tuple[float, float]:
    # "-3--1" or "2-7": split at the dash that follows a digit
    for i in range(1, len(inner)):
        if inner[i] == "-" and inner[i - 1].isdigit():
            return float(inner[:i]), float(inner[i + 1:])
    raise ValueError(inner)


def classes(released: list[dict], qis: list[str]) -> dict[tuple, list[dict]]:
    out: dict[tuple, list[dict]] = defaultdict(list)
    for r in released:
        out[tuple(str(r[q]) for q in qis)].append(r)
    return out


def equal_emd(values: list, whole: list) -> float:
    n, m = len(whole), len(values)
    q, p = Counter(whole), Counter(values)
    return 0.5 * sum(abs(p[v] / m - q[v] / n) for v in q)
