"""DP aggregates on Spark with the ledger in a DuckDB file (``--ledger``): the same answers, spends
and refusals as the same queries on DuckDB alone, and without ``--ledger`` a refusal naming it; a
table release written on Spark and charged to a ledger in DuckDB."""

from __future__ import annotations

import json

import pytest
from sqlglot import exp

from sqlanon.cli.main import main
from sqlanon.engines.connect import connect
from sqlanon.engines.duckdb import DuckDBEngine
from sqlanon.errors import UnsupportedError
from sqlanon.methods.dp.aggregates import Count
from sqlanon.methods.dp.budget import PrivacyLedger
from sqlanon.methods.dp.queries import dp_query
from sqlanon.methods.dp.release_budget import ReleaseBudget
from sqlanon.sql.nodes import table
from tests.outputs.people import load_people

pytestmark = pytest.mark.spark

QUERIES = [  # each spends 0.4 of a budget of 1: the third is refused
    ["--count", "--budget-epsilon", "1"],
    ["--sum", "age", "--bounds", "0", "100"],
    ["--histogram", "sex", "--keys", "F", "M"],
]


def query(database: str, ledger: str | None, extra: list[str], capsys) -> tuple[int, dict | str]:
    """``sqlanon query`` in this process (a Spark target uses the tests' running session)."""
    argv = ["query", "--database", database, "--table", "people", "--epsilon", "0.4", "--seed", "7",
            "--trust-bounds", "--dataset", "people", *extra]
    code = main(argv + (["--ledger", ledger] if ledger else []))
    out, err = capsys.readouterr()
    return code, (json.loads(out) if code == 0 else err)


def ledger_rows(path) -> tuple[dict, list[tuple]]:
    """The budget's state and the spends (what was spent and charged, and the description)."""
    with connect(str(path)) as engine:
        ledger = PrivacyLedger(engine)
        entries = [(e["epsilon"], e["delta"], e["neighbours"], e["epsilon_charged"],
                    e["delta_charged"], e["description"]) for e in ledger.entries("people")]
        return ledger.states()["people"].as_dict(), entries


def test_spark_with_a_duckdb_ledger_spends_and_refuses_as_duckdb_alone(spark, tmp_path, capsys):
    same_as_duckdb_alone(spark, str(tmp_path / "ledger.duckdb"), tmp_path, capsys)


def same_as_duckdb_alone(spark, books: str, tmp_path, capsys) -> None:
    """The queries on Spark with the ledger in ``books``, and on a DuckDB file holding the table and
    its ledger: the same answers, refusal and ledger contents."""
    load_people(spark)
    alone = tmp_path / "alone.duckdb"
    with DuckDBEngine(str(alone)) as duck:
        load_people(duck)
    runs = {"spark": [query("spark://local[2]", str(books), q, capsys) for q in QUERIES],
            "duckdb": [query(str(alone), None, q, capsys) for q in QUERIES]}
    for name, answers in runs.items():
        assert [code for code, _ in answers] == [0, 0, 2], (name, answers)
        assert "would exceed the budget of dataset 'people'" in answers[2][1]
    assert [a for _, a in runs["spark"][:2]] == [a for _, a in runs["duckdb"][:2]]
    assert runs["spark"][0][1]["budget"]["spent"]["epsilon"] == 0.4
    assert ledger_rows(books) == ledger_rows(alone)
    assert len(ledger_rows(books)[1]) == 2
    assert spark.tables_named("sqlanon_") == []  # nothing of the ledger on Spark


def test_without_a_ledger_spark_is_refused_naming_the_option(spark, tmp_path, capsys):
    load_people(spark)
    code, err = query("spark://local[2]", None, QUERIES[0], capsys)
    assert code != 0
    [line] = err.strip().splitlines()
    assert "needs transactions, which spark does not have" in line and "--ledger" in line
    with pytest.raises(UnsupportedError, match="ledger="):
        dp_query(spark, "people", Count(), epsilon=0.4, budget_epsilon=1)
    with pytest.raises(UnsupportedError, match="cannot be kept on spark"):
        dp_query(spark, "people", Count(), epsilon=0.4, budget_epsilon=1, ledger=spark)
    assert spark.tables_named("sqlanon_") == []


def test_a_release_written_on_spark_is_charged_to_a_duckdb_ledger(spark):
    """A table written on Spark, charged to a ledger in DuckDB; without it, refused naming why."""
    load_people(spark)
    with pytest.raises(UnsupportedError, match="needs transactions, which spark does not have"):
        ReleaseBudget(spark, "people", 0.5, budget_epsilon=1).check()
    with DuckDBEngine() as books:
        budget = ReleaseBudget(spark, "people", 0.5, budget_epsilon=1, ledger=books)
        budget.check()
        budget.write(lambda: spark.create_table_as("released", exp.select("*").from_(table("people"))))
        assert spark.row_count("released") == 10
        assert PrivacyLedger(books).state("people").as_dict()["spent"]["epsilon"] == 0.5
