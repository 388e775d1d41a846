"""The privacy-budget ledger: exact composition, refusals that spend nothing, and concurrent spenders.

The concurrency tests start real operating-system processes against a DuckDB file and against the
PostgreSQL server of the test session, and check the ledger afterwards: the total spent never
exceeds the budget, every refused attempt left no row, and the running totals equal the rows.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import threading
import time
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sqlanon.engines.duckdb import DuckDBEngine
from sqlanon.methods.dp.amounts import PrivacyBudgetError
from sqlanon.methods.dp.budget import PrivacyLedger
from sqlanon.methods.dp.ledger_tables import LEDGER_TABLE
from tests.postgres.conftest import pg, pg_dsn  # noqa: F401  (fixtures; pg_server is the suite's)

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture()
def ledger():
    engine = DuckDBEngine()
    yield PrivacyLedger(engine)
    engine.close()


def test_budget_is_set_once(ledger):
    state = ledger.set_budget("people", 1.5, 1e-6)
    assert state.total.epsilon == Decimal("1.5") and state.total.delta == Decimal("0.000001")
    assert ledger.set_budget("people", 1.5, 1e-6) == state  # the same budget again is a no-op
    with pytest.raises(PrivacyBudgetError, match=r"already has the budget epsilon=1\.5.*cannot be "
                                                  r"changed \(asked for epsilon=3"):
        ledger.set_budget("people", 3, 1e-6)
    assert ledger.state("people").total.epsilon == Decimal("1.5")


@pytest.mark.parametrize("epsilon, delta, message", [
    (0, 0, "epsilon must be > 0"), (-1, 0, "finite number >= 0"), (float("nan"), 0, "finite"),
    ("lots", 0, "must be a number"), (True, 0, "must be a number"), (1, 1, "delta must be < 1"),
    (1, -0.1, "finite number >= 0"), (float("inf"), 0, "finite")])
def test_invalid_budgets_are_refused(ledger, epsilon, delta, message):
    with pytest.raises(PrivacyBudgetError, match=message):
        ledger.set_budget("d", epsilon, delta)
    assert ledger.state("d") is None


def test_spending_without_a_budget_is_refused(ledger):
    with pytest.raises(PrivacyBudgetError, match="no privacy budget is set for dataset 'd'"):
        ledger.spend("d", 0.1)
    assert ledger.entries("d") == []


def test_composition_is_exact_decimal_sums(ledger):
    # Ten spends of 0.1 exhaust a budget of 1 exactly (in binary floats they sum to 0.9999999999999999
    # and an eleventh would slip through or the tenth be refused); deltas add up (erratum E7).
    ledger.set_budget("d", 1, 1e-5)
    for _ in range(10):
        ledger.spend("d", 0.1, 1e-6, description="q")
    state = ledger.state("d")
    assert state.spent.epsilon == Decimal(1) and state.spent.delta == Decimal("0.00001")
    assert state.remaining.epsilon == 0
    with pytest.raises(PrivacyBudgetError, match="would exceed the budget"):
        ledger.spend("d", Fraction(1, 10**18))
    assert len(ledger.entries("d")) == 10
    assert sum(e["epsilon"] for e in ledger.entries("d")) == Decimal(1)


def test_delta_is_a_budget_of_its_own(ledger):
    ledger.set_budget("d", 10, 1e-6)
    ledger.spend("d", 1, 6e-7)
    with pytest.raises(PrivacyBudgetError, match=r"remaining epsilon=9, delta=0\.0000004"):
        ledger.spend("d", 1, 6e-7)
    assert ledger.state("d").spent.delta == Decimal("0.0000006")


@settings(max_examples=30)
@given(st.fractions(min_value=Fraction(1, 100), max_value=3, max_denominator=1000),
       st.lists(st.fractions(min_value=Fraction(1, 1000), max_value=1, max_denominator=1000),
                max_size=15))
def test_spends_are_accepted_exactly_while_they_fit(budget, spends):
    # Reference: exact rational arithmetic. A spend is accepted iff the running total stays within
    # the budget; refused ones change nothing.
    engine = DuckDBEngine()
    ledger = PrivacyLedger(engine)
    total = Decimal(budget.numerator) / Decimal(budget.denominator)
    ledger.set_budget("d", total.quantize(Decimal("1e-18"), rounding="ROUND_FLOOR"))
    limit = ledger.state("d").total.epsilon
    spent = Decimal(0)
    for x in spends:
        cost = (Decimal(x.numerator) / Decimal(x.denominator)).quantize(Decimal("1e-18"),
                                                                         rounding="ROUND_CEILING")
        if spent + cost <= limit:
            ledger.spend("d", x)
            spent += cost
        else:
            with pytest.raises(PrivacyBudgetError):
                ledger.spend("d", x)
    assert ledger.state("d").spent.epsilon == spent == sum(e["epsilon"] for e in ledger.entries("d"))
    engine.close()


def test_a_refused_spend_leaves_no_trace(ledger):
    ledger.set_budget("d", 1)
    ledger.spend("d", 0.75, description="first")
    before = ledger.engine.fetch_script(f"SELECT * FROM {LEDGER_TABLE}")[1]
    with pytest.raises(PrivacyBudgetError, match=r"spending epsilon=0\.5.*remaining epsilon=0\.25.*"
                                                  "Nothing was spent"):
        ledger.spend("d", 0.5, description="second")
    assert ledger.engine.fetch_script(f"SELECT * FROM {LEDGER_TABLE}")[1] == before
    assert ledger.state("d").spent.epsilon == Decimal("0.75")


def test_work_that_fails_rolls_the_spend_back(ledger):
    ledger.set_budget("d", 1)

    def broken() -> None:
        raise RuntimeError("the aggregate failed")

    with pytest.raises(RuntimeError, match="the aggregate failed"):
        ledger.spend("d", 0.5, then=broken)
    assert ledger.state("d").spent.epsilon == 0 and ledger.entries("d") == []
    result, state = ledger.spend("d", 0.5, then=lambda: 42)
    assert result == 42 and state.spent.epsilon == Decimal("0.5")


@pytest.mark.parametrize("name", ["it's; DROP TABLE x; --", 'dou"ble', "naïve ∑ 数据", " "])
def test_dataset_names_are_values_not_sql(ledger, name):
    ledger.set_budget(name, 2)
    ledger.spend(name, 0.5, description="q'); DELETE FROM sqlanon_privacy_ledger; --")
    assert ledger.state(name).spent.epsilon == Decimal("0.5")
    assert ledger.entries(name)[0]["description"].startswith("q')")
    assert ledger.state("other") is None


def test_datasets_are_kept_apart(ledger):
    ledger.set_budget("a", 1)
    ledger.set_budget("b", 2)
    ledger.spend("a", 1)
    ledger.spend("b", 1.5)
    assert ledger.state("a").remaining.epsilon == 0 and ledger.state("b").remaining.epsilon == Decimal(
        "0.5")


def test_connections_of_one_process_in_conflict_never_overspend(tmp_path):
    # Threads with their own DuckDB connections to one file: concurrent updates of the budget row
    # conflict, and the loser retries against the committed totals.
    path = str(tmp_path / "ledger.duckdb")
    main = DuckDBEngine(path)
    PrivacyLedger(main).set_budget("d", 1)
    outcomes: list[str] = []
    barrier = threading.Barrier(4)

    def worker() -> None:
        engine = DuckDBEngine(path, connection=main.con.cursor())
        ledger = PrivacyLedger(engine)
        barrier.wait()
        for _ in range(8):
            try:
                ledger.spend("d", 0.05, then=lambda: time.sleep(0.001))
                outcomes.append("ok")
            except PrivacyBudgetError:
                outcomes.append("refused")

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    ledger = PrivacyLedger(main)
    assert outcomes.count("ok") == 20 and outcomes.count("refused") == 12
    assert sum(e["epsilon"] for e in ledger.entries("d")) == Decimal(1) == ledger.state("d").spent.epsilon
    main.close()


SPENDER = textwrap.dedent("""
    import sys, time
    from sqlanon.methods.dp.amounts import PrivacyBudgetError
    from sqlanon.methods.dp.budget import PrivacyLedger
    from sqlanon.methods.dp.queries import open_database
    target, start, tries, eps = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    keep_open = target.startswith(("host=", "postgresql://"))
    engine = open_database(target, timeout=120) if keep_open else None
    while time.time() < start:
        time.sleep(0.001)
    ok = refused = 0
    for _ in range(tries):
        e = engine or open_database(target, timeout=120)
        try:
            ledger = PrivacyLedger(e)
            ledger.set_budget("shared", 1)  # every process sets the same budget; the first one wins
            ledger.spend("shared", eps, description="concurrent")
            ok += 1
        except PrivacyBudgetError:
            refused += 1
        finally:
            if engine is None:
                e.close()
    print(ok, refused)
""")


def _spend_from_processes(target: str, processes: int, tries: int, eps: str) -> list[tuple[int, int]]:
    start = time.time() + 1.5  # every process is up and connected before the first spend
    procs = [subprocess.Popen([sys.executable, "-c", SPENDER, target, str(start), str(tries), eps],
                              cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(processes)]
    results = []
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
        ok, refused = map(int, out.split())
        results.append((ok, refused))
    return results


def _check_ledger(engine, budget: Decimal, results: list[tuple[int, int]], eps: Decimal) -> None:
    ledger = PrivacyLedger(engine)
    entries = ledger.entries("shared")
    spent = sum(e["epsilon"] for e in entries)
    assert spent <= budget
    assert spent == ledger.state("shared").spent.epsilon  # the totals equal the rows
    # Every success left exactly one row, every refusal none, and the budget was used up.
    assert len(entries) == sum(ok for ok, _ in results) == int(budget / eps)
    assert sum(r for _, r in results) == sum(ok + r for ok, r in results) - int(budget / eps)


def test_processes_spending_on_one_duckdb_file_never_overspend(tmp_path):
    path = str(tmp_path / "shared.duckdb")
    results = _spend_from_processes(path, processes=3, tries=6, eps="0.07")
    with DuckDBEngine(path) as engine:
        _check_ledger(engine, Decimal(1), results, Decimal("0.07"))


@pytest.mark.postgres
def test_processes_spending_on_postgres_never_overspend(pg, pg_dsn):  # noqa: F811
    # The ledger tables do not exist yet: the processes also race to create them.
    results = _spend_from_processes(pg_dsn, processes=4, tries=12, eps="0.03")
    _check_ledger(pg, Decimal(1), results, Decimal("0.03"))


@pytest.mark.postgres
def test_postgres_ledger_semantics(pg):  # noqa: F811
    ledger = PrivacyLedger(pg)
    ledger.set_budget("d", 1, 1e-6)
    with pytest.raises(PrivacyBudgetError, match="cannot be changed"):
        ledger.set_budget("d", 2, 1e-6)
    ledger.spend("d", 0.1, 5e-7, description="it's")
    ledger.spend("d", 0.9, 5e-7)
    with pytest.raises(PrivacyBudgetError, match="would exceed"):
        ledger.spend("d", 0.001)
    assert ledger.state("d").spent == ledger.state("d").total
    assert [e["description"] for e in ledger.entries("d")][0] == "it's"


def test_a_duckdb_file_held_by_another_process_is_waited_for_then_reported(tmp_path):
    from sqlanon.errors import EngineError
    from sqlanon.methods.dp.queries import open_database

    path = str(tmp_path / "held.duckdb")
    holder = subprocess.Popen([sys.executable, "-c", "import duckdb, sys, time\n"
                               f"c = duckdb.connect({path!r}); print('open', flush=True)\n"
                               "time.sleep(float(sys.argv[1]))", "1.5"],
                              stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "open"
    with pytest.raises(EngineError, match="stayed locked by another process for 0.3 s"):
        open_database(path, timeout=0.3)
    engine = open_database(path, timeout=60)  # the holder exits after 1.5 s
    engine.close()
    holder.wait(timeout=60)


def test_table_creation_races_on_postgres_are_retried():
    """Two processes running CREATE TABLE IF NOT EXISTS at once: PostgreSQL may report the row type
    as a duplicate object; the ledger tries again (and then finds the table)."""
    from psycopg import errors

    from sqlanon.errors import EngineError
    from sqlanon.methods.dp.budget import _retryable

    for error in (errors.DuplicateObject("type already exists"), errors.DuplicateTable("exists"),
                  errors.UniqueViolation("duplicate key value")):
        wrapped = EngineError("statement failed")
        wrapped.__cause__ = error
        assert _retryable(error) and _retryable(wrapped)
    assert not _retryable(errors.UndefinedTable("no such table"))


# -- neighbouring relations: add/remove (queries) and substitution (table releases) ------------------

def _exp_bounds(x: Fraction, terms: int = 80) -> tuple[Fraction, Fraction]:
    """Exact rational bounds on e^x for 0 <= x <= 5: the Taylor partial sum (below) and that sum plus
    a bound on the rest (above)."""
    term, total = Fraction(1), Fraction(1)
    for k in range(1, terms):
        term = term * x / k
        total += term
    rest = term * x / terms * 2  # the remaining terms fall by at least half each (x/k <= 1/2)
    return total, total + rest


def test_budget_relation_is_set_once(ledger):
    state = ledger.set_budget("people", 2, 1e-6, neighbours="substitution")
    assert state.neighbours == "substitution"
    assert ledger.set_budget("people", 2, 1e-6, neighbours="substitution") == state
    with pytest.raises(PrivacyBudgetError, match=r"already has the budget epsilon=2, delta=0\.000001 "
                                                  r"under substitution neighbours.*cannot be changed.*"
                                                  r"under add/remove neighbours"):
        ledger.set_budget("people", 2, 1e-6)  # the default relation is add/remove
    assert ledger.set_budget("visits", 1).neighbours == "add/remove"
    with pytest.raises(PrivacyBudgetError, match="must be 'add/remove' or 'substitution'"):
        ledger.set_budget("other", 1, neighbours="replace")
    assert ledger.state("other") is None


def test_add_remove_spend_on_a_substitution_budget_is_charged_by_group_privacy(ledger):
    # A substitution is a removal and an addition: (2ε, (1 + e^ε)·δ), rounded up to 18 digits.
    ledger.set_budget("d", 3, 1e-5, neighbours="substitution")
    _, state = ledger.spend("d", 0.5, 1e-6, description="count")
    assert state.neighbours == "substitution"
    assert state.charged.epsilon == Decimal(1)
    low, high = _exp_bounds(Fraction(1, 2))
    exact_low, exact_high = (1 + low) * Fraction(1, 10**6), (1 + high) * Fraction(1, 10**6)
    charged = Fraction(state.charged.delta)
    assert charged >= exact_high and charged - exact_low < Fraction(1, 10**18)  # rounded up, 1 quantum
    assert state.charged.delta == Decimal("0.000002648721270701")
    assert state.spent == state.charged
    [entry] = ledger.entries("d")
    assert entry["neighbours"] == "add/remove"
    assert (entry["epsilon"], entry["delta"]) == (Decimal("0.5"), Decimal("0.000001"))
    assert (entry["epsilon_charged"], entry["delta_charged"]) == (state.charged.epsilon,
                                                                   state.charged.delta)
    _, state = ledger.spend("d", 0.25)  # δ = 0 stays 0
    assert state.charged.epsilon == Decimal("0.5") and state.charged.delta == 0
    assert state.spent.epsilon == Decimal("1.5")


@settings(max_examples=40)
@given(st.fractions(min_value=Fraction(1, 1000), max_value=5, max_denominator=10**6),
       st.fractions(min_value=Fraction(1, 10**12), max_value=Fraction(1, 1000), max_denominator=10**12))
def test_conversion_is_rounded_up_within_one_quantum(eps, delta):
    from sqlanon.methods.dp.amounts import Budget, amount, charge

    cost = Budget(amount(eps, "e"), amount(delta, "d"))
    out = charge(cost, "add/remove", "substitution")
    assert out.epsilon == 2 * cost.epsilon
    low, high = _exp_bounds(Fraction(cost.epsilon))
    assert Fraction(out.delta) >= (1 + high) * Fraction(cost.delta)
    assert Fraction(out.delta) - (1 + low) * Fraction(cost.delta) < Fraction(1, 10**18)
    assert charge(cost, "substitution", "substitution") == cost == charge(cost, "add/remove",
                                                                           "add/remove")


def test_substitution_spend_on_an_add_remove_budget_is_refused(ledger):
    ledger.set_budget("d", 5)
    with pytest.raises(PrivacyBudgetError, match=r"only under substitution of one record \(it reveals "
                                                  r"the row count.*kept under add/remove neighbours.*"
                                                  r"--budget-neighbours substitution.*Nothing was spent"):
        ledger.spend("d", 0.5, neighbours="substitution", then=lambda: pytest.fail("ran"))
    with pytest.raises(PrivacyBudgetError, match="reveals the row count"):
        ledger.check("d", 0.5, neighbours="substitution")
    assert ledger.state("d").spent.epsilon == 0 and ledger.entries("d") == []


def test_substitution_spend_on_a_substitution_budget_is_charged_as_is(ledger):
    ledger.set_budget("d", 1, 1e-6, neighbours="substitution")
    _, state = ledger.spend("d", 0.3, 1e-7, neighbours="substitution")
    assert state.charged.epsilon == Decimal("0.3") and state.charged.delta == Decimal("1e-7")
    assert ledger.entries("d")[0]["neighbours"] == "substitution"


def test_a_converted_spend_that_does_not_fit_is_refused_and_spends_nothing(ledger):
    ledger.set_budget("d", 1, 1e-5, neighbours="substitution")
    ledger.spend("d", 0.2)  # charged 0.4
    with pytest.raises(PrivacyBudgetError, match=r"spending epsilon=0\.4, delta=0 \(under add/remove "
                                                  r"neighbours, charged as epsilon=0\.8, delta=0 under "
                                                  r"the budget's substitution neighbours\) would exceed.*"
                                                  r"remaining epsilon=0\.6"):
        ledger.spend("d", 0.4)
    with pytest.raises(PrivacyBudgetError, match="that delta is >= 1: no budget can hold it"):
        ledger.spend("d", 30, 1e-6)  # (1 + e^30)·1e-6 > 1
    with pytest.raises(PrivacyBudgetError, match="no budget can hold it"):
        ledger.spend("d", 2000, 1e-18)
    assert ledger.state("d").spent.epsilon == Decimal("0.4") and len(ledger.entries("d")) == 1


def test_work_consuming_its_input_is_not_run_twice(ledger):
    # A conflict after `then` started is retried from the start, unless the work runs once only.
    class TransactionException(Exception):
        """Named like DuckDB's conflict error, which the ledger retries."""

    ledger.set_budget("d", 1)
    calls = []

    def conflict_once():
        calls.append(1)
        if len(calls) == 1:
            raise TransactionException("Conflict on tuple")
        return "written"

    assert ledger.spend("d", 0.1, then=conflict_once)[0] == "written" and len(calls) == 2
    calls.clear()
    with pytest.raises(TransactionException):
        ledger.spend("d", 0.1, then=conflict_once, once=True)
    assert len(calls) == 1 and ledger.state("d").spent.epsilon == Decimal("0.1")


OLD_TABLES = [
    # the ledger tables as the first version created them (no relation, no charged amounts)
    "CREATE TABLE sqlanon_privacy_budget (dataset VARCHAR PRIMARY KEY, epsilon_total DECIMAL(38, 18) "
    "NOT NULL, delta_total DECIMAL(38, 18) NOT NULL, epsilon_spent DECIMAL(38, 18) NOT NULL, "
    "delta_spent DECIMAL(38, 18) NOT NULL, created_at TIMESTAMP NOT NULL)",
    "CREATE TABLE sqlanon_privacy_ledger (id VARCHAR PRIMARY KEY, dataset VARCHAR NOT NULL, "
    "epsilon DECIMAL(38, 18) NOT NULL, delta DECIMAL(38, 18) NOT NULL, description VARCHAR NOT NULL, "
    "spent_at TIMESTAMP NOT NULL)",
    "INSERT INTO sqlanon_privacy_budget VALUES ('old', 2, 0.000001, 0.75, 0.0000005, "
    "'2024-01-01 00:00:00')",
    "INSERT INTO sqlanon_privacy_ledger VALUES ('a', 'old', 0.5, 0.0000005, 'count', "
    "'2024-01-01 00:00:01'), ('b', 'old', 0.25, 0, 'sum', '2024-01-01 00:00:02')",
]


def _check_migrated(engine) -> None:
    ledger = PrivacyLedger(engine)
    state = ledger.state("old")
    assert state.neighbours == "add/remove"
    assert state.total.epsilon == 2 and state.spent.epsilon == Decimal("0.75")
    entries = ledger.entries("old")
    assert [e["neighbours"] for e in entries] == ["add/remove"] * 2
    assert [e["epsilon_charged"] for e in entries] == [Decimal("0.5"), Decimal("0.25")]
    assert [e["delta_charged"] for e in entries] == [Decimal("0.0000005"), 0]
    assert ledger.set_budget("old", 2, 1e-6) == state  # the same budget, add/remove: accepted
    with pytest.raises(PrivacyBudgetError, match="under add/remove neighbours; a budget is set once"):
        ledger.set_budget("old", 2, 1e-6, neighbours="substitution")
    with pytest.raises(PrivacyBudgetError, match="reveals the row count"):
        ledger.spend("old", 0.1, neighbours="substitution")
    _, after = ledger.spend("old", 0.25, description="new")
    assert after.spent.epsilon == 1 and after.charged.epsilon == Decimal("0.25")
    ledger.set_budget("new", 1, neighbours="substitution")
    ledger.spend("new", 0.5, neighbours="substitution")
    # a second ledger on the migrated tables finds nothing to do
    again = PrivacyLedger(engine)
    assert again.state("old").spent.epsilon == 1 and len(again.entries("old")) == 3
    assert sum(e["epsilon_charged"] for e in again.entries("old")) == again.state("old").spent.epsilon


def test_ledger_tables_of_the_first_version_are_migrated(tmp_path):
    path = str(tmp_path / "old.duckdb")
    with DuckDBEngine(path) as engine:
        for statement in OLD_TABLES:
            engine.execute_script(statement)
    with DuckDBEngine(path) as engine:
        _check_migrated(engine)
        columns = [c for c, _ in engine.columns("sqlanon_privacy_ledger")]
        assert columns[-5:] == ["neighbours", "epsilon_charged", "delta_charged", "release_key",
                                "privacy_unit"]


@pytest.mark.postgres
def test_postgres_ledger_migration_and_conversion(pg):  # noqa: F811
    for statement in OLD_TABLES:
        pg.execute_script(statement.replace("VARCHAR PRIMARY KEY", "TEXT PRIMARY KEY"))
    _check_migrated(pg)
    ledger = PrivacyLedger(pg)
    ledger.set_budget("shared", 3, 1e-5, neighbours="substitution")
    _, state = ledger.spend("shared", 0.5, 1e-6)
    assert state.charged == ledger.state("shared").spent
    assert state.charged.epsilon == 1 and state.charged.delta == Decimal("0.000002648721270701")
    with pytest.raises(PrivacyBudgetError, match="charged as epsilon=4"):
        ledger.spend("shared", 2)
    assert len(ledger.entries("shared")) == 1


def test_budget_command_reads_a_postgres_ledger(pg, pg_dsn, capsys):  # noqa: F811
    from sqlanon.cli.main import main

    ledger = PrivacyLedger(pg)
    ledger.set_budget("ward 'é'", 2, 0, neighbours="substitution")
    ledger.spend("ward 'é'", 0.5, description="a count")
    assert main(["budget", "--database", pg_dsn, "--entries"]) == 0
    (ward,) = json.loads(capsys.readouterr().out)["datasets"]
    assert ward["dataset"] == "ward 'é'" and ward["remaining"]["epsilon"] == 1.0
    assert [(e["neighbours"], e["charged"]["epsilon"], e["description"]) for e in ward["entries"]] \
        == [("add/remove", 1.0, "a count")]
