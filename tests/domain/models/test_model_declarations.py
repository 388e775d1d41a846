"""Every registered model declares what the search and the suppression step rely on."""

from __future__ import annotations

from sqlanon.domain.models import MODELS
from sqlanon.domain.models.base import Monotonicity

# Models whose predicate compares a class with the whole table (ARX: computed before suppression).
WITH_TABLE_REFERENCE = {"t_closeness", "delta_disclosure", "beta_likeness", "kpqr_anonymity", "average_risk",
                        "population_uniqueness"}


def test_models_declare_monotonicity_and_suppressed_row_treatment():
    models = MODELS
    assert {"k_anonymity", "l_diversity", "p_sensitive_k_anonymity", "alpha_k_anonymity", "t_closeness",
            "delta_disclosure", "beta_likeness", "delta_presence", "k_e_anonymity",
            "kpqr_anonymity"} <= set(models)
    for name, cls in models.items():
        assert isinstance(cls.monotonicity, Monotonicity), name
        assert cls.table_reference == (name in WITH_TABLE_REFERENCE), name
        if cls.table_reference:
            # a reference over all rows moves when classes are suppressed
            assert cls.monotonicity.suppression is False, name
