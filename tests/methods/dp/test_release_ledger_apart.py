"""A table release charged to a ledger kept in another database (``ReleaseBudget(ledger=...)``):
charged ahead in the ledger's database, the output written in its own, and a failed release
rolled back there and refunded."""

from __future__ import annotations

from decimal import Decimal

import pytest
from sqlglot import exp

from sqlanon.engines.duckdb import DuckDBEngine
from sqlanon.methods.dp.amounts import PrivacyBudgetError
from sqlanon.methods.dp.budget import PrivacyLedger
from sqlanon.methods.dp.ledger_tables import BUDGET_TABLE
from sqlanon.methods.dp.release_budget import ReleaseBudget


@pytest.fixture()
def databases():
    with DuckDBEngine() as out, DuckDBEngine() as books:
        yield out, books


def create(engine, name: str) -> None:
    engine.create_table_as(name, exp.select(exp.alias_(exp.Literal.number(1), "x")))


def spent(books) -> tuple[Decimal, int]:
    ledger = PrivacyLedger(books)
    state = ledger.state("people")
    assert state is not None
    return state.spent.epsilon, len(ledger.entries("people"))


def test_a_release_is_charged_in_the_ledgers_database_and_written_in_its_own(databases):
    out, books = databases
    budget = ReleaseBudget(out, "people", 0.5, budget_epsilon=1, description="noise", ledger=books)
    budget.check()
    budget.write(lambda: create(out, "released"))
    assert out.row_count("released") == 1 and not out.relation_exists(BUDGET_TABLE)
    assert spent(books) == (Decimal("0.5"), 1)
    assert budget.as_dict()["charged"] == {"epsilon": 0.5, "delta": 0.0}


def test_a_failed_release_is_rolled_back_and_refunded(databases):
    out, books = databases
    ReleaseBudget(out, "people", 0.5, budget_epsilon=1, ledger=books).check()

    def half_written() -> None:
        create(out, "half")
        raise ZeroDivisionError

    with pytest.raises(ZeroDivisionError):
        ReleaseBudget(out, "people", 0.5, ledger=books).write(half_written)
    assert not out.relation_exists("half") and spent(books) == (Decimal("0"), 0)
    with pytest.raises(ZeroDivisionError):  # work committing as it goes: discarded, then refunded
        ReleaseBudget(out, "people", 0.5, ledger=books).charged_ahead(
            half_written, discard=lambda: out.drop("half"))
    assert not out.relation_exists("half") and spent(books) == (Decimal("0"), 0)


def test_a_release_over_the_budget_is_refused_before_its_work(databases):
    out, books = databases
    first = ReleaseBudget(out, "people", 0.6, budget_epsilon=1, ledger=books)
    first.check()
    first.write(lambda: create(out, "a"))
    with pytest.raises(PrivacyBudgetError, match="would exceed the budget"):
        ReleaseBudget(out, "people", 0.6, ledger=books).write(lambda: create(out, "b"))
    assert not out.relation_exists("b") and spent(books) == (Decimal("0.6"), 1)
