"""sdcMicro's individual and global risk (``measure_risk``; Benedetti–Franconi, with sampling weights).

An intruder knows a record's quasi-identifier values and that the record is in the sample, and
matches it to one of the population units sharing those values. With sampling weights the population
size of a class, Fk, is estimated by the sum of its records' weights; given the sample frequency fk,
the risk of a record of the class is the expected value of 1/F over the posterior of the population
frequency F (a negative binomial, Skinner's super-population model), which sdcMicro evaluates with
Franconi & Polettini's approximation (``indivRisk``, method ``approx``), pk = fk/Fk:

- fk = 1: pk/(1−pk) · log(1/pk);
- fk = 2: pk/(1−pk) − (pk/(1−pk))² · log(1/pk);
- fk > 2: pk / (fk − (1 − pk));
- fk = Fk (the class is its own population): 1/fk.

Without weights the sample is the population and the risk is 1/fk. The global risk is the expected
number of re-identifications, Σ risk over the records, also given as a share of the records (and in
percent). The threshold is the individual risk above which records must be protected for the global
risk to stay under ``max_global_risk`` (µ-Argus 4.1 manual, §2.3.4.1, as sdcMicro's
``measure_threshold``); None when no such threshold separates the records (sdcMicro's NA).

Franconi & Polettini, Individual risk estimation in µ-Argus: a review, PSD 2004, LNCS 3050;
Templ, Kowarik & Meindl, Statistical Disclosure Control for Micro-Data Using the R Package sdcMicro,
JSS 67(4), 2015.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from sqlanon.domain.risk.classes import Relation, class_table, write_per_record
from sqlanon.domain.risk.frequencies import frequencies
from sqlanon.errors import SpecError

if TYPE_CHECKING:
    from sqlanon.engines.base import Engine

PER_RECORD = ("individual_risk", "sample_frequency", "population_frequency")
"""The columns the per-record table adds to the relation's: risk, fk and Fk."""


def class_risk(fk: np.ndarray, Fk: np.ndarray, weighted: bool) -> np.ndarray:
    """The individual risk of each class's records (sdcMicro's ``indivRisk``, method approx)."""
    fk, Fk = np.asarray(fk, dtype=np.float64), np.asarray(Fk, dtype=np.float64)
    if not weighted:
        return 1.0 / fk
    rk = np.zeros_like(fk)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        pk = fk / Fk
        odds = pk / (1.0 - pk)
        rk = np.where(fk > 2, pk / (fk - (1.0 - pk)), rk)
        rk = np.where(fk == 2, odds - odds ** 2 * np.log(1.0 / pk), rk)
        rk = np.where(fk == 1, odds * np.log(1.0 / pk), rk)
        rk = np.where(fk == Fk, 1.0 / fk, rk)
    return rk


_CHUNK = 1 << 22  # records expanded at once by the threshold's sums


def _records(values: np.ndarray, counts: np.ndarray) -> Iterator[np.ndarray]:
    """``values`` each repeated ``counts`` times, in order, in chunks of at most ``_CHUNK``."""
    ends = np.cumsum(counts)
    first = 0
    while len(ends) and first < ends[-1]:
        last = min(first + _CHUNK, int(ends[-1]))
        lo, hi = np.searchsorted(ends, first, side="right"), np.searchsorted(ends, last - 1, side="right")
        reps = counts[lo:hi + 1].copy()
        reps[0] = min(int(ends[lo]), last) - first
        if hi > lo:
            reps[-1] = last - int(ends[hi - 1])
        yield np.repeat(values[lo:hi + 1], reps)
        first = last


def global_threshold(risk: np.ndarray, records: np.ndarray, max_global_risk: float) -> float | None:
    """The risk threshold keeping the global risk under ``max_global_risk`` (sdcMicro's
    ``measure_threshold`` over the records sorted by decreasing risk; None for its NA).

    Its running sums are taken record by record, in its order, as the C++ takes them (a cumulative
    sum is sequential): where the test ``sum < ER`` is an exact tie, the same rounding decides."""
    order = np.argsort(-risk, kind="stable")
    values, counts = risk[order], records[order].astype(np.int64)
    n = int(counts.sum())
    if not n:
        return None
    er = max_global_risk * n
    total = 0.0
    for chunk in _records(values, counts):
        total = float(np.cumsum(np.concatenate(([total], chunk)))[-1])
    previous = float(values[0])
    if total < er:
        return None  # the threshold is the highest risk itself: sdcMicro reports NA
    remaining, done = total, 0
    for chunk in _records(values, counts):
        before = np.cumsum(np.concatenate(([remaining], -chunk)))  # before[k]: ahead of record k
        changed = np.flatnonzero(chunk != np.concatenate(([previous], chunk[:-1])))
        below = np.flatnonzero(before[changed] + chunk[changed] * (done + changed) < er)
        if len(below):
            return float(chunk[changed[below[0]]])
        remaining, done, previous = float(before[-1]), done + len(chunk), float(chunk[-1])
    return None if previous == 0.0 else 0.0


def weighted_median(values: np.ndarray, counts: np.ndarray) -> float:
    """R's ``median`` of ``values`` repeated ``counts`` times (mean of the two middle ones)."""
    order = np.argsort(values, kind="stable")
    v, c = values[order], np.cumsum(counts[order])
    n = int(c[-1])
    lo, hi = v[np.searchsorted(c, (n - 1) // 2, side="right")], v[np.searchsorted(c, n // 2, side="right")]
    return float((lo + hi) / 2)


@dataclass(frozen=True)
class IndividualRisk:
    """sdcMicro's individual and global risk of a relation over its quasi-identifiers."""

    qis: tuple[str, ...]
    weight: str | None
    records: int
    classes: int
    expected_reidentifications: float
    """Σ of the records' individual risks (sdcMicro's ``global_risk_ER``)."""
    global_risk: float
    """The expected re-identifications as a share of the records."""
    max_global_risk: float
    threshold: float | None
    higher_risk_records: int
    """Records whose risk exceeds median + 3·MAD and 0.1 (the count sdcMicro prints)."""
    highest_risk: float
    table: str | None = None
    fk: np.ndarray = field(default_factory=lambda: np.zeros(0), repr=False, compare=False)
    Fk: np.ndarray = field(default_factory=lambda: np.zeros(0), repr=False, compare=False)
    risk: np.ndarray = field(default_factory=lambda: np.zeros(0), repr=False, compare=False)
    """Per class (in the order of the class table): fk, Fk and the risk of each of its records."""
    count: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64), repr=False,
                              compare=False)

    @property
    def global_risk_pct(self) -> float:
        return 100.0 * self.global_risk

    def as_dict(self) -> dict[str, Any]:
        return {"measure": "individual_risk", "qis": list(self.qis), "weight": self.weight,
                "records": self.records, "classes": self.classes,
                "expected_reidentifications": self.expected_reidentifications,
                "global_risk": self.global_risk, "global_risk_pct": self.global_risk_pct,
                "max_global_risk": self.max_global_risk, "threshold": self.threshold,
                "higher_risk_records": self.higher_risk_records, "highest_risk": self.highest_risk,
                "table": self.table}


def individual_risk(engine: Engine, relation: Relation, qis: list[str] | tuple[str, ...],
                    weight: str | None = None, *, alpha: float = 1.0, max_global_risk: float = 0.01,
                    output: str | None = None) -> IndividualRisk:
    """Individual and global risk of ``relation`` over ``qis`` (sdcMicro's ``measure_risk``).

    ``weight`` names the sampling-weight column (none: the relation is the population); ``alpha`` is
    the weight of a missing value's wildcard match (sdcMicro's ``alpha``); ``output`` names a table
    to create holding every record with its risk, fk and Fk (:data:`PER_RECORD`)."""
    if not 0.0 < max_global_risk < 1.0:
        raise SpecError(f"max_global_risk must be between 0 and 1, got {max_global_risk!r}",
                        path="risk.max_global_risk")
    if not 0.0 <= alpha <= 1.0:
        raise SpecError(f"alpha must be between 0 and 1, got {alpha!r}", path="risk.alpha")
    classes = class_table(engine, relation, qis, weight)
    fk, Fk = frequencies(classes.codes, classes.count, classes.weight, alpha)
    risk = class_risk(fk, Fk, weighted=weight is not None)
    n = classes.records
    counts = classes.count
    finite = ~np.isnan(risk)
    er = float((risk[finite] * counts[finite]).sum())
    higher = 0
    if n:
        med = weighted_median(risk, counts)
        mad = 1.4826 * weighted_median(np.abs(risk - med), counts)
        higher = int(counts[(risk > med + 3 * mad) & (risk > 0.1)].sum())
    if output is not None:
        write_per_record(engine, classes, dict(zip(PER_RECORD, (risk, fk, Fk))), output)
    return IndividualRisk(
        qis=tuple(qis), weight=weight, records=n, classes=len(classes), expected_reidentifications=er,
        global_risk=er / n if n else 0.0, max_global_risk=max_global_risk,
        threshold=global_threshold(risk, counts, max_global_risk) if n else None,
        higher_risk_records=higher, highest_risk=float(np.nanmax(risk)) if n else 0.0, table=output,
        fk=fk, Fk=Fk, risk=risk, count=counts)
