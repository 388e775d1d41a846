"""PostgreSQL (a real server) passes the engine conformance suite."""

from __future__ import annotations

import pytest

from tests.engines.conformance import EngineConformance

pytestmark = pytest.mark.postgres


class TestPostgres(EngineConformance):
    @pytest.fixture()
    def engine(self, pg):
        return pg
