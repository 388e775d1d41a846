"""The m-invariance algorithm (Xiao and Tao, SIGMOD 2007, Section 5) on one release's rows.

Input: each row's person key, sensitive value (as text) and quasi-identifiers (numbers, scaled to
[0, 1]), and the signature every person had in earlier releases. Four phases:

1. **division**: persons with a signature go to the bucket of their signature; new persons wait;
2. **balancing**: a bucket's values must be equally frequent (each group takes one row of each);
   a value short of the bucket's most frequent one takes new persons holding it, then counterfeits;
3. **assignment**: the remaining new persons form buckets of ``m`` distinct values, one row of each
   of the ``m`` most frequent values left at a time (Anatomy's rule, which keeps the rest
   m-eligible); a row of the last values left, once fewer than ``m`` values remain, joins a group of
   new persons that lacks its value (as Anatomy's residue does; the group's signature then has
   ``m + 1`` values), or, with no such group left, gets a bucket of its value and the ``m - 1``
   values most frequent in the release (then values of earlier releases), filled by counterfeits
   (every row is published);
4. **split**: a bucket holding ``b`` rows of each value is halved, each value's rows sorted on the
   quasi-identifier of widest range, until every group holds one row of each value, so groups are
   as tight as the buckets allow.

A group's signature is then exactly its bucket's, so every person keeps the signature it had: the
sequence of releases is m-invariant. Counterfeits carry a sensitive value only; the release shows
their number per group.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

Signature = tuple[str, ...]
"""Sorted distinct sensitive values."""
COUNTERFEIT = -1
"""A group member that is a counterfeit (no row)."""


class ChangedValue(ValueError):
    """A person's sensitive value is not in the signature of its earlier releases."""

    def __init__(self, persons: int) -> None:
        self.persons = persons
        super().__init__(f"{persons} persons hold a sensitive value outside their signature")


@dataclass
class Group:
    signature: Signature
    members: list[int]
    """Row numbers, one per value of the signature (in its order), :data:`COUNTERFEIT` for a
    counterfeit of that value."""

    @property
    def counterfeits(self) -> int:
        return sum(1 for r in self.members if r == COUNTERFEIT)


@dataclass
class Partition:
    groups: list[Group]
    signatures: dict[Hashable, Signature]
    """The signature of every person of the release (new persons' included)."""
    kept: int = 0
    new: int = 0
    counterfeits: int = field(default=0)


def m_invariant(keys: Sequence[Hashable], values: Sequence[str], qi: np.ndarray, m: int,
                earlier: Mapping[Hashable, Signature]) -> Partition:
    """Group one release's rows so that earlier persons keep their signatures.

    Raises:
        ChangedValue: a person's value is not in its earlier signature (m-invariance assumes a
            person's sensitive value does not change).
    """
    buckets: dict[Signature, dict[str, list[int]]] = defaultdict(lambda: defaultdict(list))
    waiting: dict[str, list[int]] = defaultdict(list)
    changed = 0
    for row, (key, value) in enumerate(zip(keys, values)):
        signature = earlier.get(key)
        if signature is None:
            waiting[value].append(row)
        elif value in signature:
            buckets[signature][value].append(row)
        else:
            changed += 1
    if changed:
        raise ChangedValue(changed)
    kept = len(keys) - sum(len(rows) for rows in waiting.values())
    counterfeits: dict[Signature, Counter[str]] = defaultdict(Counter)
    _balance(buckets, waiting, counterfeits)
    known = Counter(values)
    for signature in earlier.values():  # values of earlier releases may stand in as counterfeits
        known.update(dict.fromkeys(signature, 0))
    _assign(buckets, waiting, counterfeits, m, known)
    groups: list[Group] = []
    signatures: dict[Hashable, Signature] = {}
    for signature in sorted(buckets):
        rows = buckets[signature]
        for value in signature:
            for row in rows[value]:
                signatures[keys[row]] = signature
        lists = [sorted(rows[v], key=lambda r: tuple(qi[r])) + [COUNTERFEIT] * counterfeits[signature][v]
                 for v in signature]
        groups += [Group(signature, members) for members in _split(lists, qi)]
    return Partition(groups, signatures, kept=kept, new=len(keys) - kept,
                     counterfeits=sum(g.counterfeits for g in groups))


def _balance(buckets: dict[Signature, dict[str, list[int]]], waiting: dict[str, list[int]],
             counterfeits: dict[Signature, Counter[str]]) -> None:
    for signature, rows in buckets.items():
        most = max(len(rows[v]) for v in signature)
        for value in signature:
            short = most - len(rows[value])
            taken = waiting[value][:short]
            del waiting[value][:short]
            rows[value] += taken
            counterfeits[signature][value] += short - len(taken)


def _assign(buckets: dict[Signature, dict[str, list[int]]], waiting: dict[str, list[int]],
            counterfeits: dict[Signature, Counter[str]], m: int, frequency: Counter[str]) -> None:
    earlier = set(buckets)  # buckets holding persons of earlier releases: their groups stay as they are
    while True:
        left = sorted((v for v in waiting if waiting[v]), key=lambda v: (-len(waiting[v]), v))
        if len(left) < m:
            break
        # take as many rows at once as keeps the m largest ahead of the rest
        chosen = left[:m]
        after = len(waiting[left[m]]) if len(left) > m else 0
        take = max(1, len(waiting[chosen[-1]]) - after)
        signature = tuple(sorted(chosen))
        for value in chosen:
            buckets[signature][value] += waiting[value][:take]
            del waiting[value][:take]
    for value in sorted(v for v in waiting if waiting[v]):
        while waiting[value] and _widen(buckets, earlier, value, waiting[value][-1]):
            waiting[value].pop()
    by_frequency = sorted(frequency, key=lambda v: (-frequency[v], v))
    for value in [v for v in waiting if waiting[v]]:
        others = [v for v in by_frequency if v != value][:m - 1]
        if len(others) < m - 1:
            raise NotEnoughValues(len(frequency), m)
        signature = tuple(sorted([value, *others]))
        rows = buckets[signature]
        rows[value] += waiting[value]
        waiting[value] = []
        most = max(len(rows[v]) for v in signature)
        for v in signature:
            counterfeits[signature][v] = most - len(rows[v])


def _widen(buckets: dict[Signature, dict[str, list[int]]], earlier: set[Signature], value: str,
           row: int) -> bool:
    """Place a residual row of ``value`` with one group of new persons lacking the value (the group's
    signature gains it, as Anatomy's residue does); False when there is none."""
    fitting = [s for s in buckets if s not in earlier and value not in s and buckets[s][s[0]]]
    if not fitting:
        return False
    source = max(fitting, key=lambda s: (len(buckets[s][s[0]]), s))
    wider = tuple(sorted((*source, value)))
    for v in source:
        buckets[wider][v].append(buckets[source][v].pop())
    buckets[wider][value].append(row)
    if not buckets[source][source[0]]:
        del buckets[source]
    return True


class NotEnoughValues(ValueError):
    """The release holds fewer than m distinct sensitive values."""

    def __init__(self, values: int, m: int) -> None:
        self.values, self.m = values, m
        super().__init__(f"{values} distinct sensitive values, fewer than m = {m}")


def _split(lists: list[list[int]], qi: np.ndarray) -> list[list[int]]:
    """Halve a balanced bucket (each list one value's rows, counterfeits last) on the quasi-identifier
    of widest range until each part holds one row per value; the parts' members, value by value."""
    size = len(lists[0])
    if size == 1:
        return [[rows[0] for rows in lists]]
    real = [r for rows in lists for r in rows if r != COUNTERFEIT]
    column = int(np.argmax(np.ptp(qi[real], axis=0))) if real and qi.shape[1] else 0
    half = size // 2
    left: list[list[int]] = []
    right: list[list[int]] = []
    for rows in lists:
        ordered = sorted((r for r in rows if r != COUNTERFEIT), key=lambda r: (qi[r, column], r)) \
            if qi.shape[1] else [r for r in rows if r != COUNTERFEIT]
        ordered += [COUNTERFEIT] * (len(rows) - len(ordered))
        left.append(ordered[:half])
        right.append(ordered[half:])
    return _split(left, qi) + _split(right, qi)
