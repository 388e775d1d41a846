"""Working tables on Spark are cached temporary views: dropping one releases it, so that its name
can be taken again."""

from __future__ import annotations

import pytest
from sqlglot import exp

from sqlanon.sql.nodes import alias, col, lit, table

pytestmark = pytest.mark.spark


def temporary(name: str, value: int) -> exp.Create:
    return exp.Create(this=table(name), kind="TABLE", expression=exp.select(alias(lit(value), "x")),
                      properties=exp.Properties(expressions=[exp.TemporaryProperty()]))


def test_a_dropped_working_table_is_released_and_its_name_free_again(spark):
    spark.execute(temporary("work", 1))
    spark.drop("work")
    assert not spark.relation_exists("work")
    spark.execute(temporary("work", 2))  # refused while the engine still held the first one
    assert spark.fetch(exp.select("x").from_(table("work")))[1] == [(2,)]


def test_rows_sent_from_python_are_broadcast_to_the_joins_that_read_them(spark, tmp_path, monkeypatch):
    """Spark does not know the size of rows a Python process sent: unmarked, a join of a large table
    with them planned a shuffle of the large table by the join key, and with a key of two values
    its GROUP BY then ran in two tasks. Small ones are broadcast, larger ones are not."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"k": pa.array([i % 2 for i in range(1000)], pa.int64())}),
                   tmp_path / "big.parquet")
    spark.register_file("big", str(tmp_path / "big.parquet"), kind="parquet")
    columns = [exp.ColumnDef(this=exp.to_identifier(c, quoted=True), kind=exp.DataType.build(t))
               for c, t in [("leaf", "bigint"), ("code", "int")]]

    def rows(name: str, values: list[tuple[int, int]]) -> None:
        spark.execute(exp.Create(this=exp.Schema(this=table(name), expressions=columns), kind="TABLE",
                                 properties=exp.Properties(expressions=[exp.TemporaryProperty()])))
        spark.insert_rows(name, values)

    rows("codes", [(0, 10), (1, 11)])
    spark.create_table_from_arrow("more", pa.table({"leaf": [0, 1], "code": [20, 21]}), temporary=True)
    monkeypatch.setattr("sqlanon.engines.spark.BROADCAST_SENT_BYTES", 1000)
    rows("many", [(i, 0) for i in range(100)])  # counted as 100 · 2 · 16 bytes: over the limit

    def plan(small: str) -> str:
        query = exp.select(col("code", small), alias(exp.Count(this=exp.Star()), "n")).from_(
            table("big")).join(table(small), on=exp.EQ(this=col("k", "big"), expression=col("leaf", small)),
                               join_type="left").group_by(col("code", small))
        assert sorted(spark.fetch(query)[1]) == ([(10, 500), (11, 500)] if small == "codes" else
                                                 [(20, 500), (21, 500)] if small == "more" else [(0, 1000)])
        return spark.session.sql("EXPLAIN " + spark.sql(query)).collect()[0][0]

    for small in ("codes", "more"):
        assert "BroadcastHashJoin" in plan(small) and "SortMergeJoin" not in plan(small), small
    assert "BroadcastHashJoin" not in plan("many")
