"""The risk analysis of one table: the sample figures and the population estimates of its histogram.

:func:`sqlanon.domain.metrics.risk_analysis.analyze` reads the histogram on the engine.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlanon.domain.risk.histogram import SizeHistogram
from sqlanon.domain.risk.population import PopulationUniqueness, estimate
from sqlanon.domain.risk.sample import SampleRisks, sample_risks

DEFAULT_THRESHOLD = 0.2
"""The risk above which a record counts as at risk when no threshold is given (1/5: classes < 5)."""


@dataclass(frozen=True)
class RiskAnalysis:
    """The sample figures of a table and, given a population, its population-uniqueness estimates."""

    histogram: SizeHistogram
    sample: SampleRisks
    population: PopulationUniqueness | None = None

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"sample": self.sample.as_dict(),
                               "class_sizes": {str(s): c for s, c in self.histogram.as_dict().items()}}
        if self.population is not None:
            out["population"] = self.population.as_dict()
        return out

    def lines(self) -> list[str]:
        """The analysis as text lines (a report section's body)."""
        s = self.sample
        out = [
            f"records {s.records}, classes {s.classes}",
            f"highest risk {s.highest_risk:.6g} ({s.records_at_highest_risk} records, "
            f"{s.fraction_at_highest_risk:.4%})",
            f"lowest risk {s.lowest_risk:.6g} ({s.records_at_lowest_risk} records, "
            f"{s.fraction_at_lowest_risk:.4%})",
            f"average risk {s.average_risk:.6g} (prosecutor, journalist and marketer success rate)",
            f"records at risk above {s.threshold:g}: {s.records_at_risk} ({s.fraction_at_risk:.4%})",
            f"sample uniques {s.sample_uniques} ({s.fraction_unique:.4%})",
        ]
        p = self.population
        if p is not None:
            out.append(f"population {p.population} (sampling fraction {p.sampling_fraction:.6g})")
            if p.dankar.without_sample_uniques:
                out.append("  no sample uniques: no population uniques")
                return out
            for name in ("zayatz", "pitman", "snb"):
                u = p.of(name)
                out.append(f"  {name}: {u.uniques:.1f} uniques ({u.fraction:.4%})" if u.available
                           else f"  {name}: no estimate (did not converge)")
            out.append(f"  dankar: {p.dankar.fraction:.4%} (chooses {p.dankar_model})")
        return out


def of_histogram(histogram: SizeHistogram, *, population: int | None = None,
                 threshold: float = DEFAULT_THRESHOLD) -> RiskAnalysis:
    estimates = estimate(histogram, population) if population is not None and not histogram.empty \
        else None
    return RiskAnalysis(histogram, sample_risks(histogram, threshold), estimates)
