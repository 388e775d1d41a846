"""Every privacy model × verb × output mode on DuckDB (see tests/domain/models/matrix.py)."""

from __future__ import annotations

import pytest

from tests.domain.models.matrix import cases, load, run


@pytest.mark.parametrize(("model", "verb", "mode"), cases())
def test_every_model_verb_and_mode_on_duckdb(duck, tmp_path, model, verb, mode):
    """Every model works through every verb and output mode, or is refused by design in one line
    (δ-presence releases once failed after the search on a relation the output statement lacked)."""
    run(duck, model, verb, mode, load(duck, tmp_path))
