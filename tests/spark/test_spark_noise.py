"""Noise on Spark, drawn by the executors: with a seed, Gaussian, Laplace and correlated noise, PRAM,
randomized response and invariant PRAM give DuckDB's table bit for bit (both read the same Parquet
file of the credit card data), whatever the number of partitions Spark splits the file into; without
a seed, two runs differ. The mechanisms that compute new values from all the values are refused,
saying why."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from sqlanon import api
from sqlanon.engines.duckdb import DuckDBEngine
from sqlanon.errors import UnsupportedError
from sqlanon.methods.rng import ReproducibleNoiseWarning
from sqlanon.spec import spec_from_dict
from tests.conftest import DATA, require_data

pytestmark = pytest.mark.spark

CREDIT = DATA / "creditcard" / "creditcard_int.csv"
ROW_GROUP = 4096
NUMERIC = ["LIMIT_BAL", "AGE", "BILL_AMT1", "PAY_AMT1"]
MECHANISMS = {  # staircase and uncorrelated draw as discrete_laplace and correlated do: DuckDB tests them
    "gaussian": {"epsilon": 1.0, "delta": 1e-6, "sensitivity": 1000},
    "laplace": {"epsilon": 1.0, "sensitivity": 1000,
                "bounds": {"LIMIT_BAL": [0, 1_000_000], "AGE": [18, 100],
                           "BILL_AMT1": [-200_000, 1_000_000], "PAY_AMT1": [0, 1_000_000]}},
    "discrete_laplace": {"epsilon": 0.5, "sensitivity": 100},
    "correlated": {"alpha": 0.1},
}
CATEGORICAL = {
    "pram": ({"matrix": {"SEX": {0: {0: 0.8, 1: 0.2}, 1: {0: 0.3, 1: 0.7}},
                         "MARRIAGE": {m: {n: 0.7 if m == n else 0.1 for n in range(4)} for m in range(4)}}},
             ["SEX", "MARRIAGE"]),
    "randomized_response": ({"epsilon": 1.0, "categories": {"EDUCATION": list(range(7))}}, ["EDUCATION"]),
    "invariant_pram": ({}, ["EDUCATION", "MARRIAGE"]),
}


@pytest.fixture(scope="module")
def parquet(tmp_path_factory):
    """The credit card table with a row id, as one Parquet file of row groups of 4,096 rows (so
    that Spark can split it into partitions)."""
    require_data(CREDIT)
    path = tmp_path_factory.mktemp("noise") / "credit.parquet"
    with DuckDBEngine() as duck:
        duck.con.execute(f"""COPY (SELECT row_number() OVER () - 1 AS id, * FROM read_csv(?, delim=';',
            header=true)) TO '{path}' (FORMAT parquet, ROW_GROUP_SIZE {ROW_GROUP})""", [str(CREDIT)])
    return path


@pytest.fixture(scope="module")
def engines(spark_session):
    from sqlanon.engines.spark import SparkEngine
    from tests.spark_session import drop_database, fresh_database

    database = fresh_database(spark_session)
    spark, duck = SparkEngine(session=spark_session), DuckDBEngine()
    try:
        yield {"spark": spark, "duckdb": duck}
    finally:
        duck.close()
        spark.close()
        drop_database(spark_session, database)


_outputs = iter(range(10**6))


def noise(engine, parquet, mechanism: str, *, seed: int | None = 7, metrics: bool = False,
          attributes=NUMERIC) -> tuple[str, object]:
    """Apply the mechanism to the Parquet file; the output table's name and the report."""
    name = f"noisy_{next(_outputs)}"
    settings = dict(MECHANISMS.get(mechanism, {}))
    if "bounds" in settings:
        settings["bounds"] = {a: settings["bounds"][a] for a in attributes}
    spec = spec_from_dict({
        "source": {"file": str(parquet), "format": "parquet"},
        "attributes": {a: {"role": "sensitive"} for a in attributes or NUMERIC},
        "transformation": {"method": "noise", "mechanism": mechanism,
                           **({"attributes": list(attributes)} if attributes else {}),
                           **settings, **({"seed": seed} if seed is not None else {})},
        "output": {"mode": "table", "name": name}})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ReproducibleNoiseWarning)
        report = api.apply(spec, engine=engine, metrics=None if metrics else ())
    return name, report


def rows(engine, name: str) -> dict[str, np.ndarray]:
    """The output's columns, ordered by the row id."""
    data = engine.fetch_arrow(_ordered(name)).to_pydict()
    return {c: np.array(v) for c, v in data.items()}


def _ordered(name: str):
    from sqlglot import exp

    from sqlanon.sql.nodes import col, table

    return exp.select("*").from_(table(name)).order_by(col("id"))


def assert_same_rows(a: dict[str, np.ndarray], b: dict[str, np.ndarray]) -> None:
    assert a.keys() == b.keys()
    for c in a:
        np.testing.assert_array_equal(a[c], b[c], err_msg=c)


@pytest.mark.parametrize("mechanism", ["correlated", "laplace"])  # gaussian: the partitions' test
def test_a_seed_gives_duckdbs_table(engines, parquet, mechanism):
    spark_out, _ = noise(engines["spark"], parquet, mechanism)
    duck_out, _ = noise(engines["duckdb"], parquet, mechanism)
    on_spark, on_duckdb = rows(engines["spark"], spark_out), rows(engines["duckdb"], duck_out)
    assert len(on_spark["id"]) == 30_000
    assert not np.array_equal(on_spark["PAY_AMT1"], source_column(parquet, "PAY_AMT1"))
    assert_same_rows(on_spark, on_duckdb)


@pytest.mark.parametrize("mechanism", sorted(CATEGORICAL))
def test_categorical_mechanisms_run_in_sql_and_give_duckdbs_table(engines, parquet, mechanism):
    """PRAM, randomized response and invariant PRAM: one uniform per value, drawn by position, meets
    the cumulative rows of the transition matrix in a CASE expression."""
    settings, attributes = CATEGORICAL[mechanism]
    MECHANISMS[mechanism] = settings
    try:
        spark_out, on_spark = noise(engines["spark"], parquet, mechanism, attributes=attributes,
                                    metrics=mechanism == "pram")
        duck_out, on_duckdb = noise(engines["duckdb"], parquet, mechanism, attributes=attributes,
                                    metrics=mechanism == "pram")
    finally:
        del MECHANISMS[mechanism]
    spark_rows, duckdb_rows = rows(engines["spark"], spark_out), rows(engines["duckdb"], duck_out)
    assert_same_rows(spark_rows, duckdb_rows)
    assert on_spark.metrics == on_duckdb.metrics and on_spark.guarantee == on_duckdb.guarantee
    a = attributes[0]
    changed = np.mean(spark_rows[a] != source_column(parquet, a))
    assert 0.01 < changed < 0.9
    if mechanism == "pram":
        assert on_spark.metrics[a]["changed_share"] == pytest.approx(changed)


def source_column(parquet, column: str) -> np.ndarray:
    import pyarrow.parquet as pq

    return pq.read_table(parquet, columns=[column]).column(column).to_numpy()


def scan_partitions(session, parquet) -> int:
    from sqlanon.engines.spark_rows import partition_extents

    return len(partition_extents(session.read.parquet(str(parquet))))


@pytest.fixture()
def split(spark_session, parquet):
    """Sets how many partitions Spark reads the file in (1, or 4 of two row groups each)."""
    keys = ("spark.sql.files.maxPartitionBytes", "spark.sql.files.openCostInBytes")
    before = {k: spark_session.conf.get(k) for k in keys}

    def into(parts: int) -> None:
        size = parquet.stat().st_size
        spark_session.conf.set(keys[0], str(size if parts == 1 else -(-size // parts)))
        spark_session.conf.set(keys[1], str(size if parts == 1 else 0))
        assert scan_partitions(spark_session, parquet) == parts

    yield into
    for k, v in before.items():
        spark_session.conf.set(k, v)


def test_a_seed_gives_the_same_table_in_one_or_four_partitions(engines, parquet, split):
    split(1)
    one, _ = noise(engines["spark"], parquet, "gaussian", seed=11, attributes=NUMERIC[2:])
    split(4)
    four, report = noise(engines["spark"], parquet, "gaussian", seed=11, metrics=True, attributes=NUMERIC[2:])
    duck, duck_report = noise(engines["duckdb"], parquet, "gaussian", seed=11, metrics=True,
                              attributes=NUMERIC[2:])
    assert_same_rows(rows(engines["spark"], one), rows(engines["spark"], four))
    assert_same_rows(rows(engines["spark"], four), rows(engines["duckdb"], duck))
    # the utility and risk figures read the mapped rows again: they are those of the table written
    assert report.metrics.keys() == duck_report.metrics.keys() and "sse" in report.metrics
    for key, value in duck_report.metrics.items():
        if isinstance(value, dict):  # per attribute: each attribute's figures
            assert report.metrics[key].keys() == value.keys(), key
            for attribute, figures in value.items():
                assert report.metrics[key][attribute] == pytest.approx(figures, rel=1e-9), (key, attribute)
        else:
            assert report.metrics[key] == pytest.approx(value, rel=1e-9), key


def test_without_a_seed_two_runs_differ(engines, parquet):
    """Discrete Laplace noise of scale 200 on integers: two unseeded runs agree on few rows."""
    first, _ = noise(engines["spark"], parquet, "discrete_laplace", seed=None, attributes=["BILL_AMT1"])
    second, _ = noise(engines["spark"], parquet, "discrete_laplace", seed=None, attributes=["BILL_AMT1"])
    a = rows(engines["spark"], first)["BILL_AMT1"]
    b = rows(engines["spark"], second)["BILL_AMT1"]
    source = source_column(parquet, "BILL_AMT1")
    assert len(a) == len(b) == 30_000 and a.dtype == source.dtype == np.int64
    assert np.mean(a != b) > 0.99 and np.mean(a != source) > 0.99


@pytest.mark.parametrize("mechanism, settings, why", [
    ("rank_swap", {"p": 5}, "over every value of the column"),
    ("condensation", {"k": 5}, "synthetic records in numpy"),
    ("sampling", {"fraction": 0.5}, "sample of exact size"),
    ("randomized_response", {"keep_probability": 0.5, "categories": {"EDUCATION": list(range(100))}},
     "10000 non-zero entries, more than the 4096 applied in SQL"),
])
def test_mechanisms_that_read_the_values_are_refused_saying_why(engines, parquet, mechanism, settings, why):
    attributes = {"condensation": ["AGE", "BILL_AMT1"], "rank_swap": ["AGE"],
                  "randomized_response": ["EDUCATION"]}.get(mechanism, [])
    MECHANISMS[mechanism] = settings
    try:
        with pytest.raises(UnsupportedError) as e:
            noise(engines["spark"], parquet, mechanism, attributes=attributes)
    finally:
        del MECHANISMS[mechanism]
    message = str(e.value)
    assert why in message and "spark" in message and "DuckDB or PostgreSQL" in message and "\n" not in message



def test_noise_in_place_replaces_the_table_in_recorded_steps(engines, parquet):
    """In place on Spark, the noisy table is swapped in by the recorded steps of a table replacement
    (no transaction holds a drop and a rename there): the table then holds what a table output of
    the same seed holds, the swap's names are gone, and the figures were read from the original."""
    from sqlglot import exp

    from sqlanon.engines.swap import PREFIX
    from sqlanon.sql.nodes import col, lit, table

    spark = engines["spark"]
    spark.register_file("credit_source", str(parquet), kind="parquet")
    spark.create_table_as("credit_in_place", exp.select("*").from_(table("credit_source")).where(
        exp.LT(this=col("id"), expression=lit(2000))))
    spec = {"source": {"table": "credit_in_place"},
            "attributes": {a: {"role": "sensitive"} for a in NUMERIC},
            "transformation": {"method": "noise", "mechanism": "gaussian", "attributes": NUMERIC,
                               **MECHANISMS["gaussian"], "seed": 7}}
    original = rows(spark, "credit_in_place")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ReproducibleNoiseWarning)
        api.apply(spec_from_dict({**spec, "output": {"mode": "table", "name": "credit_noisy"}}),
                  engine=spark, metrics=())
        report = api.apply(spec_from_dict({**spec, "output": {"mode": "in_place"}}), engine=spark)
    replaced = rows(spark, "credit_in_place")
    assert_same_rows(replaced, rows(spark, "credit_noisy"))
    assert len(replaced["id"]) == 2000 and not np.array_equal(replaced["AGE"], original["AGE"])
    assert not spark.tables_named(PREFIX)
    assert report.as_dict()["metrics"], report.as_dict()
