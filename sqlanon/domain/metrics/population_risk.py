"""The population-unique share of the released table (Dankar et al.'s estimate, as in ARX).

The population is ``metrics.options.population_size`` (a count, or ``usa``) or
``metrics.options.sampling_fraction`` (N = round(n/f), n the table's rows); docs/risk.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from sqlanon.domain.metrics.base import MetricContext, register
from sqlanon.domain.metrics.risk import RiskMetric, histogram
from sqlanon.errors import SpecError

if TYPE_CHECKING:
    from sqlanon.domain.risk.population import PopulationModel

POPULATION_SIZE, SAMPLING_FRACTION = "population_size", "sampling_fraction"


def population_model(options: dict[str, Any] | Any, rows: int, path: str = "metrics.options"
                     ) -> PopulationModel | None:
    """The population model the options give, None when they give none."""
    # the estimators are imported when used: the metrics registry imports this module on every run
    # that measures a metric
    from sqlanon.domain.risk.population import PopulationModel

    size, fraction = options.get(POPULATION_SIZE), options.get(SAMPLING_FRACTION)
    if size is None and fraction is None:
        return None
    if size is not None and fraction is not None:
        raise SpecError(f"give {POPULATION_SIZE} or {SAMPLING_FRACTION}, not both", path=path)
    try:
        return PopulationModel.of(rows, population=size, sampling_fraction=fraction)
    except SpecError as e:
        key = POPULATION_SIZE if size is not None else SAMPLING_FRACTION
        raise SpecError(e.rule, path=f"{path}.{key}") from None


@register
class PopulationUniques(RiskMetric):
    """Estimated share of the population that is unique on the released QIs (Dankar's rule)."""

    name: ClassVar[str] = "population_uniques"
    options: ClassVar[tuple[str, ...]] = (POPULATION_SIZE, SAMPLING_FRACTION)

    def compute(self, ctx: MetricContext) -> float:
        model = population_model(ctx.options, ctx.n)
        if model is None:
            raise SpecError(f"population_uniques needs metrics.options.{POPULATION_SIZE} or "
                            f"{SAMPLING_FRACTION}", path="metrics.options")
        from sqlanon.domain.risk.histogram import SizeHistogram
        from sqlanon.domain.risk.population import estimate

        h = SizeHistogram.of(histogram(ctx).kept)
        if h.empty:
            return 0.0
        return estimate(h, model.size, only="dankar").dankar.fraction
