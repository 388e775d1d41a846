"""A DP noise release written on Spark and charged to a ledger in a database of its own
(``transformation.ledger``): the same table and ledger rows as the same spec on DuckDB; a write that
fails leaves no output and its spend refunded; an over-budget release is refused before anything
is written; without ``transformation.ledger`` the release is refused naming it."""

from __future__ import annotations

import pytest
from sqlglot import exp

from sqlanon import api
from sqlanon.engines.duckdb import DuckDBEngine
from sqlanon.errors import EngineError, UnsupportedError
from sqlanon.methods.dp.amounts import PrivacyBudgetError
from sqlanon.methods.dp.budget import PrivacyLedger
from sqlanon.spec import spec_from_dict
from sqlanon.sql.nodes import col, table
from tests.outputs.people import ROWS, load_people

pytestmark = [pytest.mark.spark,
              pytest.mark.filterwarnings("ignore::sqlanon.methods.rng.ReproducibleNoiseWarning")]

RELEASES = {  # each charges 0.5 per record, of a budget of 1: a third is refused
    "laplace": {"attributes": ["age"], "epsilon": 0.5, "sensitivity": {"age": 1},
                "bounds": {"age": [0, 120]}},
    "randomized_response": {"attributes": ["sex"], "epsilon": 0.5, "categories": {"sex": ["F", "M"]}},
}


@pytest.fixture()
def people(tmp_path):
    """The people table as a Parquet file: both engines read its rows in the same order (a seed's
    draws follow the scan order)."""
    path = tmp_path / "people.parquet"
    with DuckDBEngine() as duck:
        load_people(duck)
        duck.con.execute(f"COPY people TO '{path}' (FORMAT parquet)")
    return path


def spec(source, mechanism: str, output: str, ledger, *, with_ledger: bool = True):
    return spec_from_dict({
        "source": {"file": str(source), "format": "parquet"},
        "attributes": {"age": {"role": "sensitive"}, "sex": {"role": "sensitive"}},
        "transformation": {"method": "noise", "mechanism": mechanism, **RELEASES[mechanism], "seed": 7,
                           "dataset": "people", "budget_epsilon": 1.0,
                           **({"ledger": str(ledger)} if with_ledger else {})},
        "output": {"mode": "table", "name": output}})


def ledger_of(path) -> tuple[dict, list[tuple]]:
    """The dataset's state and its entries (amounts and descriptions)."""
    with DuckDBEngine(str(path)) as books:
        ledger = PrivacyLedger(books)
        entries = [(e["epsilon_charged"], e["delta_charged"], e["description"])
                   for e in ledger.entries("people")]
        return ledger.states()["people"].as_dict(), entries


def by_id(engine, name: str) -> list[tuple]:
    return engine.fetch(exp.select("*").from_(table(name)).order_by(col("id")))[1]


def test_charged_releases_on_spark_are_duckdbs_with_the_same_spends(spark, people, tmp_path):
    """Seeded Laplace and randomized-response releases on Spark, charged to a DuckDB ledger file,
    give DuckDB's tables and ledger rows; a third release over the budget is refused before
    anything is written."""
    released: dict[str, list] = {}
    with DuckDBEngine() as duck:
        for name, engine in (("spark", spark), ("duckdb", duck)):
            books = tmp_path / f"{name}.duckdb"
            for i, mechanism in enumerate(RELEASES):
                report = api.apply(spec(people, mechanism, f"released_{i}", books), engine=engine,
                                   metrics=())
                assert report.as_dict()["guarantee"]["ledger"]["spent"]["epsilon"] == 0.5 * (i + 1)
                released[name] = released.get(name, []) + [by_id(engine, f"released_{i}")]
            with pytest.raises(PrivacyBudgetError, match="would exceed the budget"):
                api.apply(spec(people, "laplace", "again", books), engine=engine)
            assert not engine.relation_exists("again")
    assert released["spark"] == released["duckdb"]
    assert [r[2] for r in released["spark"][0]] != [r[2] for r in ROWS]  # the ages
    assert [r[4] for r in released["spark"][1]] != [r[4] for r in ROWS]  # the sexes
    state, entries = ledger_of(tmp_path / "spark.duckdb")
    assert (state, entries) == ledger_of(tmp_path / "duckdb.duckdb")
    assert state["spent"]["epsilon"] == 1 and len(entries) == 2
    assert spark.tables_named("sqlanon_") == [] and spark.tables_named("__sa_") == []


def test_a_failing_write_leaves_no_output_and_refunds_the_spend(spark, people, tmp_path):
    """An output name Spark's CREATE TABLE rejects, after the spend was committed: the spend is
    refunded."""
    books = tmp_path / "books.duckdb"
    with pytest.raises(EngineError, match="INVALID_SCHEMA_OR_RELATION_NAME") as failed:
        api.apply(spec(people, "laplace", "bad name", books), engine=spark)
    assert not getattr(failed.value, "__notes__", None)  # no note saying the refund failed
    state, entries = ledger_of(books)
    assert state["spent"]["epsilon"] == 0 and entries == []
    assert not spark.relation_exists("bad name") and spark.tables_named("__sa_") == []


def test_without_a_ledger_of_its_own_a_charged_release_is_refused_naming_it(spark, people):
    with pytest.raises(UnsupportedError) as refused:
        api.apply(spec(people, "laplace", "released", None, with_ledger=False), engine=spark)
    assert "transformation.ledger" in str(refused.value) and "\n" not in str(refused.value)
    assert not spark.relation_exists("released")
