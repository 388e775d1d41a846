"""Differential privacy: the budget ledger, the mechanisms, DP aggregates and DP microdata (docs/dp.md)."""

# The generators, DP aggregates with a budget ledger, and DP microdata (docs/dp.md); loaded on first
# use, so that the command line, which reads this package's argument parser, does not load them.
_LAZY = {
    "ReproducibleNoiseWarning": "sqlanon.methods.rng", "make_rng": "sqlanon.methods.rng",
    "dp_query": "sqlanon.methods.dp.queries", "Count": "sqlanon.methods.dp.aggregates",
    "Sum": "sqlanon.methods.dp.aggregates", "Mean": "sqlanon.methods.dp.aggregates",
    "Histogram": "sqlanon.methods.dp.aggregates", "Grouped": "sqlanon.methods.dp.aggregates",
    "PrivacyLedger": "sqlanon.methods.dp.budget",
    "PrivacyBudgetError": "sqlanon.methods.dp.amounts",
    "ReleaseAlreadyCharged": "sqlanon.methods.dp.amounts",
    "dp_microaggregate": "sqlanon.methods.dp.microdata",
}
__all__ = list(_LAZY)


def __getattr__(name: str) -> object:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'sqlanon.methods.dp' has no attribute {name!r}")
