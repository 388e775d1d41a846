"""Noise: differential-privacy mechanisms and classical perturbation (noise, swapping, PRAM, condensation)."""

from sqlanon.noise.rng import ReproducibleNoiseWarning, make_rng

__all__ = ["ReproducibleNoiseWarning", "make_rng"]

# DP aggregates with a budget ledger, and DP microdata (docs/dp.md); loaded on first use.
_LAZY = {
    "dp_query": "sqlanon.noise.dp_queries", "Count": "sqlanon.noise.aggregates",
    "Sum": "sqlanon.noise.aggregates", "Mean": "sqlanon.noise.aggregates",
    "Histogram": "sqlanon.noise.aggregates", "Grouped": "sqlanon.noise.aggregates",
    "PrivacyLedger": "sqlanon.noise.ledger",
    "PrivacyBudgetError": "sqlanon.noise.ledger", "dp_microaggregate": "sqlanon.noise.dp_microdata",
    # noise and perturbation applied to a table (docs/noise.md)
    "apply_noise": "sqlanon.noise.apply", "NoiseReport": "sqlanon.noise.apply",
}
__all__ += list(_LAZY)


def __getattr__(name: str) -> object:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'sqlanon.noise' has no attribute {name!r}")
