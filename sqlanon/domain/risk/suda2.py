"""SUDA2 special uniques (Elliot et al.; Manning, Haglin & Keane), scored as sdcMicro's ``suda2``.

A record unique on all quasi-identifiers is *special* when a few of its values already single it
out: each of its minimal sample uniques (MSUs, :mod:`sqlanon.domain.risk.msu`) of size k adds
Π_{j=k}^{m} (A − j) to its SUDA score, A the number of QIs and m = min(max_size, A − 1) (Elliot et
al.'s score; with every size searched, (A − k)!, as sdcMicro with ``original_scores = TRUE``); small
MSUs weigh most. ``original_scores=False`` gives the IHSN weights sdcMicro also offers,
(2^(A−k) − 1) · k! (A−k)! / A!. As in sdcMicro, fewer than three QIs are scored as if constant QIs
were added up to three (A = 3), and records that are not unique score 0.

The DIS score (Skinner & Elliot's data intrusion simulation) turns SUDA scores into the probability
that a unique match is correct: with U sample uniques, P records in classes of exactly two, the
sampling fraction f (``dis_fraction``, default 0.01) and Q = 1 + (8 − A)/20,

    DIS = U·f / (U·f + P·(1 − f)),   dis_r = 1 / (1 + (U/DIS − U) / (score_r^Q · Σ_s score_s^Q⁻¹))

over the records with a positive score (0 for the others). DIS and Q are computed in single
precision, as sdcMicro's C++ does. One difference: sdcMicro counts as U only the uniques alone in
their 16-bit hash bucket (uniques sharing a bucket with another record are left out); the true
count is used here. U cancels out of U/DIS − U = P·(1 − f)/f, so the scores differ only by rounding.

Elliot, Manning, Mayes, Gurd & Bane, SUDA: a program for detecting special uniques, 2005;
Manning, Haglin & Keane, A recursive search algorithm for statistical disclosure assessment,
Data Min Knowl Disc 16, 2008; Skinner & Elliot, A measure of disclosure risk for microdata, JRSS B
64(4), 2002.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from math import factorial, prod
from typing import TYPE_CHECKING, Any

import numpy as np

from sqlanon.domain.risk.classes import Relation, class_table, write_per_record
from sqlanon.domain.risk.msu import find_msus
from sqlanon.errors import SpecError

if TYPE_CHECKING:
    from sqlanon.engines.base import Engine

PER_RECORD = ("suda_score", "dis_suda_score")
"""The columns the per-record table adds to the relation's."""

DIS_INTERVALS = ("== 0", "(0.0, 0.1]", "(0.1, 0.2]", "(0.2, 0.3]", "(0.3, 0.4]", "(0.4, 0.5]",
                 "(0.5, 0.6]", "(0.6, 0.7]", "> 0.7")
"""The DIS score intervals sdcMicro's ``print.suda2`` counts records in."""


def msu_weights(attributes: int, max_size: int, original_scores: bool = True) -> np.ndarray:
    """The score of one MSU of each size 0..max_size (index = size; size 0 unused)."""
    a = max(attributes, 3)
    top = min(max_size, a - 1)
    if original_scores:
        w = [float(prod(a - j for j in range(k, top + 1))) for k in range(max_size + 1)]
    else:
        w = [float((2 ** (a - k) - 1) * factorial(k) * factorial(a - k) / factorial(a))
             for k in range(max_size + 1)]
    w[0] = 0.0
    return np.asarray(w)


def dis_scores(score: np.ndarray, count: np.ndarray, attributes: int, dis_fraction: float
               ) -> np.ndarray:
    """The DIS score of each class's records from their SUDA scores (sdcMicro's single precision)."""
    f32 = np.float32
    uniques, pairs = f32(int((count == 1).sum())), f32(2 * int((count == 2).sum()))
    f = f32(dis_fraction)
    with np.errstate(invalid="ignore"):  # no uniques: 0/0, and then no record is scored
        dis = f32(uniques * f) / f32(f32(uniques * f) + f32(pairs * f32(f32(1.0) - f)))
    q = float(f32(f32(1.0) + f32(f32(8.0) - f32(max(attributes, 3))) / f32(20.0)))
    scored = score > 0
    out = np.zeros_like(score)
    if not scored.any():
        return out
    adjust = float(np.sum(1.0 / np.power(score[scored], q)))
    spread = float(f32(f32(uniques / dis) - uniques))
    out[scored] = 1.0 / (1.0 + spread / (np.power(score[scored], q) * adjust))
    return out


def dis_table(dis: np.ndarray, count: np.ndarray) -> dict[str, int]:
    """Records per DIS interval (sdcMicro's ``print.suda2``: right-closed bins shifted by eps)."""
    breaks = np.concatenate(([-1.0], np.arange(8) * 0.1 + np.finfo(float).eps, [np.inf]))
    bins = np.searchsorted(breaks, dis, side="left") - 1
    per_bin = np.bincount(bins, weights=count, minlength=len(DIS_INTERVALS))
    return {label: int(c) for label, c in zip(DIS_INTERVALS, per_bin)}


@dataclass(frozen=True)
class Suda2Result:
    """SUDA2 over a relation's quasi-identifiers: MSUs, SUDA and DIS scores."""

    qis: tuple[str, ...]
    max_size: int
    dis_fraction: float
    original_scores: bool
    records: int
    sample_uniques: int
    """Records unique on all QIs."""
    records_with_msu: int
    """Records with at least one MSU of size ≤ max_size (the special-unique candidates)."""
    msus_by_size: dict[int, int]
    attribute_contributions: dict[str, float]
    """Per QI, the percentage of the total SUDA score from MSUs containing it (sdcMicro's
    ``attribute_contributions``; MSUs of several QIs count for each)."""
    dis_intervals: dict[str, int]
    highest_score: float
    highest_dis_score: float
    table: str | None = None
    score: np.ndarray = field(default_factory=lambda: np.zeros(0), repr=False, compare=False)
    dis: np.ndarray = field(default_factory=lambda: np.zeros(0), repr=False, compare=False)
    """Per distinct QI combination (the class table's order): the SUDA and DIS score of its records."""
    count: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64), repr=False,
                              compare=False)

    def as_dict(self) -> dict[str, Any]:
        return {"measure": "suda2", "qis": list(self.qis), "max_size": self.max_size,
                "dis_fraction": self.dis_fraction, "original_scores": self.original_scores,
                "records": self.records, "sample_uniques": self.sample_uniques,
                "records_with_msu": self.records_with_msu,
                "msus_by_size": {str(k): v for k, v in self.msus_by_size.items()},
                "attribute_contributions": self.attribute_contributions,
                "dis_intervals": self.dis_intervals, "highest_score": self.highest_score,
                "highest_dis_score": self.highest_dis_score, "table": self.table}


def suda2(engine: Engine, relation: Relation, qis: list[str] | tuple[str, ...], *,
          max_size: int | None = None, dis_fraction: float = 0.01, original_scores: bool = True,
          output: str | None = None) -> Suda2Result:
    """SUDA2 of ``relation`` over ``qis``: MSUs up to ``max_size`` QIs (default: all, as sdcMicro),
    SUDA and DIS scores (``dis_fraction``: the sampling fraction). ``output`` names a table to create
    holding every record with its scores (:data:`PER_RECORD`). NULL is the missing value."""
    q = len(qis)
    size = q if max_size is None else max_size
    if isinstance(size, bool) or not isinstance(size, int) or not 1 <= size <= max(q, 1):
        raise SpecError(f"max_size must be a whole number from 1 to the number of quasi-identifiers "
                        f"({q}), got {max_size!r}", path="suda2.max_size")
    if not 0.0 < dis_fraction < 1.0:
        raise SpecError(f"dis_fraction must be between 0 and 1 (the sampling fraction), got "
                        f"{dis_fraction!r}", path="suda2.dis_fraction")
    classes = class_table(engine, relation, qis, what="suda2")
    msus = find_msus(classes.codes, classes.count, size)
    weights = msu_weights(q, size, original_scores)
    has_msu = np.zeros(len(classes.count), dtype=bool)
    for rows in msus.subsets.values():
        has_msu[rows] = True
    scored = np.flatnonzero(has_msu)
    counted = msus.by_size[scored]  # the others' counts are all 0, and so their scores
    score = np.zeros(len(classes.count))
    score[scored] = (counted * weights).sum(axis=1)
    dis = dis_scores(score, classes.count, q, dis_fraction)
    contribution = np.zeros(q)
    for subset, rows in msus.subsets.items():
        contribution[list(subset)] += weights[len(subset)] * len(rows)
    total = float(score.sum())
    if output is not None:
        write_per_record(engine, classes, dict(zip(PER_RECORD, (score, dis))), output,
                         what="suda2")
    return Suda2Result(
        qis=tuple(qis), max_size=size, dis_fraction=dis_fraction, original_scores=original_scores,
        records=classes.records, sample_uniques=int((classes.count == 1).sum()),
        records_with_msu=len(scored),
        msus_by_size={k: int(c) for k, c in enumerate(counted.sum(axis=0)) if k},
        attribute_contributions={name: (100.0 * float(c) / total if total else 0.0)
                                 for name, c in zip(qis, contribution)},
        dis_intervals=dis_table(dis, classes.count),
        highest_score=float(score.max()) if len(score) else 0.0,
        highest_dis_score=float(dis.max()) if len(dis) else 0.0, table=output,
        score=score, dis=dis, count=classes.count)
