"""Fixtures for the output tests: the hand-worked people table on a fresh in-memory DuckDB."""

from __future__ import annotations

import pytest

from tests.outputs.people import load_people


@pytest.fixture()
def people(duck):
    """An in-memory DuckDB holding table ``people`` (see tests/outputs/people.py)."""
    load_people(duck)
    return duck
