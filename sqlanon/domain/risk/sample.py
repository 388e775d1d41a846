"""ARX's sample risk figures of a released table, from its class-size histogram.

A record's re-identification risk is 1/|E|, |E| the size of its class in the released table
(suppressed records are not released and carry no risk). The figures are those of ARX's
``RiskModelSampleRisks`` (highest, lowest and average risk, the records at the highest and lowest
risk), ``RiskModelSampleSummary`` (the prosecutor, journalist and marketer attackers; the sample is
its own population here, so the journalist figures equal the prosecutor's) and
``RiskModelSampleRiskDistribution`` (records per risk band).

El Emam K. Guide to the de-identification of personal health information. CRC 2013 (the three
attacker models); Prasser F, Kohlmayer F. Putting statistical disclosure control into practice:
the ARX data anonymization tool. In: Medical Data Privacy Handbook. Springer; 2015.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from sqlanon.domain.risk.histogram import SizeHistogram

BAND_EDGES = (0.00000001, 0.0000001, 0.000001, 0.00001, 0.0001, 0.001, 0.01, 0.02, 0.03, 0.04, 0.05,
              0.06, 0.07, 0.08, 0.09, 0.1, 0.125, 0.143, 0.167, 0.2, 0.25, 0.334, 0.5, 1.0)
"""ARX's upper band limits; a record falls in the first band whose limit is ≥ its risk."""


@dataclass(frozen=True)
class SampleRisks:
    records: int
    classes: int
    threshold: float
    highest_risk: float
    lowest_risk: float
    average_risk: float
    records_at_highest_risk: int
    records_at_lowest_risk: int
    records_at_risk: int
    """Records whose risk is strictly above ``threshold`` (ARX's "records at risk", rA)."""
    sample_uniques: int
    """Records alone in their class."""
    bands: tuple[float, ...]
    """Fraction of the records per band of :data:`BAND_EDGES`."""

    def _share(self, count: int) -> float:
        return count / self.records if self.records else 0.0

    @property
    def fraction_at_highest_risk(self) -> float:
        return self._share(self.records_at_highest_risk)

    @property
    def fraction_at_lowest_risk(self) -> float:
        return self._share(self.records_at_lowest_risk)

    @property
    def fraction_at_risk(self) -> float:
        return self._share(self.records_at_risk)

    @property
    def fraction_unique(self) -> float:
        return self._share(self.sample_uniques)

    def attackers(self) -> dict[str, dict[str, float]]:
        """ARX's three attacker models (``RiskModelSampleSummary``) with the sample as population."""
        prosecutor = {"records_at_risk": self.fraction_at_risk, "highest_risk": self.highest_risk,
                      "success_rate": self.average_risk}
        return {"prosecutor": prosecutor, "journalist": dict(prosecutor),
                "marketer": {"success_rate": self.average_risk}}

    def estimated(self) -> dict[str, float]:
        """ARX's estimated risks (``RiskModelSampleRisks.getEstimated*Risk``) of a release analysed on
        its own: the prosecutor and journalist risk are the highest risk, the marketer's the average."""
        return {"prosecutor": self.highest_risk, "journalist": self.highest_risk,
                "marketer": self.average_risk}

    def as_dict(self) -> dict[str, Any]:
        return {
            "records": self.records, "classes": self.classes,
            "highest_risk": self.highest_risk, "lowest_risk": self.lowest_risk,
            "average_risk": self.average_risk,
            "records_at_highest_risk": self.records_at_highest_risk,
            "fraction_at_highest_risk": self.fraction_at_highest_risk,
            "records_at_lowest_risk": self.records_at_lowest_risk,
            "fraction_at_lowest_risk": self.fraction_at_lowest_risk,
            "threshold": self.threshold, "records_at_risk": self.records_at_risk,
            "fraction_at_risk": self.fraction_at_risk,
            "sample_uniques": self.sample_uniques, "fraction_unique": self.fraction_unique,
            "attackers": self.attackers(), "estimated": self.estimated(),
            "distribution": [{"up_to": edge, "fraction": share}
                             for edge, share in zip(BAND_EDGES, self.bands, strict=True)],
        }


def sample_risks(histogram: SizeHistogram, threshold: float = 0.2) -> SampleRisks:
    """The figures of ``histogram``; all 0 for an empty release."""
    h = histogram
    if h.empty:
        return SampleRisks(0, 0, threshold, 0.0, 0.0, 0.0, 0, 0, 0, 0, (0.0,) * len(BAND_EDGES))
    sizes, counts = h.sizes, h.counts
    records = sizes * counts
    risk = 1.0 / sizes.astype(np.float64)
    band = np.searchsorted(np.array(BAND_EDGES), risk, side="left")
    bands = np.zeros(len(BAND_EDGES))
    np.add.at(bands, band, records / h.records)
    return SampleRisks(
        records=h.records, classes=h.classes, threshold=threshold,
        highest_risk=1.0 / float(sizes[0]), lowest_risk=1.0 / float(sizes[-1]),
        average_risk=1.0 / (h.records / h.classes),
        records_at_highest_risk=int(records[0]), records_at_lowest_risk=int(records[-1]),
        records_at_risk=int(records[risk > threshold].sum()),
        sample_uniques=int(records[0]) if sizes[0] == 1 else 0,
        bands=tuple(float(b) for b in bands),
    )
