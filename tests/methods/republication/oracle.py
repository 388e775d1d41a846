"""Plain-Python definitions the tests check releases against: m-uniqueness, m-invariance (Xiao and Tao
2007, Definitions 2 and 3) and the intersection attack, by brute force over every person."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Hashable, Iterable, Mapping

Release = Mapping[Hashable, tuple[Hashable, str]]
"""person -> (class, sensitive value); counterfeits are listed apart as (class, value)."""


def class_values(release: Release, counterfeits: Iterable[tuple[Hashable, str]] = ()
                 ) -> dict[Hashable, list[str]]:
    values: dict[Hashable, list[str]] = defaultdict(list)
    for group, value in release.values():
        values[group].append(value)
    for group, value in counterfeits:
        values[group].append(value)
    return values


def m_unique(release: Release, counterfeits: Iterable[tuple[Hashable, str]], m: int) -> bool:
    """Every class holds at least m rows, all with different sensitive values."""
    return all(len(v) >= m and len(set(v)) == len(v) for v in class_values(release, counterfeits).values())


def signatures(release: Release, counterfeits: Iterable[tuple[Hashable, str]] = ()
               ) -> dict[Hashable, frozenset[str]]:
    values = class_values(release, counterfeits)
    return {p: frozenset(values[g]) for p, (g, _) in release.items()}


def candidates(releases: list[tuple[Release, list[tuple[Hashable, str]]]]) -> dict[Hashable, set[str]]:
    """The intersection attack: for a person present in several releases, the values every one of
    its classes shows (a value absent from one class cannot be the person's)."""
    out: dict[Hashable, set[str]] = {}
    for release, fakes in releases:
        for person, sig in signatures(release, fakes).items():
            out[person] = set(sig) if person not in out else out[person] & sig
    return out
