"""Differential privacy: the budget ledger, the mechanisms, DP aggregates and DP microdata (docs/dp.md)."""

from sqlanon.methods.rng import ReproducibleNoiseWarning, make_rng

__all__ = ["ReproducibleNoiseWarning", "make_rng"]

# DP aggregates with a budget ledger, and DP microdata (docs/dp.md); loaded on first use.
_LAZY = {
    "dp_query": "sqlanon.methods.dp.queries", "Count": "sqlanon.methods.dp.aggregates",
    "Sum": "sqlanon.methods.dp.aggregates", "Mean": "sqlanon.methods.dp.aggregates",
    "Histogram": "sqlanon.methods.dp.aggregates", "Grouped": "sqlanon.methods.dp.aggregates",
    "PrivacyLedger": "sqlanon.methods.dp.budget",
    "PrivacyBudgetError": "sqlanon.methods.dp.amounts", "dp_microaggregate": "sqlanon.methods.dp.microdata",
}
__all__ += list(_LAZY)


def __getattr__(name: str) -> object:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'sqlanon.methods.dp' has no attribute {name!r}")
