"""Spark (a local session) passes the engine conformance suite; what it cannot do, it refuses."""

from __future__ import annotations

import pytest

from tests.engines.conformance import EngineConformance

pytestmark = pytest.mark.spark


class TestSpark(EngineConformance):
    any_table_name = False

    @pytest.fixture()
    def engine(self, spark):
        return spark


def test_spark_declares_only_what_it_has(spark):
    assert spark.capabilities.declared() == ["file_registration", "recoverable_swap",
                                             "grouped_arrow_map", "row_stream_map",
                                             "distributed_numbering"]
