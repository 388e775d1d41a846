"""The population a sample was drawn from, and the population-uniqueness estimates under it.

ARX's ``ARXPopulationModel`` and ``RiskModelPopulationUniqueness``: the population is given by its
size N or by the sampling fraction f = n/N (then N = round(n/f), n the rows of the original table,
fixed for every release of it); the estimators see the released histogram, whose records give the
sampling fraction they use. Dankar et al.'s decision rule picks the estimator.

Dankar FK, El Emam K, Neisa A, Roffey T. Estimating the re-identification risk of clinical data
sets. BMC Med Inform Decis Mak 12:66, 2012.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from sqlanon.domain.risk.histogram import SizeHistogram
from sqlanon.domain.risk.pitman import pitman
from sqlanon.domain.risk.snb import snb
from sqlanon.domain.risk.zayatz import zayatz
from sqlanon.errors import SpecError

USA = 317_238_626
"""The population of the USA in ARX's region presets (``ARXPopulationModel.Region.USA``)."""

ESTIMATORS = ("dankar", "pitman", "zayatz", "snb")


@dataclass(frozen=True)
class PopulationModel:
    """A population of ``size`` individuals (N ≥ the sample)."""

    size: int

    @classmethod
    def of(cls, sample_rows: int, population: Any = None, sampling_fraction: Any = None,
           path: str = "population") -> PopulationModel:
        """From a population size (a count, or ``"usa"``) or a sampling fraction in (0, 1]."""
        if (population is None) == (sampling_fraction is None):
            raise SpecError("give either a population size or a sampling fraction", path=path)
        if sampling_fraction is not None:
            f = sampling_fraction
            if isinstance(f, bool) or not isinstance(f, int | float) or not 0 < f <= 1:
                raise SpecError(f"sampling_fraction must be a number in (0, 1], got {f!r}",
                                path=f"{path}.sampling_fraction")
            return cls(max(int(round(sample_rows / f)), sample_rows))
        if isinstance(population, str) and population.lower() == "usa":
            return cls(USA)
        if isinstance(population, bool) or not isinstance(population, int) or population < 1:
            raise SpecError(f"population must be a positive whole number or 'usa', got {population!r}",
                            path=f"{path}.size")
        if population < sample_rows:
            raise SpecError(f"population {population} is smaller than the table's {sample_rows} rows",
                            path=f"{path}.size")
        return cls(population)


@dataclass(frozen=True)
class Uniqueness:
    """Estimated population uniques (a count; NaN when the estimator did not converge)."""

    estimator: str
    uniques: float
    population: int
    without_sample_uniques: bool = False
    """The histogram has no class of size 1: no population uniques, without estimating."""

    @property
    def available(self) -> bool:
        """ARX's ``isValid``: an estimate that is neither NaN nor 0."""
        return not math.isnan(self.uniques) and self.uniques != 0.0

    @property
    def converged(self) -> bool:
        """ARX's ``isAvailableEstimate``: a valid estimate, or none needed (no sample uniques)."""
        return self.available or self.without_sample_uniques

    @property
    def fraction(self) -> float:
        """ARX's figure: the estimate over N, 0 when unavailable."""
        return self.uniques / self.population if self.available else 0.0

    def as_dict(self) -> dict[str, Any]:
        return {"uniques": self.uniques if self.available else 0.0, "fraction": self.fraction,
                "converged": self.converged}


@dataclass(frozen=True)
class PopulationUniqueness:
    """The four estimates for one histogram, and the estimator Dankar's rule chose."""

    population: int
    sampling_fraction: float
    zayatz: Uniqueness
    pitman: Uniqueness
    snb: Uniqueness
    dankar: Uniqueness
    dankar_model: str

    def of(self, estimator: str) -> Uniqueness:
        return {"dankar": self.dankar, "pitman": self.pitman, "zayatz": self.zayatz,
                "snb": self.snb}[estimator]

    def as_dict(self) -> dict[str, Any]:
        return {"population": self.population, "sampling_fraction": self.sampling_fraction,
                **{e: self.of(e).as_dict() for e in ESTIMATORS}, "dankar_model": self.dankar_model}


def estimate(histogram: SizeHistogram, population: int, zayatz_fallback: bool = True,
             only: str | None = None) -> PopulationUniqueness:
    """All estimates (or ``only`` the one a privacy model needs, and what it depends on)."""
    n, big_n = histogram.records, population
    f = n / big_n if big_n else 0.0

    def made(name: str, value: float) -> Uniqueness:
        return Uniqueness(name, value, big_n)

    nan = made("", math.nan)
    if histogram.classes_of_size(1) == 0:
        zero = [Uniqueness(e, 0.0, big_n, without_sample_uniques=True)
                for e in ("zayatz", "pitman", "snb", "dankar")]
        return PopulationUniqueness(big_n, f, zero[0], zero[1], zero[2], zero[3], "dankar")
    want = set(ESTIMATORS) if only is None else {only}
    if "dankar" in want:
        want |= {"pitman", "zayatz"} if f <= 0.1 else {"snb", "zayatz"}
    z = made("zayatz", zayatz(histogram, big_n)) if "zayatz" in want else nan
    p = made("pitman", pitman(histogram, big_n)) if "pitman" in want else nan
    s = made("snb", snb(histogram, big_n)) if "snb" in want else nan
    d, model = nan, "dankar"
    if "dankar" in want:
        d, model = _dankar(f, z, p, s, zayatz_fallback)
    return PopulationUniqueness(big_n, f, z, p, s, d, model)


def _dankar(f: float, z: Uniqueness, p: Uniqueness, s: Uniqueness,
            zayatz_fallback: bool) -> tuple[Uniqueness, str]:
    if f <= 0.1:
        if p.available:
            return Uniqueness("dankar", p.uniques, p.population), "pitman"
        if zayatz_fallback:
            return Uniqueness("dankar", z.uniques, z.population), "zayatz"
        return Uniqueness("dankar", math.nan, p.population), "dankar"
    if s.available and not z.uniques < s.uniques:
        return Uniqueness("dankar", s.uniques, s.population), "snb"
    return Uniqueness("dankar", z.uniques, z.population), "zayatz"
