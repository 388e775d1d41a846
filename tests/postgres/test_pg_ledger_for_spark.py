"""DP aggregates on Spark with the ledger on PostgreSQL (``--ledger postgresql://...``): the same
answers, spends and refusal as the same queries on DuckDB alone."""

from __future__ import annotations

import pytest

from tests.spark.test_spark_dp_ledger import same_as_duckdb_alone

pytestmark = [pytest.mark.postgres, pytest.mark.spark]


def test_spark_with_a_postgres_ledger_spends_and_refuses_as_duckdb_alone(spark, pg_dsn, tmp_path,
                                                                          capsys):
    same_as_duckdb_alone(spark, pg_dsn, tmp_path, capsys)
