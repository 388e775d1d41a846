"""Microaggregation on PostgreSQL: the SQL methods and MDAV's group table give DuckDB's (and numpy's)
rows; the in-place output replaces the table atomically; hostile names stay names."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sqlglot import exp

from sqlanon import api
from sqlanon.engines.duckdb import DuckDBEngine
from sqlanon.spec import spec_from_dict
from sqlanon.sql.nodes import alias, col, lit, table
from tests.methods.microaggregation.test_pipeline import ATTRS, expected, frame

pytestmark = pytest.mark.postgres

TABLE = 'mi"cro; agg ✓'


def load(engine, df: pd.DataFrame, name: str) -> None:
    types = {"id": "bigint", "a": "double", "b": "double", "c": "numeric(12,6)", "name": "varchar",
             "income": "bigint"}
    rows = [tuple(lit(v.item() if hasattr(v, "item") else v) for v in r) for r in df.itertuples(index=False)]
    source = exp.values(rows, alias="v", columns=[f"c{i}" for i in range(len(df.columns))])
    q = exp.select(*[alias(exp.cast(col(f"c{i}", "v"), exp.DataType.build(types[c])), c)
                     for i, c in enumerate(df.columns)]).from_(source)
    engine.drop(name)
    engine.create_table_as(name, q)


def spec(algorithm: str, mode: str, name: str = "out", **extra) -> object:
    return spec_from_dict({
        "source": {"table": TABLE},
        "attributes": {"id": "insensitive", "name": "identifier", "income": "sensitive",
                       **{a: "quasi_identifier" for a in ATTRS}},
        "transformation": {"method": "microaggregation", "algorithm": algorithm, "k": 3, "key": "id",
                           **extra},
        "output": {"mode": mode, "name": name}})


def released(engine, relation: str) -> pd.DataFrame:
    names, rows = engine.fetch(exp.select("*").from_(table(relation)).order_by(col("id")))
    return pd.DataFrame(rows, columns=names)


def rounded(df: pd.DataFrame) -> pd.DataFrame:
    out = df.copy()
    out["c"] = out["c"].round(6)  # the column is numeric(12,6) in both databases
    return out


@pytest.mark.parametrize("algorithm", ["individual_ranking", "projection", "mdav", "optimal_univariate"])
def test_table_output_equals_duckdb_and_numpy(pg, algorithm):
    df = rounded(frame(60))
    load(pg, df, TABLE)
    report = api.apply(spec(algorithm, "table"), engine=pg)
    got = released(pg, "out")
    assert list(got.columns) == ["id", "a", "b", "c", "income"]
    np.testing.assert_allclose(got[ATTRS].to_numpy(dtype=float), expected(algorithm, df), rtol=1e-9)
    with DuckDBEngine() as duck:
        load(duck, df, TABLE)
        other = api.apply(spec(algorithm, "table"), engine=duck)
        np.testing.assert_allclose(released(duck, "out")[ATTRS].to_numpy(dtype=float),
                                   got[ATTRS].to_numpy(dtype=float), rtol=1e-9)
    assert report.metrics["sse"] == pytest.approx(other.metrics["sse"], rel=1e-9)
    assert report.metrics["record_linkage"] == pytest.approx(other.metrics["record_linkage"])


def test_mdav_view_reads_its_group_table(pg):
    df = rounded(frame(45))
    load(pg, df, TABLE)
    report = api.apply(spec("mdav", "view", name="v ✓"), engine=pg)
    assert report.outputs["group_table"] == "v ✓__groups"
    got = released(pg, "v ✓")
    np.testing.assert_allclose(got[ATTRS].to_numpy(dtype=float), expected("mdav", df), rtol=1e-9)


def test_mdav_in_place_replaces_the_table(pg):
    df = rounded(frame(30))
    load(pg, df, TABLE)
    report = api.apply(spec("mdav", "in_place"), engine=pg)
    assert report.outputs["relation"] == TABLE
    got = released(pg, TABLE)
    np.testing.assert_allclose(got[ATTRS].to_numpy(dtype=float), expected("mdav", df), rtol=1e-9)
    temporary = pg.fetch_script("SELECT count(*) FROM pg_tables WHERE tablename LIKE '\\_\\_sa\\_%'")[1][0][0]
    assert temporary == 0


def test_nulls_refused_on_postgres(pg):
    df = rounded(frame(30))
    df["a"] = df["a"].astype(object)
    df.loc[df.index[:2], "a"] = None
    load(pg, df, TABLE)
    from sqlanon.errors import SpecError

    with pytest.raises(SpecError, match="column 'a' has 2 NULL values"):
        api.apply(spec("projection", "in_place"), engine=pg)
    assert pg.row_count(TABLE) == 30


def test_failed_in_place_leaves_the_table_as_it_was(pg):
    """A foreign key into the table makes PostgreSQL refuse to drop it mid-script: all rolls back
    (views over it are refused before anything runs)."""
    from sqlanon.errors import EngineError

    df = rounded(frame(30))
    load(pg, df, TABLE)
    pg.execute_script(f"ALTER TABLE {table(TABLE).sql('postgres')} ADD PRIMARY KEY (id)")
    pg.execute_script(f"CREATE TABLE child (row_id int REFERENCES {table(TABLE).sql('postgres')} (id))")
    before = released(pg, TABLE)
    with pytest.raises(EngineError):
        api.apply(spec("mdav", "in_place"), engine=pg)
    pd.testing.assert_frame_equal(released(pg, TABLE), before)
    leftovers = pg.fetch_script("SELECT count(*) FROM pg_tables WHERE schemaname = current_schema() "
                         "AND tablename LIKE '\\_\\_sa\\_%'")[1][0][0]
    assert leftovers == 0


@pytest.mark.parametrize("algorithm", ["individual_ranking", "projection"])
def test_printed_postgres_sql_runs_on_postgres(pg, algorithm):
    df = rounded(frame(40))
    load(pg, df, TABLE)
    with DuckDBEngine() as duck:
        load(duck, df, TABLE)
        d = spec_from_dict({"source": {"table": TABLE},
                            "attributes": {"id": "insensitive", "name": "identifier", "income": "sensitive",
                                           **{a: "quasi_identifier" for a in ATTRS}},
                            "transformation": {"method": "microaggregation", "algorithm": algorithm,
                                               "k": 4, "key": "id"},
                            "output": {"mode": "sql", "dialect": "postgres"}})
        sql = api.apply(d, engine=duck).outputs["sql"]
    pg.execute_script(f'CREATE TABLE "printed" AS {sql.strip().rstrip(";")}')
    got = released(pg, "printed")
    np.testing.assert_allclose(got[ATTRS].to_numpy(dtype=float), expected(algorithm, df, k=4), rtol=1e-9)


@pytest.mark.parametrize("algorithm", ["mdav", "projection", "individual_ranking"])
def test_median_equals_duckdb(pg, algorithm):
    df = rounded(frame(41))
    load(pg, df, TABLE)
    api.apply(spec(algorithm, "table", statistic="median"), engine=pg)
    with DuckDBEngine() as duck:
        load(duck, df, TABLE)
        api.apply(spec(algorithm, "table", statistic="median"), engine=duck)
        want = released(duck, "out")[ATTRS].to_numpy(dtype=float)
    np.testing.assert_allclose(released(pg, "out")[ATTRS].to_numpy(dtype=float), want, rtol=1e-9)
