"""mdav_mixed on PostgreSQL: Adult rows with nominal quasi-identifiers give DuckDB's release."""

from __future__ import annotations

import pandas as pd
import pytest
from sqlglot import exp

from sqlanon import api
from sqlanon.engines.duckdb import DuckDBEngine
from sqlanon.sql.nodes import alias, col, lit, table
from tests.methods.microaggregation.test_mdav_mixed_pipeline import (
    TABLE,
    load,
    people,  # noqa: F401 (a fixture)
    spec,
)

pytestmark = pytest.mark.postgres

TYPES = {"id": "bigint", "age": "integer"}


def load_pg(engine, frame: pd.DataFrame) -> None:
    rows = [tuple(lit(v.item() if hasattr(v, "item") else v) for v in r)
            for r in frame.itertuples(index=False)]
    source = exp.values(rows, alias="v", columns=[f"c{i}" for i in range(len(frame.columns))])
    q = exp.select(*[alias(exp.cast(col(f"c{i}", "v"), exp.DataType.build(TYPES.get(c, "text"))), c)
                     for i, c in enumerate(frame.columns)]).from_(source)
    engine.drop(TABLE)
    engine.create_table_as(TABLE, q)


def released(engine) -> pd.DataFrame:
    names, rows = engine.fetch(exp.select("*").from_(table("released")).order_by(col("id")))
    return pd.DataFrame(rows, columns=names)


@pytest.mark.parametrize("centroid", ["marginality", "mode"])
def test_release_equals_duckdb(pg, people, centroid):  # noqa: F811 (fixture)
    frame = people.iloc[:240]
    load_pg(pg, frame)
    api.apply(spec(centroid=centroid), engine=pg)
    with DuckDBEngine() as duck:
        load(duck, frame)
        api.apply(spec(centroid=centroid), engine=duck)
        want = released(duck)
    got = released(pg)
    assert list(got.columns) == list(want.columns)
    assert got["age"].astype(float).round(9).tolist() == want["age"].astype(float).round(9).tolist()
    pd.testing.assert_frame_equal(got.drop(columns="age"), want.drop(columns="age"), check_dtype=False)
