"""Several tables on Spark: replacing several tables (in place) is refused, since Spark has no
multi-statement transaction."""

from __future__ import annotations

import pytest

from sqlanon import api
from sqlanon.errors import UnsupportedError
from tests.outputs.several_tables import spec

pytestmark = pytest.mark.spark


@pytest.fixture()
def spark(spark_session):
    import pyarrow as pa

    from sqlanon.engines.spark import SparkEngine
    from tests.spark_session import drop_database, fresh_database

    database = fresh_database(spark_session)
    engine = SparkEngine(session=spark_session)
    try:
        for name in ("persons", "visits"):
            engine.create_table_from_arrow(name, pa.table({"pid": [1]}))
        yield engine
    finally:
        engine.close()
        drop_database(spark_session, database)


def test_replacing_several_tables_is_refused_before_anything_is_read(spark, adult_dir):
    """Spark has no multi-statement transaction: a kill between two replacements would leave one
    table anonymized and the other not. Mode table writes new tables one after the other (the same
    rows as DuckDB: tests/spark/test_cross_engine_person_tables.py; tests/postgres/
    test_pg_several_tables.py compares PostgreSQL)."""
    for output in ({"mode": "in_place"}, {"mode": "table", "replace": True}):
        with pytest.raises(UnsupportedError, match="spark has no multi-statement transaction"):
            api.anonymize(spec(adult_dir, output=output), engine=spark)
    assert sorted(r[1] for r in spark.fetch_script("SHOW TABLES")[1]) == ["persons", "visits"]
