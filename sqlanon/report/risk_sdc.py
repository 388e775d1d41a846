"""sdcMicro's measures in the risk report, when asked: individual and global risk (one more ``GROUP
BY``, whose classes come to Python) and SUDA2, of the original table and of the release's rows
(docs/risk.md)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlanon.domain.risk.individual import IndividualRisk, individual_risk
from sqlanon.domain.risk.suda2 import Suda2Result, suda2

if TYPE_CHECKING:
    from sqlanon.domain.risk.classes import Relation
    from sqlanon.engines.base import Engine


@dataclass(frozen=True)
class SdcSettings:
    """What to compute: the sampling-weight column (none: the table is the population) and SUDA2's
    largest MSU size (None: no SUDA2; 0: every size)."""

    weight: str | None = None
    suda2_max_size: int | None = None
    dis_fraction: float | None = None
    """SUDA2's sampling fraction (default: the population model's n/N, else sdcMicro's 0.01)."""


@dataclass(frozen=True)
class SdcMeasures:
    individual: IndividualRisk
    suda2: Suda2Result | None = None

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"individual_risk": self.individual.as_dict()}
        if self.suda2 is not None:
            out["suda2"] = self.suda2.as_dict()
        return out

    def lines(self) -> list[str]:
        r = self.individual
        weighted = f"weights {r.weight}" if r.weight else "no weights: the table is the population"
        threshold = "none" if r.threshold is None else f"{r.threshold:.6g}"
        out = [f"sdcMicro individual risk ({weighted}): expected re-identifications "
               f"{r.expected_reidentifications:.2f} ({r.global_risk_pct:.4g} % of {r.records} records), "
               f"highest {r.highest_risk:.4g}, {r.higher_risk_records} records above median + 3 MAD, "
               f"risk threshold for a global risk of {100 * r.max_global_risk:g} %: {threshold}"]
        s = self.suda2
        if s is not None:
            sizes = ", ".join(f"{k}: {v}" for k, v in sorted(s.msus_by_size.items()))
            top = sorted(s.attribute_contributions.items(), key=lambda kv: -kv[1])[:3]
            out.append(f"SUDA2 (MSUs of up to {s.max_size} quasi-identifiers): {s.records_with_msu} records "
                       f"with an MSU, MSUs by size {{{sizes}}}, highest DIS score {s.highest_dis_score:.4g}; "
                       "largest contributions " + ", ".join(f"{a} {c:.1f} %" for a, c in top))
        return out


def measure(engine: Engine, relation: Relation, qis: list[str], settings: SdcSettings) -> SdcMeasures:
    """sdcMicro's measures of one relation over its quasi-identifiers."""
    individual = individual_risk(engine, relation, qis, settings.weight)
    found = None
    if settings.suda2_max_size is not None:
        found = suda2(engine, relation, qis, max_size=settings.suda2_max_size or None,
                      dis_fraction=settings.dis_fraction or 0.01)
    return SdcMeasures(individual, found)
