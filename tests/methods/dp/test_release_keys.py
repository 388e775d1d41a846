"""Release keys: a spend naming a key is charged at most once per key and dataset (also between
concurrent connections), and the spec keys that name a release's key and the database its ledger
lives in (`transformation.release_key`, `transformation.ledger`)."""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Callable
from contextlib import AbstractContextManager as ContextManager
from decimal import Decimal
from typing import Any

import duckdb
import pytest

from sqlanon import api
from sqlanon.cli.main import main
from sqlanon.engines.duckdb import DuckDBEngine
from sqlanon.errors import SpecError
from sqlanon.methods.dp.amounts import PrivacyBudgetError, ReleaseAlreadyCharged
from sqlanon.methods.dp.budget import PrivacyLedger
from sqlanon.methods.dp.ledger_tables import BUDGET_TABLE
from sqlanon.methods.dp.release_budget import ReleaseBudget
from sqlanon.spec.load import spec_from_dict
from tests.postgres.conftest import pg, pg_dsn  # noqa: F401  (fixtures; pg_server is the suite's)

pytestmark = pytest.mark.filterwarnings("ignore::sqlanon.methods.rng.ReproducibleNoiseWarning")

LAPLACE = {"method": "noise", "mechanism": "laplace", "attributes": ["age"], "epsilon": 0.5,
           "sensitivity": {"age": 1}, "bounds": {"age": [0, 120]}, "linkage": False}


def spent(engine, dataset: str = "people") -> tuple[Decimal, list]:
    ledger = PrivacyLedger(engine)
    state = ledger.state(dataset)
    assert state is not None
    return state.spent.epsilon, [e["epsilon_charged"] for e in ledger.entries(dataset)]


def test_a_key_is_charged_once_and_refused_after_without_a_charge():
    with DuckDBEngine() as engine:
        ledger = PrivacyLedger(engine)
        ledger.set_budget("people", 1)
        _, state = ledger.spend("people", 0.25, release_key="2026-11-26")
        assert state.spend_id is not None and state.spend_id.startswith("release-")
        with pytest.raises(ReleaseAlreadyCharged, match="'2026-11-26' of dataset 'people' was already "
                                                        "charged"):
            ledger.spend("people", 0.25, release_key="2026-11-26")
        ran = []
        with pytest.raises(ReleaseAlreadyCharged):  # the work paid for once is not run again
            ledger.spend("people", 0.25, release_key="2026-11-26", then=lambda: ran.append(1))
        assert ran == [] and spent(engine) == (Decimal("0.25"), [Decimal("0.25")])
        ledger.spend("people", 0.25, release_key="2026-11-27")  # a new key is a new release
        ledger.set_budget("others", 1)
        ledger.spend("others", 0.25, release_key="2026-11-26")  # keys are per dataset
        assert spent(engine)[0] == Decimal("0.5") and spent(engine, "others")[0] == Decimal("0.25")
        assert [e["release_key"] for e in ledger.entries("people")] == ["2026-11-26", "2026-11-27"]
        assert [e["release_key"] for e in ledger.entries("others")] == ["2026-11-26"]


def test_a_charged_key_is_refused_as_charged_even_when_the_budget_is_spent():
    with DuckDBEngine() as engine:
        ledger = PrivacyLedger(engine)
        ledger.set_budget("people", 1, neighbours="substitution")
        ledger.spend("people", 1, neighbours="substitution", release_key="run")
        with pytest.raises(ReleaseAlreadyCharged):
            ReleaseBudget(engine, "people", 1, release_key="run").check()
        with pytest.raises(PrivacyBudgetError, match="would exceed"):
            ReleaseBudget(engine, "people", 1, release_key="next").check()


def test_a_refunded_key_can_be_charged_again():
    with DuckDBEngine() as engine:
        ReleaseBudget(engine, "people", 0.5, budget_epsilon=1).check()

        def failing() -> None:
            raise ZeroDivisionError

        with pytest.raises(ZeroDivisionError):
            ReleaseBudget(engine, "people", 0.5, release_key="run").charged_ahead(
                failing, discard=lambda: None)
        assert spent(engine) == (Decimal("0"), [])
        ReleaseBudget(engine, "people", 0.5, release_key="run").write(lambda: None)
        assert spent(engine) == (Decimal("0.5"), [Decimal("0.5")])


def spend_at_once(open_engine: Callable[[], ContextManager[Any]], workers: int = 4) -> list[str]:
    """Each of ``workers`` threads, on an engine of its own, spends 1 under release key ``run`` at
    the same moment; what each got ("charged" or "refused"), sorted."""
    outcomes: list[str] = []
    start = threading.Barrier(workers)

    def spend() -> None:
        with open_engine() as engine:
            start.wait()
            try:
                PrivacyLedger(engine).spend("people", 1, release_key="run")
                outcomes.append("charged")
            except ReleaseAlreadyCharged:
                outcomes.append("refused")

    threads = [threading.Thread(target=spend) for _ in range(workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return sorted(outcomes)


def test_concurrent_spends_of_one_key_charge_it_once(tmp_path):
    con = duckdb.connect(str(tmp_path / "ledger.duckdb"))
    PrivacyLedger(DuckDBEngine(connection=con.cursor())).set_budget("people", 10)
    outcomes = spend_at_once(lambda: contextlib.nullcontext(DuckDBEngine(connection=con.cursor())))
    assert outcomes == ["charged", "refused", "refused", "refused"]
    assert spent(DuckDBEngine(connection=con.cursor())) == (Decimal("1"), [Decimal("1")])
    con.close()


@pytest.mark.postgres
def test_concurrent_spends_of_one_key_on_postgres_charge_it_once(pg, pg_dsn):  # noqa: F811
    from sqlanon.engines.postgres import PostgresEngine

    PrivacyLedger(pg).set_budget("people", 10)
    assert spend_at_once(lambda: PostgresEngine(pg_dsn)) == ["charged", "refused", "refused", "refused"]
    assert spent(pg) == (Decimal("1"), [Decimal("1")])


def people(path) -> None:
    with duckdb.connect(str(path)) as con:
        con.execute("CREATE TABLE people AS SELECT i AS id, 18 + i % 70 AS age FROM range(200) t(i)")


def release_spec(database, **keys) -> dict:
    return {"source": {"table": "people", "database": str(database)},
            "attributes": {"age": {"role": "sensitive"}},
            "transformation": {**LAPLACE, "dataset": "people", "budget_epsilon": 2, **keys},
            "output": {"mode": "table", "name": "released", "replace": True}}


def test_a_spec_release_key_charges_a_release_once(tmp_path, capsys):
    people(tmp_path / "w.duckdb")
    spec = release_spec(tmp_path / "w.duckdb", release_key="2026-11-26")
    api.apply(spec_from_dict(spec))
    with DuckDBEngine(str(tmp_path / "w.duckdb")) as engine:
        first = engine.fetch_script("SELECT * FROM released ORDER BY id")[1]
    with pytest.raises(ReleaseAlreadyCharged):
        api.apply(spec_from_dict(spec))
    with DuckDBEngine(str(tmp_path / "w.duckdb")) as engine:
        assert engine.fetch_script("SELECT * FROM released ORDER BY id")[1] == first
        assert spent(engine) == (Decimal("0.5"), [Decimal("0.5")])
    capsys.readouterr()
    assert main(["budget", "--database", str(tmp_path / "w.duckdb"), "--entries"]) == 0
    shown = json.loads(capsys.readouterr().out)["datasets"]
    assert [e["release_key"] for e in shown[0]["entries"]] == ["2026-11-26"]


@pytest.mark.parametrize("mechanism", ["laplace", "dp_microaggregation"])
def test_a_spec_ledger_keeps_the_ledger_in_a_database_of_its_own(tmp_path, mechanism):
    people(tmp_path / "w.duckdb")
    spec = release_spec(tmp_path / "w.duckdb", ledger=str(tmp_path / "books.duckdb"))
    if mechanism == "dp_microaggregation":
        spec["transformation"] = {"method": "noise", "mechanism": mechanism, "attributes": ["age"],
                                  "k": 5, "epsilon": 0.5, "bounds": {"age": [0, 120]},
                                  "linkage": False, "dataset": "people", "budget_epsilon": 2,
                                  "ledger": str(tmp_path / "books.duckdb")}
        spec["output"]["replace"] = False
    report = api.apply(spec_from_dict(spec)).as_dict()
    assert report["guarantee"]["ledger"]["spent"]["epsilon"] == 0.5
    with DuckDBEngine(str(tmp_path / "w.duckdb")) as engine:
        assert engine.row_count("released") == 200 and not engine.relation_exists(BUDGET_TABLE)
    with DuckDBEngine(str(tmp_path / "books.duckdb")) as books:
        assert spent(books) == (Decimal("0.5"), [Decimal("0.5")])


@pytest.mark.parametrize(("keys", "path", "message"), [
    ({"dataset": None, "ledger": "books.duckdb"}, "transformation.ledger",
     "needs transformation.dataset"),
    ({"dataset": None, "release_key": "run"}, "transformation.release_key",
     "needs transformation.dataset"),
    ({"ledger": 5}, "transformation.ledger", "must be non-empty text, got 5"),
    ({"ledger": "books.txt"}, "transformation.ledger",
     "a DuckDB file (*.duckdb) or a postgresql:// URL, got 'books.txt'"),
    ({"release_key": " "}, "transformation.release_key", "must be non-empty text"),
    ({"release_key": ["a"]}, "transformation.release_key", "must be non-empty text"),
])
def test_bad_ledger_keys_are_refused_naming_the_key(tmp_path, keys, path, message):
    people(tmp_path / "w.duckdb")
    spec = release_spec(tmp_path / "w.duckdb", **keys)
    spec["transformation"] = {k: v for k, v in spec["transformation"].items() if v is not None}
    if keys.get("dataset", "") is None:
        spec["transformation"].pop("budget_epsilon")
    with pytest.raises(SpecError) as error:
        api.apply(spec_from_dict(spec))
    assert error.value.path == path and message in str(error.value)
    assert not (tmp_path / "books.duckdb").exists()


def test_the_command_line_says_which_key_is_wrong(tmp_path, capsys):
    people(tmp_path / "w.duckdb")
    (tmp_path / "spec.yml").write_text(
        f"source: {{table: people, database: {tmp_path / 'w.duckdb'}}}\n"
        "attributes: {age: {role: sensitive}}\n"
        "transformation: {method: noise, mechanism: laplace, attributes: [age], epsilon: 0.5,\n"
        "  sensitivity: {age: 1}, bounds: {age: [0, 120]}, dataset: people, ledger: books.csv}\n"
        "output: {name: released}\n")
    assert main(["apply", str(tmp_path / "spec.yml")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "transformation.ledger" in err and "books.csv" in err
