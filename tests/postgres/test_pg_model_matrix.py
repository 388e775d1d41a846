"""Every privacy model × verb × output mode on PostgreSQL (see tests/domain/models/matrix.py)."""

from __future__ import annotations

import pytest

from tests.domain.models.matrix import cases, load, run

pytestmark = pytest.mark.postgres


@pytest.mark.parametrize(("model", "verb", "mode"), cases())
def test_every_model_verb_and_mode_on_postgres(pg, tmp_path, model, verb, mode):
    """Every model works through every verb and output mode on PostgreSQL, or is refused by design
    in one line (a research subset file loads into the embedded DuckDB only)."""
    run(pg, model, verb, mode, load(pg, tmp_path))
